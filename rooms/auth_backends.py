"""Password sign-in with a limit on failures (every sign-in form: the site's and the admin's).

Failures are counted per username, per client address and per (username, address) pair
(``CONVENE_RATE_LIMITS["signin_*"]``). Past a limit the right password is refused too until
the window ends: guessing stops, and the form says when to try again.
"""
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied

from rooms import ratelimit


def _counters(request, username: str) -> list[tuple[str, str, str]]:
    """(scope, key, limit name) for each counter that applies."""
    name = (username or "").strip().lower()[:150]
    ip = ratelimit.client_ip(request.META) if request is not None else "no-request"
    return [("signin-user", name, "signin_user"), ("signin-ip", ip, "signin_ip"),
            ("signin-pair", f"{ip}|{name}", "signin_pair")]


def signin_wait(request, username: str) -> int:
    """Seconds until this username may try to sign in from this address again (0: now)."""
    waits = [0]
    for scope, key, limit_name in _counters(request, username):
        limit, window = ratelimit.rate(limit_name)
        waits.append(ratelimit.wait_if_over(scope, key, limit, window))
    return max(waits)


class ThrottledModelBackend(ModelBackend):
    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is None:
            username = kwargs.get(get_user_model().USERNAME_FIELD)
        wait = signin_wait(request, username)
        if wait:
            if request is not None:
                request.signin_wait = wait
            raise PermissionDenied("Too many failed sign-ins.")  # stops every backend; counted as a failure
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is None and password is not None:
            for scope, key, limit_name in _counters(request, username):
                ratelimit.hit(scope, key, ratelimit.rate(limit_name)[1])
        return user
