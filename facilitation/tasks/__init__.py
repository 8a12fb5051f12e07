from facilitation.tasks.goals import read_run_message, sweep_runs
from facilitation.tasks.steps import run_step_task, sweep_rooms

__all__ = ["read_run_message", "run_step_task", "sweep_rooms", "sweep_runs"]
