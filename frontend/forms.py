"""The sign-in form: says when to try again once failures are throttled (rooms.auth_backends)."""
import math

from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError


class SignInForm(AuthenticationForm):
    def clean(self):
        try:
            return super().clean()
        except ValidationError:
            wait = getattr(self.request, "signin_wait", 0)
            if wait:
                minutes = max(1, math.ceil(wait / 60))
                raise ValidationError(f"Too many failed sign-ins. Try again in {minutes} minute{'s' if minutes != 1 else ''}.",
                                      code="throttled") from None
            raise
