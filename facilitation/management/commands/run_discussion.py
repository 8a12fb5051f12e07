"""Run one discussion to its conclusion in this process, with the workers' engine steps."""
import json

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from config.bootstrap import ensure_schema

from facilitation.actions.inputs import DiscussionCreateIn
from facilitation.actions.lifecycle import do_start_discussion
from facilitation.llm.registry import PROVIDERS
from facilitation.presets.seed import ensure_presets
from facilitation.management.inline import drive_inline
from facilitation.runs.scheduling import inline
from facilitation.transcript import discussion_document
from rooms.actions.rooms import do_create_room
from rooms import realtime
from rooms.errors import ActionError
from rooms.models import Agent, Observation, Room, Seat

DEFAULT_PARTICIPANTS = ["architect", "security", "pragmatist"]


def _redis_reachable() -> bool:
    import redis

    try:
        return bool(redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=0.3, socket_timeout=0.3).ping())
    except Exception:
        return False


class Command(BaseCommand):
    help = "Runs one discussion to its conclusion in-process, printing each turn."

    def add_arguments(self, parser):
        parser.add_argument("--topic", required=True)
        parser.add_argument("--format", default="deliberation", choices=[c for c in Room.Format.values])
        parser.add_argument("--facilitator", default="The Impartial Chair", help="Name of a facilitator agent.")
        parser.add_argument("--participants", default=",".join(DEFAULT_PARTICIPANTS), help="Comma-separated agent aliases.")
        parser.add_argument("--rounds", type=int, default=None)
        parser.add_argument("--provider", choices=PROVIDERS, default=None)
        parser.add_argument("--json", action="store_true", help="Print only the final discussion as JSON.")

    def handle(self, *args, **opts):
        ensure_schema(self.stderr)
        ensure_presets()
        if not _redis_reachable():
            # Nobody can be watching live; the events are still stored for replay.
            realtime.use(realtime.NullPublisher())
        facilitator = Agent.objects.filter(is_facilitator=True, name__iexact=opts["facilitator"]).first()
        if facilitator is None:
            names = ", ".join(Agent.objects.filter(is_facilitator=True).values_list("name", flat=True))
            raise CommandError(f"No facilitator named {opts['facilitator']!r}. Choose one of: {names}.")
        participants = []
        for alias in [a.strip() for a in opts["participants"].split(",") if a.strip()]:
            agent = Agent.objects.filter(alias=alias, is_facilitator=False).first() or Agent.objects.filter(name__iexact=alias, is_facilitator=False).first()
            if agent is None:
                raise CommandError(f"No participant agent with alias {alias!r}.")
            participants.append({"agent_id": agent.pk, "role": "participant"})
        owner, _ = get_user_model().objects.get_or_create(username="convene-cli", defaults={"is_active": False})
        try:
            room = do_create_room(owner, **DiscussionCreateIn.parse({
                "name": opts["topic"][:200], "topic": opts["topic"], "format": opts["format"],
                "moderator_id": facilitator.pk, "max_rounds": opts["rounds"], "participants": participants}))
        except ActionError as exc:
            raise CommandError(f"{exc.message} {json.dumps(exc.details)}")
        with inline():
            do_start_discussion(room)
        printed = {"seq": 0}

        def show(_result):
            if opts["json"]:
                return
            for obs in Observation.objects.filter(room=room, seq__gt=printed["seq"]).order_by("seq"):
                printed["seq"] = obs.seq
                self.stdout.write(self._line(obs))
                self.stdout.flush()

        if not opts["json"]:
            self.stdout.write(f"Discussion #{room.pk}: {room.topic} ({room.format}, up to {room.max_rounds} rounds, facilitator {facilitator.name})")
        room = drive_inline(room.pk, on_step=show, provider=opts["provider"] or "")
        if opts["json"]:
            self.stdout.write(json.dumps(discussion_document(room), indent=2))
        else:
            self.stdout.write(f"\nStatus: {room.status} after {room.round} rounds.")
        if room.status != Room.Status.CONCLUDED:
            raise CommandError(f"The discussion ended {room.status}.")

    @staticmethod
    def _line(obs: Observation) -> str:
        if obs.kind == Observation.Kind.DECISION:
            d = obs.data
            fb = f" [fallback: {d['fallback']}]" if d.get("fallback") else ""
            if d.get("decision") == "synthesize":
                return f"\n[round {obs.round}] {obs.author_name} (facilitator): synthesize. {d.get('reasoning', '')}{fb}"
            target = Seat.objects.filter(pk=d.get("nextParticipantId")).first()
            who = target.display_name if target else f"#{d.get('nextParticipantId')}"
            return f"\n[round {obs.round}] {obs.author_name} (facilitator) -> {who}: {d.get('question', '')}{fb}"
        if obs.kind == Observation.Kind.SYNTHESIS:
            return f"\n=== Conclusion by {obs.author_name} ===\n{obs.content}"
        status = "" if obs.status == "ok" else f" [{obs.status}]"
        return f"\n[round {obs.round}] {obs.author_name}{status}:\n{obs.content}"
