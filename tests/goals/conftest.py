"""The chat bridges' fixtures (fake platforms on loopback, tasks run in-process) for facilitation runs."""
from tests.channels_bridge.conftest import _bridge_env, post_teams, post_telegram, run_tasks, teams, telegram  # noqa: F401
