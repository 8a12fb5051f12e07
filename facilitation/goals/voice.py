"""What the facilitator says and shows in a run's meeting, and when (the callers hold the run's locks).

Everything said is a turn in the room, relayed to every linked chat; the artifact is shown in
place in each chat (one message edited, one card updated); the floor decides whether a moment
is worth a message; the closing goes with the report to each principal, resolved now.
"""
import secrets
from datetime import timedelta

from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from facilitation.exports.markdown import escape_markdown as md
from facilitation.goals import floor, patterns, rules, texts
from facilitation.goals.minutes import run_facts
from rooms.actions.chat import typed_command
from rooms.actions.deliveries import queue_direct, queue_relay, queue_status
from rooms.audit import record
from rooms.events import EventType, build, next_seq, record_event
from rooms.meeting import answer_target
from rooms.models import Chat, ChatIdentity, ChatLink, Delivery, FacilitationRun, Observation, Room, Seat


def page_url(room: Room) -> str:
    """The room's page in the browser, as an absolute address (``CONVENE["PUBLIC_URL"]``)."""
    return settings.CONVENE.get("PUBLIC_URL", "").rstrip("/") + reverse("frontend:discussion", args=[room.pk])


def run_info(run: FacilitationRun, room: Room) -> texts.RunInfo:
    return texts.RunInfo(facilitator=room.moderator.name if room.moderator_id else "The facilitator", goal=room.topic,
                         pattern=run.pattern, slots=run.slots, deadline=run.deadline.strftime("%Y-%m-%d %H:%M UTC"),
                         report_to=list(run.report_to), disclose_report_to=run.disclose_report_to, mode=run.mode,
                         initiator=run.initiator_name or None, name=room.name, url=page_url(room))


def linked_chats(room: Room) -> list[Chat]:
    """The chats the room's messages reach now (linked, with the bot still in them)."""
    return [link.chat for link in ChatLink.objects.filter(room=room, active=True).select_related("chat").order_by("pk")
            if link.chat.bot_present]


def escaper_for(chat: Chat | ChatIdentity) -> texts.Escape:
    """How people's words go into a message posted to ``chat`` (or sent directly to a chat account) so they read as
    typed: Teams shows a post as Markdown (escaped), Telegram as plain text (as written)."""
    return md if chat.platform == "teams" else texts.as_written


def command_in(chat: Chat, words: str) -> str:
    """A command as people type it in ``chat`` (Teams: after the bot's @mention), written as the chat's replies write
    people's words (``escaper_for``: the bot's name may hold marks Teams would read as Markdown)."""
    return escaper_for(chat)(typed_command(chat.platform, words, direct=chat.kind == Chat.Kind.DIRECT))


def run_state_after_the_end(room: Room) -> str:
    """How a finished run ended (``completed``, ``stopped`` or ``failed``), from the run or the protocol a reaped run
    left in the room; "" when the room holds no finished run."""
    state = run_facts(room).get("state") or ""
    return state if state in FacilitationRun.TERMINAL else ""


def outcome_after_the_end(room: Room, esc: texts.Escape = texts.as_written) -> str:
    """What a finished run came to, for a chat that asks after the end ("" when the room holds no run, or the run
    only took minutes or kept time: its minutes are its result). Read from the run, or from the protocol a
    reaped run left in the room."""
    facts = run_facts(room)
    if not facts or facts.get("state") not in FacilitationRun.TERMINAL:
        return ""
    run = FacilitationRun.objects.filter(room=room).only("mode").first()
    if run is not None and run.mode != FacilitationRun.Mode.FACILITATE:
        return ""
    return texts.outcome_after_the_end(facts.get("pattern") or "list", facts.get("artifact") or {}, facts["state"],
                                       facts.get("confirmedBy") or [], facts.get("endReason") or "", esc)


