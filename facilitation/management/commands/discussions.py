"""``python manage.py discussions SUBCOMMAND``: create and drive discussions from a terminal.

Every subcommand runs the same actions as the REST API, as the user named by ``--user``
(default ``convene-cli``, created inactive so nobody can sign in as it).
"""
import json
import sys
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from facilitation.actions.comments import do_post_comment
from facilitation.actions.lifecycle import do_start_discussion
from facilitation.actions.inputs import DiscussionCreateIn
from facilitation.actions.phases import do_advance_phase, votes_document
from facilitation.discussions.file_io import discussion_file, do_import_discussion
from facilitation.llm.registry import PROVIDERS
from facilitation.management.inline import drive_inline
from facilitation.runs.leases import current
from facilitation.runs.runner import run_step
from facilitation.runs.scheduling import inline
from facilitation.transcript import discussion_document
from rooms.access import can_control, can_view
from rooms.actions.rooms import do_create_room
from rooms.errors import ActionError
from rooms.models import Agent, Observation, Room, Seat
from rooms.queries import usable_by

CLI_USER = "convene-cli"


class Command(BaseCommand):
    help = "Create and drive discussions: new, list, status, turn, run, comment, advance, participants, export, import."

    def add_arguments(self, parser):
        parser.add_argument("--user", default=CLI_USER, help="Act as this user (default: %(default)s).")
        sub = parser.add_subparsers(dest="subcommand", required=True, metavar="SUBCOMMAND")
        new = sub.add_parser("new", help="Create a discussion (and start it with --start).")
        new.add_argument("--topic", required=True)
        new.add_argument("--name")
        new.add_argument("--format", default="deliberation", choices=Room.Format.values)
        new.add_argument("--facilitator", default="The Impartial Chair", help="A facilitator's name.")
        new.add_argument("--participants", default="architect,security,pragmatist", help="Comma-separated aliases or names.")
        new.add_argument("--rounds", type=int)
        new.add_argument("--template", help="feature, code_review or adr: the phases and their instructions.")
        new.add_argument("--threshold", type=float, help="Share of READY votes that is consensus (0..1, default 0.67).")
        new.add_argument("--no-reject-blocks", action="store_true", help="A standing REJECT does not block consensus.")
        new.add_argument("--human-required", action="store_true", help="No consensus without a person's vote.")
        new.add_argument("--max-parallel", type=int, help="Turns that may run at once (1..3).")
        new.add_argument("--start", action="store_true", help="Start it at once (steps run on the workers).")
        new.add_argument("--json", action="store_true")
        listing = sub.add_parser("list", help="Discussions you own or that are shared with you.")
        listing.add_argument("--status", choices=Room.Status.values)
        listing.add_argument("--json", action="store_true")
        for name, text in (("status", "One discussion's status."), ("participants", "Who sits in a discussion.")):
            p = sub.add_parser(name, help=text)
            p.add_argument("id", type=int)
            p.add_argument("--json", action="store_true")
        turn = sub.add_parser("turn", help="Run the next step of an active discussion here and print what it wrote.")
        turn.add_argument("id", type=int)
        turn.add_argument("--provider", choices=PROVIDERS)
        turn.add_argument("--json", action="store_true")
        run = sub.add_parser("run", help="Run an active discussion to its end here.")
        run.add_argument("id", type=int)
        run.add_argument("--provider", choices=PROVIDERS)
        run.add_argument("--json", action="store_true")
        comment = sub.add_parser("comment", help="Speak in a running or paused discussion, as a person (markers count).")
        comment.add_argument("id", type=int)
        comment.add_argument("text", nargs="+", help="The comment's words (or - to read it from standard input).")
        comment.add_argument("--as", dest="as_user", metavar="USER", help="Speak as this user (default: --user).")
        comment.add_argument("--json", action="store_true")
        advance = sub.add_parser("advance", help="Move a discussion to its template's next phase (the owner).")
        advance.add_argument("id", type=int)
        advance.add_argument("--json", action="store_true")
        export = sub.add_parser("export", help="Write the discussion file (Markdown).")
        export.add_argument("id", type=int)
        export.add_argument("--output", "-o", help="A file to write (default: standard output).")
        imp = sub.add_parser("import", help="Create a discussion from a discussion file.")
        imp.add_argument("file", help="A path, or - for standard input.")
        imp.add_argument("--json", action="store_true")

    # --- helpers ---------------------------------------------------------------------

    def _user(self, username):
        user_model = get_user_model()
        if username == CLI_USER:
            return user_model.objects.get_or_create(username=CLI_USER, defaults={"is_active": False})[0]
        user = user_model.objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user named {username!r}.")
        return user

    def _room(self, user, room_id) -> Room:
        room = Room.objects.filter(pk=room_id).first()
        if room is None or not (can_view(user, room) or user.username == CLI_USER and room.owner_id == user.pk):
            raise CommandError(f"No discussion #{room_id} that {user.username} may see.")
        return room

    def _print(self, data, as_json: bool, text: str):
        self.stdout.write(json.dumps(data, indent=2, default=str) if as_json else text)

    @staticmethod
    def _summary(room: Room) -> dict:
        return {"id": room.pk, "name": room.name, "status": room.status, "round": room.round, "maxRounds": room.max_rounds,
                "format": room.format, "kind": room.kind, "template": room.template or None, "phase": room.phase or None}

    def _new_turns(self, room: Room, after: int, as_json: bool):
        rows = list(Observation.objects.filter(room=room, seq__gt=after).order_by("seq"))
        if as_json:
            self.stdout.write(json.dumps([{"seq": o.seq, "round": o.round, "kind": o.kind, "speaker": o.author_name,
                                           "content": o.content, "markers": o.markers} for o in rows], indent=2))
        for o in rows if not as_json else []:
            self.stdout.write(f"[{o.seq}] round {o.round} · {o.author_name} ({o.kind}): {o.content}")

    # --- subcommands -----------------------------------------------------------------

    def handle(self, *args, **opts):
        user = self._user(opts["user"])
        try:
            getattr(self, f"cmd_{opts['subcommand']}")(user, opts)
        except ActionError as exc:
            details = f" {json.dumps(exc.details)}" if exc.details else ""
            raise CommandError(f"{exc.message}{details}") from None

    def cmd_new(self, user, opts):
        agents = usable_by(Agent, user) if user.username != CLI_USER else Agent.objects.filter(is_builtin=True)
        facilitator = agents.filter(is_facilitator=True, name__iexact=opts["facilitator"]).first()
        if facilitator is None:
            names = ", ".join(agents.filter(is_facilitator=True).values_list("name", flat=True))
            raise CommandError(f"No facilitator named {opts['facilitator']!r}. Choose one of: {names}.")
        seats = []
        for word in [w.strip() for w in opts["participants"].split(",") if w.strip()]:
            agent = agents.filter(is_facilitator=False, alias=word).first() or agents.filter(is_facilitator=False, name__iexact=word).first()
            if agent is None:
                raise CommandError(f"No participant agent {word!r}.")
            seats.append({"agent_id": agent.pk, "role": "participant"})
        consensus = {"rejectBlocks": not opts["no_reject_blocks"], "humanRequired": opts["human_required"]}
        if opts["threshold"] is not None:
            consensus["threshold"] = opts["threshold"]
        room = do_create_room(user, **DiscussionCreateIn.parse({
            "name": opts["name"] or opts["topic"][:200], "topic": opts["topic"], "format": opts["format"],
            "moderator_id": facilitator.pk, "max_rounds": opts["rounds"], "participants": seats,
            "template": opts["template"], "consensus": consensus, "max_parallel": opts["max_parallel"]}))
        if opts["start"]:
            room = do_start_discussion(room)
        self._print(self._summary(room), opts["json"], f"Discussion #{room.pk} created ({room.status}).")

    def cmd_list(self, user, opts):
        rooms = Room.objects.filter(owner=user) | Room.objects.filter(members__user=user)
        rooms = rooms.distinct().order_by("-created_at", "-id")
        if opts["status"]:
            rooms = rooms.filter(status=opts["status"])
        data = [self._summary(r) for r in rooms[:200]]
        text = "\n".join(f"#{d['id']:<5} {d['status']:<10} round {d['round']}/{d['maxRounds']}  {d['name']}" for d in data)
        self._print(data, opts["json"], text or "No discussions.")

    def cmd_status(self, user, opts):
        room = self._room(user, opts["id"])
        doc = discussion_document(room)
        text = (f"#{room.pk} {room.name}: {room.status}, round {room.round} of {room.max_rounds}, "
                f"{len(doc['turns'])} turns, {doc['usage']['calls']} model calls")
        data = {**self._summary(room), "turns": len(doc["turns"]), "usage": doc["usage"]}
        if room.template:
            votes = votes_document(room)
            data["votes"] = votes
            tally = "sealed" if votes["sealed"] else ", ".join(f"{k} {v}" for k, v in votes["tally"].items())
            text += (f"\nTemplate {room.template}, phase {room.phase}: {tally}; "
                     f"consensus {'reached' if votes['consensus']['reached'] else 'not reached'} ({votes['consensus']['reason']})")
        self._print(data, opts["json"], text)

    def cmd_participants(self, user, opts):
        room = self._room(user, opts["id"])
        seats = Seat.objects.filter(room=room).select_related("agent", "user").order_by("position", "id")
        data = [{"seatId": s.pk, "name": s.display_name, "role": s.role, "alias": s.agent.alias if s.agent_id else ""}
                for s in seats]
        self._print(data, opts["json"], "\n".join(f"{d['seatId']:<6} {d['role']:<15} {d['name']}" for d in data))

    def cmd_turn(self, user, opts):
        room = self._room(user, opts["id"])
        if room.status != Room.Status.ACTIVE:
            raise CommandError(f"Discussion #{room.pk} is {room.status}; only an active discussion takes a turn.")
        step = current(room.pk)
        with inline():  # every slot of the step (several when turns run in parallel)
            results = [run_step(room.pk, step.step_seq, provider_override=opts["provider"] or "", slot=slot)
                       for slot in range(step.slots)]
        if any(r.outcome != "committed" for r in results):
            outcomes = ", ".join(sorted({r.outcome for r in results}))
            raise CommandError(f"The step was not committed ({outcomes}); a worker may be running it.")
        self._new_turns(room, room.seq, opts["json"])

    def cmd_run(self, user, opts):
        room = self._room(user, opts["id"])
        if room.status != Room.Status.ACTIVE:
            raise CommandError(f"Discussion #{room.pk} is {room.status}; start it first.")
        before = room.seq
        room = drive_inline(room.pk, provider=opts["provider"] or "")
        self._new_turns(room, before, opts["json"])

    def cmd_comment(self, user, opts):
        if opts["as_user"]:
            user = self._user(opts["as_user"])
        room = self._room(user, opts["id"])
        text = sys.stdin.read() if opts["text"] == ["-"] else " ".join(opts["text"])
        obs = do_post_comment(room.pk, user, text, platform="cli")
        data = {"seq": obs.seq, "round": obs.round, "kind": obs.kind, "speaker": obs.author_name,
                "content": obs.content, "markers": obs.markers}
        self._print(data, opts["json"], f"[{obs.seq}] round {obs.round} · {obs.author_name} (comment): {obs.content}")

    def cmd_advance(self, user, opts):
        room = self._room(user, opts["id"])
        if not can_control(user, room):
            raise CommandError(f"Only the owner of discussion #{room.pk} may advance its phase.")
        room = do_advance_phase(room, actor=user)
        votes = votes_document(room)
        self._print({**self._summary(room), "phase": room.phase, "template": room.template, "votes": votes},
                    opts["json"], f"Discussion #{room.pk} is now in phase {room.phase!r}.")

    def cmd_export(self, user, opts):
        text = discussion_file(self._room(user, opts["id"]))
        if opts["output"]:
            Path(opts["output"]).write_text(text, encoding="utf-8")
            self.stdout.write(f"Wrote {opts['output']}.")
        else:
            self.stdout.write(text, ending="")

    def cmd_import(self, user, opts):
        if opts["file"] == "-":
            text = sys.stdin.read()
        else:
            path = Path(opts["file"])
            if not path.is_file():
                raise CommandError(f"No file {opts['file']!r}.")
            text = path.read_text(encoding="utf-8")
        room = do_import_discussion(user, text)
        self._print(self._summary(room), opts["json"], f"Imported as discussion #{room.pk} ({room.status}).")
