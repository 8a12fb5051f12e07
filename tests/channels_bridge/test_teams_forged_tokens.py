"""Tokens the Bot Connector never signed, besides those in test_teams.py: unsigned, ``alg: none``, a signed token
whose claims were changed, a token that is not valid yet, one without an expiry."""
import base64
import json
import time

import pytest

from channels_bridge.models import InboundUpdate
from rooms import dispatch

pytestmark = pytest.mark.django_db


def _part(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


@pytest.mark.parametrize("forge", ["alg-none", "alg-none-known-kid", "unsigned", "claims-changed", "not-yet-valid",
                                   "no-expiry", "lowercase-alg"])
def test_a_token_the_connector_did_not_sign_is_401_and_changes_nothing(teams, post_teams, forge):
    activity = teams.message(teams.conversation("19:forged@thread.v2", "groupChat"), teams.account(1, "Ana"), "hello")
    claims = {"iss": "https://api.botframework.com", "aud": teams.app_id, "exp": int(time.time()) + 600,
              "serviceurl": teams.service_url}
    header, payload, signature = teams.sign().split(".")
    kid = teams.keys[-1].kid
    token = {
        "alg-none": f"{_part({'alg': 'none', 'typ': 'JWT'})}.{_part(claims)}.",
        "alg-none-known-kid": f"{_part({'alg': 'none', 'kid': kid})}.{_part(claims)}.",
        "unsigned": f"{header}.{payload}.",
        "claims-changed": f"{header}.{_part({**claims, 'serviceurl': 'https://attacker.example/'})}.{signature}",
        "not-yet-valid": teams.sign(nbf=int(time.time()) + 3600),
        "no-expiry": None,
        "lowercase-alg": f"{_part({'alg': 'rs256', 'kid': kid})}.{payload}.{signature}",
    }[forge]
    if forge == "no-expiry":
        import jwt

        token = jwt.encode({k: v for k, v in claims.items() if k != "exp"}, teams.keys[-1].private, algorithm="RS256",
                           headers={"kid": kid})
    if forge == "claims-changed":
        activity["serviceUrl"] = "https://attacker.example/"
    assert post_teams(activity, authorization=f"Bearer {token}").status_code == 401
    assert InboundUpdate.objects.count() == 0 and dispatch.sent == [] and teams.activities == []
