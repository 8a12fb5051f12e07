"""Running steps exactly once, for every kind of room.

- ``leases``: claim a room's step with one conditional UPDATE, check it, give it back.
- ``scheduling``: enqueue a step by task name once the transaction that made it ready commits.
- ``registry``: which planner decides a room kind's next step, which handler runs a step kind.
- ``calls``: one model call with a timeout, abandonment, and the retry-or-give-up rule.
- ``runner``: ``run_step``: claim, plan, dispatch to the registered handler.

Nothing here knows a room kind: discussions (``facilitation.discussions.steps``) and
workspaces (``facilitation.workspace.steps``) register their planner and handlers at app start.
"""
