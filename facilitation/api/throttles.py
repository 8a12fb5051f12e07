"""Rate limits on the API (429 + Retry-After).

- Every writing request (POST, PUT, PATCH, DELETE) counts against the caller (``writes.user``)
  and against their address (``writes.ip``): the default throttles of every view.
- Creating discussions and the lifecycle controls have tighter scopes of their own.

Rates live in ``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]`` and are read on every request, so
a test can override them with the ``settings`` fixture; a scope without a rate is not limited.
Addresses come from ``rooms.ratelimit.client_ip`` (X-Forwarded-For only behind a trusted proxy).
"""
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle, SimpleRateThrottle

from rooms.ratelimit import client_ip

CREATE_SCOPE = "discussions.create"
LIFECYCLE_SCOPE = "discussions.lifecycle"
WRITES_USER_SCOPE = "writes.user"
WRITES_IP_SCOPE = "writes.ip"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


class _AddressMixin:
    def get_ident(self, request):
        return client_ip(request.META)


class ScopedThrottle(_AddressMixin, ScopedRateThrottle):
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


class _WriteThrottle(_AddressMixin, SimpleRateThrottle):
    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def allow_request(self, request, view):
        if request.method in SAFE_METHODS:
            return True
        self.rate = self.get_rate()
        if self.rate is None:
            return True
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)


class UserWriteThrottle(_WriteThrottle):
    scope = WRITES_USER_SCOPE

    def get_cache_key(self, request, view):
        user = request.user
        ident = f"u{user.pk}" if user is not None and user.is_authenticated else f"a{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}


class AddressWriteThrottle(_WriteThrottle):
    scope = WRITES_IP_SCOPE

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


WRITE_THROTTLES = [UserWriteThrottle, AddressWriteThrottle]


class WriteThrottleMixin:
    """Throttle only the writing methods of a view (``throttle_scope`` names the extra rate)."""

    throttle_classes = [ScopedThrottle, *WRITE_THROTTLES]

    def get_throttles(self):
        if self.request.method in SAFE_METHODS:
            return []
        return super().get_throttles()
