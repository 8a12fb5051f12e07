"""The one write path for rooms: every change to room data goes through these functions."""
