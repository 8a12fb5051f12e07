from facilitation.tasks.steps import run_step_task, sweep_rooms

__all__ = ["run_step_task", "sweep_rooms"]
