"""``make demo``: serve everything, start a demo discussion on the offline model, print its turns."""
import json
import secrets
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from config.bootstrap import ensure_browser_bundles, ensure_schema

from facilitation.actions.inputs import DiscussionCreateIn
from facilitation.actions.lifecycle import do_start_discussion
from facilitation.presets.seed import seed_presets
from config.runtime import Runtime
from rooms.actions.rooms import do_create_room
from rooms.models import Agent, Observation, Room

DEMO_TOPIC = "Should our team put a Redis cache in front of PostgreSQL for the product catalogue?"


def demo_credentials() -> tuple[str, str, bool]:
    """The demo account (created once); its password is kept under var/ so it can be printed again."""
    path = settings.BASE_DIR / "var" / "demo-credentials.json"
    User = get_user_model()
    if path.exists():
        saved = json.loads(path.read_text())
        user = User.objects.filter(username=saved["username"]).first()
        if user is not None:
            return saved["username"], saved["password"], False
    password = secrets.token_urlsafe(9)
    user, _ = User.objects.get_or_create(username="demo", defaults={"email": "demo@example.com"})
    user.set_password(password)
    user.save()
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"username": "demo", "password": password}))
    path.chmod(0o600)
    return "demo", password, True


class Command(BaseCommand):
    help = "Serves Convene and runs a demo discussion on the offline rehearsal model."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=None)
        parser.add_argument("--no-serve", action="store_true", help="Exit once the demo discussion has concluded.")
        parser.add_argument("--pace", type=float, default=2.0, help="Seconds each offline answer takes, so it can be watched live.")

    def handle(self, *args, **opts):
        ensure_schema(self.stderr)
        ensure_browser_bundles(self.stderr)
        seed_presets()
        username, password, created = demo_credentials()
        with Runtime(port=opts["port"], out=self.stdout, extra_env={"LLM_PROVIDER": "rehearsal", "CONVENE_REHEARSAL_PACE": str(opts["pace"]),
                                                                        "CONVENE_DEMO_ACCOUNT": username}) as runtime:
            runtime.point_this_process_here()
            room = self._create_demo(username)
            base = f"http://{runtime.host}:{runtime.port}"
            self.stdout.write(self.style.SUCCESS(f"\nConvene is running at {base}/"))
            self.stdout.write(f"Sign in as {username!r} with password {password!r}{' (new account)' if created else ''}.")
            self.stdout.write(f"Demo discussion: {base}/discussions/{room.pk}/  (offline rehearsal model)\n")
            self._follow(room)
            if opts["no_serve"]:
                return
            self.stdout.write("\nStill serving. Press Ctrl-C to stop every process.")
            runtime.wait()

    def _create_demo(self, username: str) -> Room:
        owner = get_user_model().objects.get(username=username)
        facilitator = Agent.objects.get(is_builtin=True, is_facilitator=True, name="The Bridge-Builder")
        people = list(Agent.objects.filter(is_builtin=True, alias__in=["architect", "security", "pragmatist"]))
        seats = [{"agent_id": a.pk, "role": "devil_advocate" if a.alias == "pragmatist" else "participant"} for a in people]
        room = do_create_room(owner, **DiscussionCreateIn.parse({
            "name": "Demo: caching the catalogue", "topic": DEMO_TOPIC, "format": "deliberation",
            "moderator_id": facilitator.pk, "max_rounds": 5, "participants": seats}))
        return do_start_discussion(room)

    def _follow(self, room: Room, timeout: float = 300.0) -> None:
        from facilitation.management.commands.run_discussion import Command as RunDiscussion

        seen, deadline = 0, time.monotonic() + timeout
        while time.monotonic() < deadline:
            for obs in Observation.objects.filter(room=room, seq__gt=seen).order_by("seq"):
                seen = obs.seq
                self.stdout.write(RunDiscussion._line(obs))
                self.stdout.flush()
            room.refresh_from_db()
            if room.is_terminal and not Observation.objects.filter(room=room, seq__gt=seen).exists():
                self.stdout.write(f"\nThe demo discussion is {room.status} after {room.round} rounds.")
                return
            time.sleep(0.3)
        self.stdout.write("The demo discussion is still running; follow it in the browser.")
