from facilitation.tasks.goals import read_run_message, sweep_runs
from facilitation.tasks.steps import run_step_task, sweep_rooms
from facilitation.tasks.workspace import agent_round_task, close_round_task, round_timeout_task

__all__ = ["read_run_message", "run_step_task", "sweep_rooms", "sweep_runs", "agent_round_task", "close_round_task", "round_timeout_task"]
