"""Chat bridges in the REST API: comments, deliveries, chat links and your chat identities.

- ``POST /api/discussions/{id}/comments`` — a person speaks (owner, staff, participant members).
- ``GET /api/discussions/{id}/deliveries`` — what was sent to chats and people (owner, staff).
- ``POST/GET/DELETE /api/discussions/{id}/links`` — a one-time code that links a chat to the
  room (owner, staff); the linked chats (anyone who may view); unlink (owner, staff).
- ``POST/GET /api/me/chat-identities`` (+ ``DELETE /{id}``) — a code to send the bot in a
  direct chat (``/start CODE``), your linked chat accounts, unlinking one.

The deliveries, the linked chats and your chat accounts are paged like every list (``?page=``,
``?pageSize=``, ``meta``).
"""
import re

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.views import APIView

from facilitation.actions.comments import do_post_comment, require_commenter
from facilitation.api import schemas
from facilitation.api.envelope import ok
from facilitation.api.pagination import MAX_PAGE_SIZE, paginate
from facilitation.api.parsing import json_body
from facilitation.api.permissions import MAX_ID, controllable_room, viewable_room
from rooms import limits
from rooms.actions.chat import (
    do_create_identity_code, do_create_room_code, do_unlink_chat, do_unlink_identity, typed_command,
)
from rooms.chat_shapes import delivery_shape, identity_shape, link_shape
from rooms.errors import NotFound, ValidationFailed
from rooms.models import ChatIdentity, ChatLink, Delivery
from rooms.payloads import turn_payload
from rooms.queries import telegram_link
from rooms.serializers import DeliveryOut, IdentityOut, LinkOut, Out, Timestamp

TAG_COMMENTS = ["comments"]
TAG_BRIDGES = ["chat bridges"]
# Pages: the deliveries are a log (read as it was before the list was paged: 200 newest, ``limit`` up to
# 1000); the links of a room fit on one page of 100.
LOG_PAGE_SIZE, LOG_MAX_PAGE_SIZE = 200, 1000
LINK_PAGE_SIZE = MAX_PAGE_SIZE
IDENTITY_PAGE_SIZE = MAX_PAGE_SIZE  # one's own chat accounts: one page of 100


class CommentIn(serializers.Serializer):
    content = serializers.CharField(max_length=limits.COMMENT, help_text="What you say; markers such as VOTE: READY count.")


# A one-time code; the command and link that use it come in the context.
class CodeOut(Out):
    code = serializers.CharField()
    expires_at = Timestamp()
    command = serializers.CharField(help_text="What to send the bot on Telegram.")
    teams_command = serializers.CharField(help_text="The same on Teams: in a group the bot is @mentioned by its name "
                                                    "there; in a personal chat the words alone.")
    telegram_link = serializers.CharField(allow_null=True, help_text="A t.me link that does the same, when the bot's name is known.")

    @staticmethod
    def get_command(code, context) -> str:
        return context["command"]

    @staticmethod
    def get_teams_command(code, context) -> str:
        return context["teams_command"]

    @staticmethod
    def get_telegram_link(code, context) -> str | None:
        return context["telegram_link"]


class LinkDeleteIn(serializers.Serializer):
    link_id = serializers.IntegerField(required=False)


LinkRemovedEnvelope = schemas.envelope("LinkRemovedEnvelope", LinkOut())


def _code_shape(code, words: str, deep_link: str, direct: bool) -> dict:
    """A code with the command that uses it (``words`` with the code), as typed on each platform."""
    words = f"{words} {code.code}"
    return CodeOut.render(code, command=typed_command("telegram", words, direct=direct),
                          teams_command=typed_command("teams", words, direct=direct),
                          telegram_link=telegram_link(deep_link, code.code))


class CommentsView(APIView):
    @extend_schema(tags=TAG_COMMENTS, operation_id="discussions_comments_create", summary="Speak in a running or paused discussion",
                   description="Owner, staff or a member with participant access. The comment is a turn with "
                               "`speaker.kind = \"human\"`, relayed to linked chats.",
                   request=CommentIn,
                   responses=schemas.responses({201: schemas.envelope("CommentEnvelope", schemas.TurnOut())}, 400, 403, 409, 415, 429))
    def post(self, request, id: int):
        require_commenter(request.user, viewable_room(request.user, id))  # a viewer's 403, before the body is read
        body = json_body(request)
        obs = do_post_comment(id, request.user, body.get("content"))
        return ok(turn_payload(obs, role="participant"), status=201)


class DeliveriesView(APIView):
    @extend_schema(tags=TAG_BRIDGES, operation_id="discussions_deliveries_list", summary="Messages sent to chats and people",
                   description="Every relayed turn, report, reminder and status message, with its outcome (owner and "
                               f"staff), newest first, {LOG_PAGE_SIZE} to a page unless `pageSize` says otherwise.",
                   parameters=schemas.page_params(LOG_PAGE_SIZE, LOG_MAX_PAGE_SIZE, alias="limit"),
                   responses=schemas.responses({200: schemas.envelope("DeliveryListEnvelope", DeliveryOut(many=True),
                                                                      schemas.PageMetaOut())}, 400, 403))
    def get(self, request, id: int):
        room = controllable_room(request.user, id)
        rows, meta = paginate(request, Delivery.objects.filter(room=room).select_related("source").order_by("-id"),
                              default_size=LOG_PAGE_SIZE, max_size=LOG_MAX_PAGE_SIZE, size_alias="limit")
        return ok([delivery_shape(d) for d in rows], meta=meta)


WHOLE_NUMBER = re.compile(r"-?[0-9]{1,20}")


