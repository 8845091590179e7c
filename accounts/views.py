"""Thin views: the dashboard, the profile page and API token management."""

from django.conf import settings
from django.contrib import messages
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from . import services
from .access import is_support, visible_teams
from .models import ApiToken, Membership

NEW_TOKEN_SESSION_KEY = "accounts.new_api_token"  # noqa: S105 (a session key name, not a secret)


@require_GET
def dashboard(request):
    memberships = Membership.objects.filter(user=request.user).select_related("team")
    context = {
        "memberships": memberships,
        "visible_teams": visible_teams(request.user),
        "is_support": is_support(request.user),
        "last_worker_contact": services.last_worker_contact(),
        # The embedded default has no broker: analyses run inside the web process.
        "tasks_in_process": settings.CELERY_TASK_ALWAYS_EAGER,
    }
    return render(request, "accounts/dashboard.html", context)


@require_GET
def teams_help(request):
    """How an administrator creates teams and users (the dashboard links here)."""
    return render(
        request,
        "accounts/teams_help.html",
        {"roles": Membership.Role.choices, "is_admin_user": request.user.is_staff},
    )


@require_GET
def profile(request):
    token = ApiToken.objects.filter(user=request.user).first()
    # A new key is shown in full once, right after it was made; afterwards only
    # its prefix, so a screen share of the profile page does not leak it.
    new_key = request.session.pop(NEW_TOKEN_SESSION_KEY, None)
    context = {
        "token": token,
        "new_key": new_key if token and new_key and token.matches(new_key) else None,
        "memberships": Membership.objects.filter(user=request.user).select_related("team"),
        "is_support": is_support(request.user),
        "api_root": request.build_absolute_uri("/api/v1/"),
    }
    return render(request, "accounts/profile.html", context)


@require_POST
def token_create(request):
    new = services.rotate_api_token(user=request.user)
    # Kept in the session until the profile page shows it, once.
    request.session[NEW_TOKEN_SESSION_KEY] = new.key
    messages.success(request, _("A new API token was created. Any previous token no longer works."))
    return redirect("accounts:profile")


@require_POST
def token_revoke(request):
    if services.revoke_api_token(user=request.user):
        messages.success(request, _("Your API token was revoked."))
    else:
        messages.info(request, _("You had no API token."))
    return redirect("accounts:profile")


def locked_out(request, original_response=None, credentials=None):
    """django-axes' answer once an account or address reached the failure
    limit (settings.AXES_LOCKOUT_CALLABLE): a styled page saying for how long."""
    cooloff = settings.AXES_COOLOFF_TIME
    minutes = max(1, -(-int(cooloff.total_seconds()) // 60)) if cooloff else 0
    response = render(
        request,
        "registration/locked_out.html",
        {"failure_limit": settings.CASEBOOK_LOGIN_FAILURE_LIMIT, "minutes": minutes},
        status=429,
    )
    if cooloff:
        response["Retry-After"] = str(int(cooloff.total_seconds()))
    return response
