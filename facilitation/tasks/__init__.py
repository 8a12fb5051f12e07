from facilitation.tasks.goals import sweep_runs
from facilitation.tasks.steps import run_step_task, sweep_rooms
from facilitation.tasks.workspace import agent_round_task, close_round_task, round_timeout_task

__all__ = ["run_step_task", "sweep_rooms", "sweep_runs", "agent_round_task", "close_round_task", "round_timeout_task"]