def commands_for(chats: list[Chat], esc: texts.Escape = texts.as_written) -> tuple[str, str]:
    """``/facilitator status`` and ``/facilitator stop`` as people type them in ``chats``: on Teams after the
    bot's @mention. Read in chats of both platforms (or in none yet), Telegram's form comes first and Teams'
    follows in brackets when a Teams chat is among them."""
    def typed(words: str) -> str:
        forms = {chat.platform: typed_command(chat.platform, words) for chat in chats}
        first = esc(forms.get("telegram") or forms.get("teams") or typed_command("telegram", words))
        if "telegram" in forms and "teams" in forms:
            return f"{first} (on Teams: {esc(forms['teams'])})"
        return first

    return typed("facilitator status"), typed("facilitator stop")


#: What the facilitator says to steer a run while it goes on (``say``'s purposes): once the run has ended, such a line
#: not sent yet is not sent at all (the closing says how it ended).
STEERING = frozenset({"reminder", "time-check", "conflict", "confirmation", "confirmation-withdrawn"})
#: Of those, the lines of one moment: a nudge, a time check, a mediation of a claim just made. Late, they mislead (the
#: time is wrong, the conflict settled, and a stall is nudged again at the next cadence), so they also expire
#: (``channels_bridge.sender``). Everything else the facilitator says (the handshake, a status asked for, the closing,
#: a report's diagnostic) and everything people need (reports, minutes, answers) is always delivered.
MOMENTARY = frozenset({"reminder", "time-check", "conflict"})


# The people a facilitator's line addresses are marked in its text while it is put together (``addressee``), then
# the marks are taken out and their places kept in the turn's ``data.addressed``: the bridge mentions each person
# there the chat's way when it knows them in that chat (``channels_bridge.mentions``).
_MARK = secrets.token_hex(8)  # unguessable: people's words can never hold a mark
_OPEN, _SHOWN, _CLOSE = f"\ue000{_MARK}<", f"\ue000{_MARK}|", f"\ue000{_MARK}>"


def addressee(name: str) -> str:
    """A person the facilitator addresses, escaped for Markdown like every name in what it says (``md``) and marked
    for ``say`` to find (with the name as written)."""
    return _OPEN + name + _SHOWN + md(name) + _CLOSE


def _unmarked(text: str) -> tuple[str, list[dict]]:
    """The text without the marks of ``addressee``, and where each addressed person is named in it
    (``{offset, length, name}``: the name as written; the text holds it escaped)."""
    out, places, at = "", [], 0
    while (start := text.find(_OPEN, at)) >= 0:
        middle = text.find(_SHOWN, start)
        end = text.find(_CLOSE, middle)
        out += text[at:start]
        name, shown = text[start + len(_OPEN):middle], text[middle + len(_SHOWN):end]
        if shown:
            places.append({"offset": len(out), "length": len(shown), "name": name})
        out += shown
        at = end + len(_CLOSE)
    return out + text[at:], places


def say(room: Room, text: str, purpose: str, answers: dict | None = None) -> Observation:
    """The facilitator's message in the room, as a turn (the caller holds the room's lock).

    Linked chats receive it through the relay of room turns. It is Markdown (the room page and the chats
    render it): whatever people wrote in it is escaped (the texts' ``esc=md``), so it reads as typed. The people it
    addresses (named with ``addressee``) are kept in ``data.addressed``, for the chats to mention them. ``answers``:
    the chat message it answers, where that chat has threads or replies (``asked_in``; a command's ``answers``), kept
    in ``data.answers``: its relay to that chat goes into the message's thread (Teams) or replies to it (Telegram),
    everywhere else it is said as any line."""
    seat = room.seats.filter(role=Seat.Role.FACILITATOR).first()
    seq = next_seq(room)
    text, places = _unmarked(text)
    data = {"purpose": purpose, **({"addressed": places} if places else {}), **({"answers": answers} if answers else {})}
    obs = Observation.objects.create(
        room=room, seq=seq, round=room.round, seat=seat, author_name=seat.display_name if seat else "Facilitator",
        author_kind=Observation.AuthorKind.FACILITATOR, kind=Observation.Kind.MESSAGE, content=text,
        data=data)
    record_event(room, EventType.TURN, build.turn(obs, role=Seat.Role.FACILITATOR), seq=seq)
    queue_relay(room, obs)  # to every linked chat
    return obs