def _link_of(room, link_id) -> ChatLink:
    if link_id is None or link_id == "":
        raise ValidationFailed("linkId is required.", {"linkId": ["Name the link to remove."]})
    if isinstance(link_id, str) and WHOLE_NUMBER.fullmatch(link_id):
        link_id = int(link_id)
    if isinstance(link_id, bool) or not isinstance(link_id, int):
        raise ValidationFailed("linkId must be a whole number.", {"linkId": ["The link's id, a whole number."]})
    link = ChatLink.objects.filter(room=room, pk=link_id).select_related("chat", "linked_by").first() if 0 < link_id <= MAX_ID else None
    if link is None:
        raise NotFound("No such link.")
    return link


class LinksView(APIView):
    optional_body_methods = ("delete",)  # DELETE may name the link in a JSON body (the schema lists its 413)

    @extend_schema(tags=TAG_BRIDGES, operation_id="discussions_links_list", summary="Chats linked to this discussion",
                   description=f"Oldest link first, {LINK_PAGE_SIZE} to a page unless `pageSize` says otherwise.",
                   parameters=schemas.page_params(LINK_PAGE_SIZE),
                   responses=schemas.responses({200: schemas.envelope("LinkListEnvelope", LinkOut(many=True),
                                                                      schemas.PageMetaOut())}, 400))
    def get(self, request, id: int):
        room = viewable_room(request.user, id)
        rows, meta = paginate(request, ChatLink.objects.filter(room=room, active=True)
                              .select_related("chat", "linked_by").order_by("id"), default_size=LINK_PAGE_SIZE)
        return ok([link_shape(link) for link in rows], meta=meta)

    @extend_schema(tags=TAG_BRIDGES, operation_id="discussions_links_create", summary="A code that links a chat to this discussion",
                   description="Send `/facilitator start CODE` in the group (Telegram: or open the `?startgroup=` link). "
                               "The code works once, for 24 hours. Owner and staff.",
                   request=None,
                   responses=schemas.responses({201: schemas.envelope("LinkCodeEnvelope", CodeOut())}, 403, 409, 429))
    def post(self, request, id: int):
        room = controllable_room(request.user, id)
        code = do_create_room_code(room, request.user)
        return ok(_code_shape(code, "facilitator start", "startgroup", direct=False), status=201)

    @extend_schema(tags=TAG_BRIDGES, operation_id="discussions_links_remove", summary="Unlink a chat",
                   description="Name the link in the body (`{\"linkId\"}`) or as `?linkId=`. Owner and staff.",
                   request=LinkDeleteIn, parameters=[OpenApiParameter("linkId", int, description="The link to remove.")],
                   responses=schemas.responses({200: LinkRemovedEnvelope}, 400, 403, 415))
    def delete(self, request, id: int):
        room = controllable_room(request.user, id)
        link_id = request.query_params.get("linkId")
        if link_id is None and request.data:
            link_id = json_body(request).get("link_id")
        link = do_unlink_chat(_link_of(room, link_id), user=request.user, reason="unlinked in Convene")
        return ok(link_shape(link))


class LinkView(APIView):
    @extend_schema(tags=TAG_BRIDGES, operation_id="discussions_link_remove", summary="Unlink this chat (owner and staff)",
                   responses=schemas.responses({200: LinkRemovedEnvelope}, 403))
    def delete(self, request, id: int, link_id: int):
        room = controllable_room(request.user, id)
        link = do_unlink_chat(_link_of(room, link_id), user=request.user, reason="unlinked in Convene")
        return ok(link_shape(link))


class ChatIdentitiesView(APIView):
    @extend_schema(tags=TAG_BRIDGES, operation_id="me_chat_identities_list", summary="Your linked chat accounts",
                   description=f"By platform, then oldest first, {IDENTITY_PAGE_SIZE} to a page unless `pageSize` "
                               "says otherwise.",
                   parameters=schemas.page_params(IDENTITY_PAGE_SIZE),
                   responses=schemas.responses({200: schemas.envelope("ChatIdentityListEnvelope", IdentityOut(many=True),
                                                                      schemas.PageMetaOut())}, 400))
    def get(self, request):
        rows, meta = paginate(request, ChatIdentity.objects.filter(user=request.user).order_by("platform", "id"),
                              default_size=IDENTITY_PAGE_SIZE)
        return ok([identity_shape(i) for i in rows], meta=meta)

    @extend_schema(tags=TAG_BRIDGES, operation_id="me_chat_identities_create", summary="A code to link your chat account",
                   description="Send `/start CODE` to the bot in a direct chat (Telegram: or open the `?start=` link; "
                               "Teams: write `start CODE` to the bot). The code works once, for 30 minutes.",
                   request=None,
                   responses=schemas.responses({201: schemas.envelope("IdentityCodeEnvelope", CodeOut())}, 403, 429))
    def post(self, request):
        code = do_create_identity_code(request.user)
        return ok(_code_shape(code, "start", "start", direct=True), status=201)


class ChatIdentityView(APIView):
    @extend_schema(tags=TAG_BRIDGES, operation_id="me_chat_identity_remove", summary="Unlink one of your chat accounts",
                   responses=schemas.responses({200: schemas.envelope("ChatIdentityRemovedEnvelope", schemas.DeletedOut())}, 403))
    def delete(self, request, id: int):
        identity = ChatIdentity.objects.filter(user=request.user, pk=id).first() if id <= MAX_ID else None
        if identity is None:
            raise NotFound("No such chat account of yours.")
        do_unlink_identity(identity, request.user)
        return ok({"id": id, "deleted": True})
