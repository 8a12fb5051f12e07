"""GET/POST /api/me/tokens and DELETE /api/me/tokens/{id}: your API tokens.

The list is paged like every list (``?page=``, ``?pageSize=`` up to 100, default 100).

The key is in the answer to POST only; afterwards a token is known by its prefix and name.
Revoking a token disconnects the sockets that authenticated with it.
"""
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.views import APIView

from facilitation.actions.inputs import Text, WholeNumber
from facilitation.api import schemas
from facilitation.api.envelope import ok
from facilitation.api.pagination import MAX_PAGE_SIZE, paginate
from facilitation.api.parsing import json_body
from rooms.actions.tokens import do_create_token, do_revoke_token
from rooms.errors import Forbidden, NotFound, ValidationFailed
from rooms.models import ApiToken
from rooms.serializers import Out, Timestamp
from rooms.tokens import live_tokens

TAG = ["tokens"]
MAX_ID = 2**63 - 1
PAGE_SIZE = MAX_PAGE_SIZE  # the whole list in one page, as before it was paged, for nearly everyone


class TokenOut(Out):
    id = serializers.IntegerField()
    name = serializers.CharField(allow_blank=True)
    prefix = serializers.CharField(help_text="The key's first characters.")
    created_at = Timestamp()
    expires_at = Timestamp()
    last_used_at = Timestamp(allow_null=True)


class NewTokenOut(TokenOut):
    key = serializers.CharField(help_text="The key, shown this once: send it as `Authorization: Token <key>`.")

    @staticmethod
    def get_key(token: ApiToken, context) -> str:
        return context["key"]


# Documents the body; ``do_create_token`` checks it (with the same messages as the field classes).
class TokenIn(serializers.Serializer):
    name = Text(max_length=100, required=False, allow_blank=True)
    expires_in_days = WholeNumber(min_value=1, max_value=365, required=False, help_text="Default 90.")


class TokenListView(APIView):
    """Your live tokens (newest first); create one."""

    @extend_schema(tags=TAG, operation_id="tokens_list", summary="Your API tokens",
                   description=f"Newest first, {PAGE_SIZE} to a page unless `pageSize` says otherwise.",
                   parameters=schemas.page_params(PAGE_SIZE),
                   responses=schemas.responses({200: schemas.envelope("TokenListEnvelope", TokenOut(many=True),
                                                                      schemas.PageMetaOut())}, 400))
    def get(self, request):
        rows, meta = paginate(request, live_tokens().filter(user=request.user).order_by("-created_at", "-id"),
                              default_size=PAGE_SIZE)
        return ok([TokenOut.render(t) for t in rows], meta=meta)

    @extend_schema(tags=TAG, operation_id="tokens_create", summary="Create an API token (its key is shown once)",
                   request=TokenIn,
                   responses=schemas.responses({201: schemas.envelope("NewTokenEnvelope", NewTokenOut())}, 400, 403, 415, 429))
    def post(self, request):
        if isinstance(request.auth, ApiToken):
            # A token must not outlive its own revocation by minting successors.
            raise Forbidden("Create tokens from a signed-in session (the API tokens page), not with a token.")
        body = json_body(request)
        unknown = sorted(k for k in body if k not in ("name", "expires_in_days"))
        if unknown:
            raise ValidationFailed("Unknown fields.", {k: ["Unknown field."] for k in unknown})
        token, key = do_create_token(request.user, name=body.get("name", ""), days=body.get("expires_in_days"))
        return ok(NewTokenOut.render(token, key=key), status=201)


class TokenDetailView(APIView):
    """One of your tokens: revoke it."""

    @extend_schema(tags=TAG, operation_id="tokens_destroy", summary="Revoke one of your API tokens",
                   responses=schemas.responses({200: schemas.envelope("TokenDeletedEnvelope", schemas.DeletedOut())}))
    def delete(self, request, id: int):
        token = ApiToken.objects.filter(pk=id, user=request.user).first() if id <= MAX_ID else None
        if token is None:
            raise NotFound("No such token.")
        do_revoke_token(token, actor=request.user)
        return ok({"id": id, "deleted": True})