def _floor_allows(room: Room, moment: floor.Moment) -> bool:
    """At most ``FACILITATION_MESSAGES_PER_MINUTE`` facilitator messages a minute, only at a moment worth speaking."""
    now = timezone.now()
    recent = Observation.objects.filter(room=room, author_kind=Observation.AuthorKind.FACILITATOR,
                                        created_at__gte=now - timedelta(minutes=1)).values_list("created_at", flat=True)
    return floor.may_speak(moment, [(t - now).total_seconds() for t in recent], per_minute=settings.CONVENE["FACILITATION_MESSAGES_PER_MINUTE"])


def unconfirmed(run: FacilitationRun) -> list[str]:
    """Who of those asked to confirm has not yet, while the run waits for confirmation (else nobody)."""
    if run.state != FacilitationRun.State.CONFIRMING:
        return []
    return patterns.unconfirmed(run.pattern, run.artifact, run.confirmations, run.initiator_name or None,
                                run.confirm_mode)


def show_status(room: Room, run: FacilitationRun, chats: list | None = None) -> list[Delivery]:
    """The artifact in place in every linked chat (or in ``chats``): one message edited (Telegram), one card
    updated (Teams)."""
    check = patterns.check(run.pattern, run.slots, run.artifact)
    text = texts.board(run_info(run, room), run.artifact, check.missing, run.state, unconfirmed(run))
    if chats is None:
        chats = [link.chat for link in ChatLink.objects.filter(room=room, active=True).select_related("chat")]
    return [queue_status(chat, text, room=room) for chat in chats if chat.bot_present]


def react(room: Room, run: FacilitationRun, out: dict, addressed: bool = False) -> None:
    """After a message changed something: show the artifact in place; speak only when it is worth it and the floor
    allows (the request to confirm a result just completed is said even when it does not). Confirmation
    is asked for again only when the result changed (a new proposal alone asks nothing), saying first that the
    confirmations given so far no longer hold."""
    if out["changed"] or out["confirmed"] or out.get("withdrawn"):  # the status in place shows who is still to confirm
        show_status(room, run)
    moment = floor.Moment(now=0.0, addressed=addressed, artifact_changed=out["changed"] or bool(out["conflicts"]))
    # The request to confirm a result that has just become complete is never held back by the floor: it is asked
    # once per result, and without it the group would not learn that the run now waits for them.
    ask = bool(out.get("resultChanged")) and run.state == FacilitationRun.State.CONFIRMING
    floor_open = _floor_allows(room, moment)
    if not (floor_open or ask):
        return
    withdrawn = texts.confirmations_withdrawn(out.get("withdrawn") or [], md, addressee)
    for c in out["conflicts"][:1] if floor_open else []:  # the confirmations a change withdrew are said with it
        mediation = texts.conflict(c.role, c.holder, c.claimant, md, addressee)
        say(room, f"{withdrawn}\n{mediation}" if withdrawn else mediation, "conflict")
        return
    if ask:
        people = patterns.confirmers(run.pattern, run.artifact, run.initiator_name or None, run.confirm_mode)
        asked = texts.ask_confirmation(run.pattern, run.artifact, people, md, addressee)
        say(room, f"{withdrawn}\n{asked}" if withdrawn else asked, "confirmation")
    elif withdrawn:
        say(room, withdrawn, "confirmation-withdrawn")


