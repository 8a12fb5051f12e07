"""Who a message to a chat names, as that chat knows them, for each platform to mention the platform's way.

Two sources: the mentions a delivery carries (``rooms.actions.deliveries.compose``), and the people a relayed
facilitator's line addresses (its turn's ``data.addressed``: where in the turn each is named, and the name as
written), each looked up among the chat's members by the name they speak under. Someone the bridge does not know
in that chat, or a name two members share, stays plain text.
"""
from dataclasses import dataclass

from channels_bridge.text import markdown_from
from rooms.models import ChatIdentity, ChatMember, Delivery, Observation


@dataclass(frozen=True)
class Named:
    """``text[offset:offset+length]`` of the delivery names ``identity``; ``name`` is the name as written (the text may
    hold it escaped for Markdown)."""

    offset: int
    length: int
    identity: ChatIdentity
    name: str

    @property
    def end(self) -> int:
        return self.offset + self.length


def named(d: Delivery) -> list[Named]:
    """The people ``d``'s text names whom its platform can mention, in the order they appear."""
    text = d.text or ""
    ids = [m.get("identityId") for m in d.mentions or []]
    known = {i.pk: i for i in ChatIdentity.objects.filter(pk__in=ids, platform=d.platform)}
    found = [Named(m["offset"], m["length"], known[m["identityId"]], text[m["offset"]:m["offset"] + m["length"]])
             for m in d.mentions or [] if m.get("identityId") in known]
    taken = [(n.offset, n.end) for n in found]
    found += [n for n in _addressed(d) if not any(a < n.end and n.offset < b for a, b in taken)]
    return sorted(found, key=lambda n: n.offset)


def _addressed(d: Delivery) -> list[Named]:
    """The people a relayed facilitator's line addresses, found among the chat's members."""
    if d.kind != Delivery.Kind.RELAY or not d.source_id or not d.chat_id:
        return []
    turn = d.source  # read with the delivery when it was claimed for sending
    if turn is None or turn.author_kind != Observation.AuthorKind.FACILITATOR or not isinstance(turn.data, dict):
        return []
    places = turn.data.get("addressed")
    start = markdown_from(d.text or "", d.card)
    if not places or start is None:
        return []
    content = turn.content or ""
    lead = len(content) - len(content.lstrip())  # the relay says the turn without its leading blanks
    said = (d.text or "")[start:]
    members: dict[str, list[ChatIdentity]] = {}
    for member in ChatMember.objects.filter(chat_id=d.chat_id, present=True).select_related("identity__user"):
        if not member.identity.is_bot:
            members.setdefault(member.identity.display_name.casefold(), []).append(member.identity)
    found = []
    for place in places:
        offset, length, name = place.get("offset"), place.get("length"), place.get("name")
        if not (isinstance(offset, int) and isinstance(length, int) and isinstance(name, str)) or length <= 0:
            continue
        at = offset - lead
        if at < 0 or said[at:at + length] != content[offset:offset + length]:
            continue
        who = members.get(name.casefold()) or []
        if len(who) == 1:
            found.append(Named(start + at, length, who[0], name))
    return found
