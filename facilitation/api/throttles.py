"""Rate limits on creating discussions and on the lifecycle controls (429 + Retry-After).

Rates live in ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]`` under the scopes below and
are read on every request, so a test can override them with the ``settings`` fixture.
"""
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle

CREATE_SCOPE = "discussions.create"
LIFECYCLE_SCOPE = "discussions.lifecycle"


class ScopedThrottle(ScopedRateThrottle):
    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def allow_request(self, request, view):
        # ScopedRateThrottle sets ``self.rate`` from the class attribute; re-read it per request.
        self.scope = getattr(view, self.scope_attr, None)
        if not self.scope:
            return True
        self.rate = self.get_rate()
        if self.rate is None:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super(ScopedRateThrottle, self).allow_request(request, view)


class WriteThrottleMixin:
    """Throttle only the writing methods of a view (``throttle_scope`` names the rate)."""

    throttle_classes = [ScopedThrottle]

    def get_throttles(self):
        if self.request.method in ("GET", "HEAD", "OPTIONS"):
            return []
        return super().get_throttles()
