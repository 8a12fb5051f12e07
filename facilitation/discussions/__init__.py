"""Discussion rooms: their planner and step handlers (registered with ``facilitation.runs`` at app start)."""