def asked_in(room: Room, seq: int | None) -> dict:
    """Where the person's turn ``seq`` was written, for an answer to it to go there: ``{chatId, messageId, thread}``
    when it came from a chat with threads (a Teams channel: ``data.source.thread``) or from a Telegram group (the
    answer replies to the message; ``thread``: its forum topic, "" outside one), else empty."""
    turn = Observation.objects.filter(room=room, seq=seq).only("data").first() if seq is not None else None
    source = (turn.data or {}).get("source") if turn is not None and isinstance(turn.data, dict) else None
    if not isinstance(source, dict):
        return {}
    return answer_target(source.get("chatId"), source.get("platform") or "", source.get("messageId") or "",
                         source.get("thread") or "")


def answer_addressed(room: Room, run: FacilitationRun, asker: str, answers: dict | None = None) -> Observation | None:
    """Someone addressed the facilitator (named it, mentioned the bot, replied to it) and what they said changed
    nothing: it answers with where the run stands, as the floor allows (else it stays quiet). ``answers``: their
    message (``asked_in``), for the answer to go into its thread."""
    if run.state not in (FacilitationRun.State.ACTIVE, FacilitationRun.State.CONFIRMING):
        return None
    if not _floor_allows(room, floor.Moment(now=0.0, addressed=True)):
        return None
    check = patterns.check(run.pattern, run.slots, run.artifact)
    return say(room, texts.where_we_stand(run_info(run, room), run.artifact, check.missing, run.state, asker, md,
                                          addressee, unconfirmed(run)), "answer", answers=answers)


def answer_unplaced(room: Room, run: FacilitationRun, writer: str, notes: list,
                    platform: str = "", answers: dict | None = None) -> Observation | None:
    """Someone gave a role to a person the facilitator cannot place (nobody of that name here, or several), or gave a
    role the run does not have (``rules.unplaced``'s notes): it tells them, addressed, in one message, as the floor
    allows (as when addressed). ``platform``: where they wrote, for how someone unknown becomes known there;
    ``answers``: their message (``asked_in``), for the answer to go into its thread."""
    if not notes or run.state not in (FacilitationRun.State.ACTIVE, FacilitationRun.State.CONFIRMING):
        return None
    if not _floor_allows(room, floor.Moment(now=0.0, addressed=True)):
        return None
    said = []
    for note in notes:
        if isinstance(note, rules.Unknown):
            said.append(texts.not_known(note.name, note.role, platform, md))
        elif isinstance(note, rules.Ambiguous):
            said.append(texts.could_be(note.name, note.role, list(note.people), md))
        elif isinstance(note, rules.NoSuchRole):
            said.append(texts.no_such_role(note.role, list(run.slots.get("roles") or []), md))
    return say(room, f"{addressee(writer)}, " + "\n".join(said), "unplaced", answers=answers) if said else None


def _unreached(delivery: Delivery) -> str:
    """Why a report did not go out, as a chat may read it (the delivery's diagnostic, with its REST hints,
    stays on the run's page)."""
    if delivery.identity_id is None and "no linked" in delivery.diagnostic:
        return f"{delivery.recipient} has no linked chat account (they can link one on Convene's Chat accounts page)"
    return delivery.diagnostic


def _owner_name(room: Room) -> str:
    return (room.owner.get_full_name() or room.owner.get_username()) if room.owner_id else ""


