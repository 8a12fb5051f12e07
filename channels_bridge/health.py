"""What /healthz says about the chat bridges: configured or not, and when each last heard something."""
from django.conf import settings


def bridges_status() -> dict:
    """``{"ok": True, "telegram": {...}, "teams": {...}}``. An unconfigured bridge is not a failure."""
    from channels_bridge.models import BotState

    b = settings.BRIDGES
    configured = {
        "telegram": bool(b["TELEGRAM_BOT_TOKEN"] and b["TELEGRAM_WEBHOOK_SECRET"]),
        "teams": bool(b["TEAMS_APP_ID"] and b["TEAMS_APP_PASSWORD"]),
    }
    try:
        states = {s.platform: s for s in BotState.objects.all()}
    except Exception as exc:  # no table yet: the schema check reports it
        return {"ok": True, "error": str(exc), **{p: {"configured": c} for p, c in configured.items()}}
    result = {"ok": True}
    for platform, is_configured in configured.items():
        state = states.get(platform)
        result[platform] = {
            "configured": is_configured,
            "lastUpdateAt": state.last_update_at.isoformat() if state and state.last_update_at else None,
            "lastSentAt": state.last_sent_at.isoformat() if state and state.last_sent_at else None,
        }
    return result
