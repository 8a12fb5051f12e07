"""Structured deliberation: markers, votes and the shape of a discussion's record."""
from facilitation.deliberation.markers import MARKER_TYPES, VOTE_VALUES, parse_markers

__all__ = ["MARKER_TYPES", "VOTE_VALUES", "parse_markers"]
