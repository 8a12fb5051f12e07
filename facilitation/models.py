"""The facilitation app's models: the engine's step leases (``facilitation.runs.models``)."""
from facilitation.runs.models import StepLease

__all__ = ["StepLease"]
