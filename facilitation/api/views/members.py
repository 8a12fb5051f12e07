"""GET/POST/DELETE /api/discussions/{id}/members and DELETE .../members/{username}: sharing (owner or staff).

The list is paged like every list (``?page=``, ``?pageSize=`` up to 100, default 100)."""
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.views import APIView

from facilitation.api import inputs, schemas
from facilitation.api.envelope import ok
from facilitation.api.pagination import MAX_PAGE_SIZE, paginate
from facilitation.api.parsing import json_body, safe_text
from facilitation.api.permissions import controllable_room
from rooms.actions.rooms import do_share_room, do_unshare_room
from rooms.errors import NotFound, ValidationFailed
from rooms.models import RoomMember

TAG = ["members"]
PAGE_SIZE = MAX_PAGE_SIZE  # every member on one page, as before the list was paged, for nearly every room
MemberEnvelope = schemas.envelope("MemberEnvelope", schemas.MemberOut())
RemovedEnvelope = schemas.envelope("MemberRemovedEnvelope", schemas.DeletedOut())


def _unshare(room, username, actor) -> dict:
    if not isinstance(username, str) or not username:
        raise ValidationFailed("username is required.", {"username": ["Name the user to remove."]})
    safe_text(username, "username")
    if not do_unshare_room(room, username=username, actor=actor):
        raise NotFound(f"{username!r} is not a member of this discussion.")
    return {"id": username, "deleted": True}


class MembersView(APIView):
    """The people a discussion is shared with (owner or staff only)."""

    optional_body_methods = ("delete",)  # DELETE may name the member in a JSON body (the schema lists its 413)

    @extend_schema(tags=TAG, operation_id="discussions_members_list", summary="People the discussion is shared with",
                   description=f"In the order they were added, {PAGE_SIZE} to a page unless `pageSize` says otherwise.",
                   parameters=schemas.page_params(PAGE_SIZE),
                   responses=schemas.responses({200: schemas.envelope("MemberListEnvelope", schemas.MemberOut(many=True),
                                                                      schemas.PageMetaOut())}, 400, 403))
    def get(self, request, id: int):
        room = controllable_room(request.user, id)
        rows, meta = paginate(request, RoomMember.objects.filter(room=room).select_related("user").order_by("added_at", "id"),
                              default_size=PAGE_SIZE)
        return ok([schemas.MemberOut.render(m) for m in rows], meta=meta)

    @extend_schema(tags=TAG, operation_id="discussions_members_add", summary="Share with a user as viewer or participant",
                   description="Adding an existing member changes their access (200); a new member is 201.",
                   request=inputs.MemberIn,
                   responses=schemas.responses({200: MemberEnvelope, 201: MemberEnvelope}, 400, 403, 415))
    def post(self, request, id: int):
        room = controllable_room(request.user, id)
        body = json_body(request)
        member, created = do_share_room(room, username=body.get("username"),
                                        access=body.get("access", RoomMember.Access.VIEWER), actor=request.user)
        return ok(schemas.MemberOut.render(member), status=201 if created else 200)

    @extend_schema(tags=TAG, operation_id="discussions_members_remove", summary="Stop sharing with a user",
                   description="Name the user in the body (`{\"username\"}`) or as `?username=`.",
                   request=inputs.MemberRemoveIn,
                   parameters=[OpenApiParameter("username", {"type": "string", "minLength": 1},
                                                description="The user to remove.")],
                   responses=schemas.responses({200: RemovedEnvelope}, 400, 403, 415))
    def delete(self, request, id: int):
        room = controllable_room(request.user, id)
        username = request.query_params.get("username")
        if not username and request.data:
            username = json_body(request).get("username")
        return ok(_unshare(room, username, request.user))


class MemberView(APIView):
    """One person a discussion is shared with (owner or staff only)."""

    @extend_schema(tags=TAG, operation_id="discussions_member_remove", summary="Stop sharing with this user",
                   responses=schemas.responses({200: RemovedEnvelope}, 400, 403))
    def delete(self, request, id: int, username: str):
        room = controllable_room(request.user, id)
        return ok(_unshare(room, username, request.user))
