"""What the facilitator says in a group, in its own name. Pure: plain text from plain data.

Every run opens with the handshake (goal, definition of done, deadline, who receives the
result, how to stop it) and closes with an announcement: there is no silent mode.
"""
import unicodedata
from dataclasses import dataclass, field
from typing import Callable

from facilitation.goals.rules import without_direction
from facilitation.wording import counted

#: How people's words are put into a message: as they are (plain text: the status in place, direct
#: messages, the minutes), or escaped for Markdown (what the facilitator says in the room, which the room
#: page and the chats render as Markdown), so that ``2*3*4`` or ``[click](...)`` still reads as typed.
Escape = Callable[[str], str]


def as_written(text: str) -> str:
    return text

MODES = {
    "facilitate": "I will moderate until the goal is met and confirmed.",
    "record": "I am here only to take minutes; I will not steer the conversation.",
    "timekeep": "I will keep time and remind you of the deadline; I will not steer otherwise.",
}


@dataclass(frozen=True)
class RunInfo:
    facilitator: str
    goal: str
    pattern: str
    slots: dict
    deadline: str            # already formatted for people
    report_to: list = field(default_factory=list)
    disclose_report_to: bool = True
    mode: str = "facilitate"
    initiator: str | None = None
    name: str = ""           # the run's name, as its owner wrote it
    url: str = ""            # the run's page in the browser (absolute)


def which_run(info: RunInfo) -> str:
    """The line of a direct message that says which run it is about and where to look: its name and its page."""
    name = f"Run \"{info.name}\"" if info.name else "The run"
    return f"{name}: {info.url}" if info.url else name


def definition_of_done(pattern: str, slots: dict, esc: Escape = as_written) -> str:
    if pattern == "role_assignment":
        extra = "" if slots.get("allowMultiple") else ", nobody holding two"
        return f"every role ({', '.join(esc(r) for r in slots['roles'])}) has exactly one person{extra}, and you confirm it"
    if pattern == "decision":
        options = slots.get("options") or []
        among = f" among {', '.join(esc(o) for o in options)}" if options else ""
        return f"one option is chosen{among}, and you confirm it"
    return f"the list has at least {counted(slots['min'], 'item')}, and you confirm it"


def _listed(names: list[str], last: str = "and") -> str:
    """``A``, ``A and B``, ``A, B and C`` (``last``: "or" for ``A, B or C``); "" for none."""
    if len(names) < 2:
        return "".join(names)
    return f"{', '.join(names[:-1])} {last} {names[-1]}"


def _targets(info: RunInfo) -> str:
    if not info.report_to:
        return "nobody (no report target was set)"
    return readable_targets(info.report_to) if info.disclose_report_to else "the person who asked for it"


def readable_targets(report_to: list) -> str:
    """Report targets as people read them: ``user:olga`` is "olga", ``role:management`` "everyone in management"
    ("" for none)."""
    names = []
    for target in report_to:
        kind, _, name = str(target).partition(":")
        names.append(f"everyone in {name}" if kind == "role" else name if kind == "user" and name else str(target))
    return _listed(names)


#: How the run's commands are typed where the handshake is read (``voice.commands_for`` words them per platform:
#: on Teams they follow the bot's @mention).
STATUS_COMMAND, STOP_COMMAND = "/facilitator status", "/facilitator stop"


def brought_here(added_by: str, linked_by: str, esc: Escape = as_written) -> str:
    """Who brought the facilitator into a group linked to a run already under way: whoever added the bot there, and
    whoever linked the group when someone else ("" when neither is known)."""
    said = [f"{esc(added_by)} invited me here."] if added_by else []
    if linked_by and linked_by != added_by:
        said.append(f"{esc(linked_by)} linked this chat to the run.")
    return " ".join(said)


def stop_refused(status_command: str, founding: bool = True, initiator: str = "", esc: Escape = as_written) -> str:
    """The answer to a stop from someone who may not stop the run. In the group the run was started from
    (``founding``) the initiator is the person who invited the facilitator there; anywhere else someone else did (or
    the run was started in the browser), so the initiator is named (``initiator``, "" when unknown) as who started it."""
    if founding:
        who = "the person who invited me"
    else:
        who = f"{esc(initiator)}, who started this run" if initiator else "whoever started this run"
    return f"Only {who}, or the run's owner (with a linked account), can stop this run. Everyone can ask {status_command}."


