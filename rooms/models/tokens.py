"""API tokens: only a digest of each key is stored; the key itself is shown once, at creation."""
from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=12, help_text="The key's first characters, to recognise it in a list.")
    digest = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the key (hex).")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.prefix}… ({self.name or 'token'})"
