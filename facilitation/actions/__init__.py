"""The one write path of the engine: lifecycle controls and step commits."""