def handshake(info: RunInfo, esc: Escape = as_written, status_command: str = STATUS_COMMAND,
              stop_command: str = STOP_COMMAND, by: str | None = None) -> str:
    """``by``: who brought the facilitator into this group, already worded (``brought_here``); by default the run's
    initiator invited it (the founding group)."""
    if by is None:
        by = f"{esc(info.initiator)} invited me." if info.initiator else ""
    by = f" {by}" if by else ""
    return (f"Hello, I am {info.facilitator}, your facilitator for this run.{by}\n"
            f"Goal: {esc(info.goal)}\n"
            f"Done when: {definition_of_done(info.pattern, info.slots, esc)}.\n"
            f"Deadline: {info.deadline}.\n"
            f"The result goes to: {_targets(info)}.\n"
            f"{MODES.get(info.mode, MODES['facilitate'])}\n"
            f"Ask me anytime with {status_command}; end it with {stop_command}.")


def artifact_text(pattern: str, artifact: dict, esc: Escape = as_written) -> str:
    """The artifact as lines; what people wrote goes through ``esc``."""
    if pattern == "role_assignment":
        return "\n".join(f"- {esc(role)}: {esc(person) if person else '(open)'}"
                         for role, person in artifact.get("roles", {}).items())
    if pattern == "decision":
        lines = [f"Chosen: {esc(artifact['choice']) if artifact.get('choice') else '(not yet)'}"]
        if artifact.get("proposals"):
            lines.append("Proposed: " + ", ".join(esc(p) for p in artifact["proposals"]))
        return "\n".join(lines)
    items = artifact.get("items", [])
    return "\n".join(f"- {esc(i['text'])} ({esc(i['by'])})" for i in items) or "(no items yet)"


#: A run's state as people read it: in the chats and, with a capital, on the pages (frontend.views hands it on).
STATE_WORDS = {"waiting": "waiting for the group", "active": "in progress", "confirming": "waiting for confirmation",
               "completed": "done and confirmed", "stopped": "stopped", "failed": "ended without a result"}


def _state(state: str) -> str:
    return STATE_WORDS.get(state, state)


def _still(missing: list, state: str, esc: Escape = as_written, unconfirmed: list | None = None) -> str:
    """What the outcome lacks, as the last line of a status says it; while it waits for confirmation, who of those
    asked has not confirmed yet (``unconfirmed``)."""
    if missing:
        return f"Still missing: {'; '.join(esc(m) for m in missing)}."
    if state == "confirming":
        if unconfirmed:
            return f"Still missing: confirmation from {', '.join(esc(p) for p in unconfirmed)}."
        return "Still missing: your confirmation."
    if state in ("stopped", "failed"):
        return "It ended before it was confirmed."
    return "Nothing is missing." if state == "completed" else "Still missing: nothing."


def status(info: RunInfo, artifact: dict, missing: list, state: str, esc: Escape = as_written,
           unconfirmed: list | None = None) -> str:
    return (f"I am {info.facilitator}, moderating this run ({_state(state)}).\nGoal: {esc(info.goal)}\n"
            f"Done when: {definition_of_done(info.pattern, info.slots, esc)}.\nDeadline: {info.deadline}.\n"
            f"The result goes to: {_targets(info)}.\nSo far:\n{artifact_text(info.pattern, artifact, esc)}\n"
            f"{_still(missing, state, esc, unconfirmed)}")


def board(info: RunInfo, artifact: dict, missing: list, state: str, unconfirmed: list | None = None) -> str:
    """The status kept in place in each group (one message edited, one card updated): plain text."""
    return (f"{info.goal} ({_state(state)})\n{artifact_text(info.pattern, artifact)}\n"
            f"{_still(missing, state, unconfirmed=unconfirmed)} Deadline: {info.deadline}.")


def where_we_stand(info: RunInfo, artifact: dict, missing: list, state: str, asker: str, esc: Escape = as_written,
                   who: Escape | None = None, unconfirmed: list | None = None) -> str:
    """The answer to someone who addressed the facilitator with a message that changed nothing: how the outcome
    stands, what it still lacks and the deadline (``who``: how the asker is named)."""
    who = who or esc
    return (f"{who(asker)}, here is where we stand:\n{artifact_text(info.pattern, artifact, esc)}\n"
            f"{_still(missing, state, esc, unconfirmed)} Deadline: {info.deadline}.")


