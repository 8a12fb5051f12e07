"""Workspace rooms: agents publish typed observations in rounds, a narrative sums up each round,
a human manager edits narratives, runs tasks, swaps personas and closes the scope.

- ``actions/``: the one write path (observations, rounds, narratives, tasks, seats, scope, adaptation)
- ``steps.py``: the planner and step handlers on the shared step mechanism (``facilitation.runs``)
- ``rounds.py``: what a worker does for one agent seat in a round, and for the round's narrative
- ``search.py``: ranked full-text search over a room (SQLite FTS5 / PostgreSQL), optional semantic re-rank
- ``adaptation.py``: what an (agent, persona) pair learns from a round (pure)
- ``payloads.py``: the JSON shapes shared by events and the REST API
"""