def close_and_report(room: Room, run: FacilitationRun, *, completed: bool, reason: str = "") -> None:
    """The closing in the room, then the report to each principal, resolved now (the caller holds the locks).

    The minutes (.docx) go with each report. A report that cannot go out (nobody holds the role, a holder
    without a chat account) is said in the room, addressed to the run's owner, when the report's targets
    are disclosed; when they are not, the room only hears that the report did not reach everyone and the
    owner is told the details by direct message. Every report, and whether it arrived (a refusal learned
    later included), is listed on the run's page (its deliveries)."""
    info = run_info(run, room)
    if run.mode == FacilitationRun.Mode.FACILITATE:
        report = texts.report(info, run.artifact, completed, run.confirmations, reason, direct=True)
        said = texts.report(info, run.artifact, completed, run.confirmations, reason, md)
        say(room, texts.closing(info, completed, reason, md) + "\n" + said, "closing")
    else:  # record / timekeep: the minutes are the result
        people = Observation.objects.filter(room=room, author_kind=Observation.AuthorKind.HUMAN)
        report = texts.minutes_report(info, people.count(), sorted(set(people.values_list("author_name", flat=True))))
        say(room, texts.closing_without_steering(info, reason or "stopped", md), "closing")
    show_status(room, run)
    attachment = {"kind": REPORT_ATTACHMENT, "roomId": room.pk, "filename": f"minutes-{room.pk}.docx"}
    problems = []
    reached: set = set()  # one report (and one copy of the minutes) per person, however many targets name them
    for principal in run.report_to:
        for delivery in queue_direct(principal, report, room=room, attachment=attachment, plain=True, reached=reached):
            if delivery.status == Delivery.Status.UNDELIVERABLE:
                problems.append(_problem(delivery))
    if problems:
        _tell_report_problems(room, run, info, problems)
    record("goals.report", room=room, data={"completed": completed, "reportTo": run.report_to, "problems": problems})


#: The attachment a run's report carries (its minutes): what marks a delivery as a run's report.
REPORT_ATTACHMENT = "run_minutes"


def _problem(delivery: Delivery) -> str:
    target, why = texts.readable_targets([delivery.principal]), _unreached(delivery)
    # "ben has no linked chat account", not "ben: ben has ..."; a role names its holder after it
    return why if why.startswith(f"{target} ") else f"{target}: {why}"


def _tell_report_problems(room: Room, run: FacilitationRun, info, problems: list[str], *, later: bool = False) -> None:
    """Reports that could not go out, said in the room to the run's owner when the report's targets are disclosed;
    when they are not, the room only hears that the report did not reach everyone and the owner gets the details by
    direct message (the caller holds the room's lock). ``later``: the platform refused them after the closing said
    they were being sent, and the owner is also told by direct message (the run's chats may be unlinked by then)."""
    owner = _owner_name(room)
    reasons = "; ".join(problem.rstrip(". ") for problem in problems)  # a diagnostic may end with its own full stop
    details = "I could not deliver the report to everyone: " + reasons + ". " + texts.DELIVERIES_HINT
    if run.disclose_report_to:
        say(room, f"{addressee(owner)}, {md(details)}" if owner else md(details), "report-diagnostic")
    else:
        say(room, texts.REPORT_NOT_EVERYONE, "report-diagnostic")
    if room.owner_id and (later or not run.disclose_report_to):
        queue_direct(f"user:{room.owner.get_username()}", f"Run \"{info.goal}\": {details}\n{texts.which_run(info)}",
                     room=room, plain=True)


def report_refused(delivery_id: int) -> None:
    """A run's report that its platform refused once it was tried (a person who blocked the bot, a 403 on the direct
    message...), after the closing had said it was being sent: the owner learns it as the closing tells of a report
    that could not go out (``_tell_report_problems``). Called in the transaction that marks the delivery
    undeliverable, so it is said once. Any other delivery is left alone."""
    delivery = Delivery.objects.filter(pk=delivery_id, kind=Delivery.Kind.DIRECT,
                                       status=Delivery.Status.UNDELIVERABLE).first()
    attachment = delivery.attachment if delivery is not None and isinstance(delivery.attachment, dict) else {}
    if attachment.get("kind") != REPORT_ATTACHMENT or "offer" in attachment or delivery.room_id is None:
        return
    room = Room.objects.select_for_update().filter(pk=delivery.room_id).first()
    run = FacilitationRun.objects.filter(room_id=delivery.room_id).first() if room is not None else None
    if run is None:
        return
    problem = _problem(delivery)
    _tell_report_problems(room, run, run_info(run, room), [problem], later=True)
    record("goals.report_refused", room=room, data={"delivery": delivery.pk, "problem": problem})