def ask_confirmation(pattern: str, artifact: dict, people: list, esc: Escape = as_written, who: Escape | None = None) -> str:
    """``who``: how the people addressed are named (a mention where the chat knows them); ``esc`` by default."""
    who = who or esc
    return (f"This looks complete:\n{artifact_text(pattern, artifact, esc)}\n"
            f"{', '.join(who(p) for p in people)}: please confirm by replying \"confirmed\" (or say what to change).")


def confirmations_withdrawn(people: list, esc: Escape = as_written, who: Escape | None = None) -> str:
    """Said when the result changed after some had confirmed it ("" when nobody had)."""
    if not people:
        return ""
    who = who or esc
    return (f"The result changed, so the confirmations given so far ({', '.join(who(p) for p in people)}) "
            "no longer hold.")


def nudge(missing: list, silent: list, esc: Escape = as_written, who: Escape | None = None,
          unconfirmed: list | None = None) -> str:
    """``missing``: what the outcome lacks; when it lacks nothing, ``unconfirmed`` are those asked to confirm who have
    not yet, addressed (``who``)."""
    who = who or esc
    if missing:
        text = "A quick reminder: still missing " + "; ".join(esc(m) for m in missing) + "."
    else:
        waiting = f" from {', '.join(who(p) for p in unconfirmed)}" if unconfirmed else ""
        text = f"A quick reminder: still missing confirmation{waiting}."
    if silent:
        text += f" {', '.join(who(p) for p in silent)}, we have not heard from you yet: what do you think?"
    return text


def conflict(role: str, holder: str, claimant: str, esc: Escape = as_written, who: Escape | None = None) -> str:
    """The mediation of a claim on a held role; the two people are addressed once each (``who``), then named."""
    who = who or esc
    role, holder_named, claimant_named, holder, claimant = esc(role), who(holder), who(claimant), esc(holder), esc(claimant)
    return (f"{claimant_named} and {holder_named} both want {role}. {holder} holds it now. Could you two agree who takes "
            f"it? If {holder} lets it go (\"I drop {role}\"), {claimant} can take it.")


#: How someone the facilitator does not know yet becomes known, where the person who named them writes: on Telegram
#: by writing in the group (a bot sees no member list, and an @username names nobody it has not seen); on Teams also
#: by an @mention, which carries the person's account; in the browser room by writing in a linked chat, or by being
#: given access to the room.
_BECOME_KNOWN = {
    "telegram": "Once {name} has written something in this group (anything will do), say it again.",
    "teams": "Say it again with {name} @mentioned (type @ and pick them), or once they have written something in "
             "this chat.",
    "web": "Once {name} has written something in a chat linked to this run, or the run's owner has shared this room "
           "with them, say it again.",
}


def _set_off(text: str, esc: Escape) -> str:
    """A name or a role someone wrote, put into an English sentence (escaped with ``esc``) so that it cannot reorder
    the sentence: a name written right to left (Hebrew, Arabic...) is isolated (U+2068 ... U+2069), so the quote
    marks, commas and "…" around it stay where the sentence has them; direction controls in it (an override in a chat
    name) are dropped, so none reaches past it. A name written left to right is as it was."""
    text = esc(without_direction(text))
    if any(unicodedata.bidirectional(c) in ("R", "AL") for c in text):
        return f"\u2068{text}\u2069"
    return text


def not_known(name: str, role: str, platform: str, esc: Escape = as_written) -> str:
    """A role given to someone the facilitator does not know here (``name`` as written); ``platform``: where the
    person who said it writes (``telegram``, ``teams``, anything else the browser room)."""
    name, role = _set_off(name, esc), _set_off(role, esc)
    how = _BECOME_KNOWN.get(platform, _BECOME_KNOWN["web"]).format(name=name)
    return f"I don't know anyone called \u201c{name}\u201d here yet, so I have left {role} as it is. {how}"


#: How many people a name that fits several lists (the rest are counted).
CANDIDATES_SHOWN = 5


