"""The account pages: your API tokens, created (the key shown once) and revoked from the browser, and
your linked chat accounts (the page talks to ``/api/me/chat-identities``)."""
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from rooms.actions.tokens import do_create_token, do_revoke_token
from rooms.errors import ValidationFailed
from rooms.models import ApiToken
from rooms.tokens import default_days, live_tokens, max_days


def _render(request, *, new_key=None, new_token=None, error=None, status=200):
    return render(request, "frontend/tokens.html", {
        "tokens": live_tokens().filter(user=request.user).order_by("-created_at", "-id")[:100],
        "new_key": new_key, "new_token": new_token, "error": error,
        "default_days": default_days(), "max_days": max_days(),
    }, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def tokens(request):
    if request.method == "GET":
        return _render(request)
    if request.POST.get("action") == "revoke":
        raw = request.POST.get("token_id", "")
        token = ApiToken.objects.filter(pk=int(raw), user=request.user).first() if raw.isascii() and raw.isdigit() and len(raw) < 19 else None
        if token is not None:
            do_revoke_token(token, actor=request.user)
        return redirect("frontend:tokens")
    raw_days = request.POST.get("days", "").strip()
    try:
        days = int(raw_days) if raw_days else None
        token, key = do_create_token(request.user, name=request.POST.get("name", ""), days=days)
    except (ValueError, ValidationFailed):
        return _render(request, error=f"Give a name of at most 100 characters and 1 to {max_days()} days.", status=400)
    return _render(request, new_key=key, new_token=token)


@login_required
def chats(request):
    return render(request, "frontend/chats.html")
