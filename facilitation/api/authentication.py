"""``Authorization: Token <key>``: the key is looked up by its digest (``rooms.tokens``).

``Bearer <key>`` is taken the same way, as the HTTP clients that only know bearer tokens send it.

Unknown, expired or revoked keys are counted per client address; past the limit
(``CONVENE_RATE_LIMITS["bad_token_ip"]``) that address gets 429 before any lookup.
"""
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header

from rooms import ratelimit
from rooms.tokens import token_for_key

KEYWORD = "Token"
#: The schemes a key may come under (compared without case).
SCHEMES = (b"token", b"bearer")


class TokenAuthentication(BaseAuthentication):
    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() not in SCHEMES:
            return None
        ip = ratelimit.client_ip(request.META)
        limit, window = ratelimit.rate("bad_token_ip")
        wait = ratelimit.wait_if_over("bad-token", ip, limit, window)
        if wait:
            raise exceptions.Throttled(wait, detail="Too many invalid tokens from your address; try again later.")
        token = None
        if len(parts) == 2:
            try:
                token = token_for_key(parts[1].decode("ascii"))
            except UnicodeError:
                token = None
        if token is None:
            ratelimit.hit("bad-token", ip, window)
            raise exceptions.AuthenticationFailed("Invalid, expired or revoked token.")
        return token.user, token

    def authenticate_header(self, request):
        return KEYWORD


try:
    from drf_spectacular.extensions import OpenApiAuthenticationExtension
except ImportError:  # pragma: no cover - the schema is optional at runtime
    OpenApiAuthenticationExtension = None

if OpenApiAuthenticationExtension is not None:
    class TokenScheme(OpenApiAuthenticationExtension):
        target_class = TokenAuthentication
        name = "tokenAuth"

        def get_security_definition(self, auto_schema):
            return {"type": "apiKey", "in": "header", "name": "Authorization",
                    "description": 'An API token with the prefix "Token", e.g. `Token cvn_...` '
                                   "(GET/POST /api/me/tokens, or `python manage.py create_api_token`)."}