def could_be(name: str, role: str, people: list[str], esc: Escape = as_written) -> str:
    """A role given to a name that fits several people: whom it could mean, and how to say which."""
    shown = [_set_off(p, esc) for p in people[:CANDIDATES_SHOWN]]
    if len(people) > CANDIDATES_SHOWN:
        shown.append(f"{len(people) - CANDIDATES_SHOWN} more")
    name, role = _set_off(name, esc), _set_off(role, esc)
    return (f"\u201c{name}\u201d could be {_listed(shown, 'or')}, so I have left {role} as it is. Say it again "
            f"with the full name (\u201clet {shown[0]} be {role}\u201d).")


def no_such_role(role: str, roles: list[str], esc: Escape = as_written) -> str:
    """A role given that the run does not have (``role`` as written): the roles it has."""
    return (f"I have no role \u201c{_set_off(role, esc)}\u201d to give: this run's roles are "
            f"{_listed([_set_off(r, esc) for r in roles])}.")


def closing(info: RunInfo, completed: bool, reason: str = "", esc: Escape = as_written) -> str:
    if completed:
        return f"Done: the goal is met and confirmed. I am sending the result to {_targets(info)}. Thank you all."
    why = f" ({esc(reason)})" if reason else ""
    return (f"I am ending this run without a confirmed result{why}. I am sending what we have so far to "
            f"{_targets(info)}.")


def time_check(minutes_left: int, deadline: str) -> str:
    if minutes_left <= 0:
        return f"Time check: the deadline ({deadline}) is now."
    hours, minutes = divmod(minutes_left, 60)
    left = f"{hours} h {minutes:02d} min" if hours else f"{minutes} min"
    return f"Time check: {left} left until the deadline ({deadline})."


def closing_without_steering(info: RunInfo, reason: str, esc: Escape = as_written) -> str:
    role = "taking the minutes" if info.mode == "record" else "keeping time"
    return f"I am ending this run ({esc(reason)}); I was {role}. I am sending the minutes to {_targets(info)}. Thank you all."


def minutes_report(info: RunInfo, messages: int, speakers: list) -> str:
    who = ", ".join(speakers) if speakers else "nobody"
    return (f"Minutes of \"{info.goal}\": {counted(messages, 'message')} from {who}.\n{which_run(info)}\n"
            "The minutes (.docx) come with this message, and can be downloaded from the room.")


def interim(info: RunInfo, artifact: dict, missing: list) -> str:
    return (f"Interim status of \"{info.goal}\" (no progress lately; the group was reminded).\n{which_run(info)}\n"
            f"{artifact_text(info.pattern, artifact)}\nStill missing: {'; '.join(missing)}.\nDeadline: {info.deadline}.")


DELIVERIES_HINT = "The run's page lists every report and whether it arrived."
REPORT_NOT_EVERYONE = "I could not deliver the report to everyone; the run's owner has the details."


def outcome_after_the_end(pattern: str, artifact: dict, state: str, confirmations: list, reason: str = "",
                          esc: Escape = as_written) -> str:
    """What a finished run came to, as a chat reads it after the end (``/facilitator status`` there): the
    confirmed result, or what it had reached and why it ended without one."""
    if state == "completed":
        by = f" by {', '.join(esc(c) for c in confirmations)}" if confirmations else ""
        head = f"Result, confirmed{by}:"
    else:
        head = "It ended without a confirmed result" + (f" ({esc(reason)})" if reason else "") + ". What it had reached:"
    return f"{head}\n{artifact_text(pattern, artifact, esc)}"


def report(info: RunInfo, artifact: dict, completed: bool, confirmations: list, reason: str = "",
           esc: Escape = as_written, direct: bool = False) -> str:
    """The result; ``direct``: as the report sent by direct message, which also says which run it is and where its
    page is (``which_run``)."""
    head = "Result" if completed else "Partial result (not completed" + (f": {esc(reason)}" if reason else "") + ")"
    confirmed_by = f"\nConfirmed by: {', '.join(esc(c) for c in confirmations)}" if confirmations else ""
    where = f"\n{which_run(info)}" if direct else ""
    return f"{head} of \"{esc(info.goal)}\"{where}\n{artifact_text(info.pattern, artifact, esc)}{confirmed_by}"
