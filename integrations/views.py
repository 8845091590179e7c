"""Thin views: a user's e-mail notifications; a team's webhooks (its administrators)."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.access import can_manage_integrations, can_view_team, integration_teams
from accounts.models import Team

from . import services
from .forms import NotificationForm, WebhookForm
from .models import Delivery, NotificationPreference, Webhook

DELIVERIES_SHOWN = 100


@require_http_methods(["GET", "POST"])
def index(request):
    pref = NotificationPreference.objects.filter(user=request.user).first()
    initial = {"email": request.user.email, "events": pref.events if pref else []}
    form = NotificationForm(request.POST if request.method == "POST" else None, initial=initial)
    if request.method == "POST" and form.is_valid():
        services.set_notification_events(
            user=request.user, events=form.cleaned_data["events"], email=form.cleaned_data["email"]
        )
        messages.success(request, _("Your e-mail notifications were saved."))
        return redirect("integrations:index")
    teams = integration_teams(request.user)
    return render(request, "integrations/index.html", {"form": form, "teams": teams})


def _managed_team(request, slug: str) -> Team:
    """The team, when the user may manage its webhooks: 404 when the team is
    not visible to them (as for any other object of another team), 403 for
    those who see it but are not its administrators."""
    team = Team.objects.filter(slug=slug).first()
    if team is None or not can_view_team(request.user, team):
        raise Http404
    if not can_manage_integrations(request.user, team):
        raise PermissionDenied
    return team


def _webhook(request, slug: str, pk: int) -> Webhook:
    team = _managed_team(request, slug)
    return get_object_or_404(Webhook.objects.select_related("team"), pk=pk, team=team)


@require_http_methods(["GET", "POST"])
def webhook_list(request, team):
    team = _managed_team(request, team)
    form = WebhookForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            webhook = services.create_webhook(team=team, user=request.user, **form.cleaned_data)
        except services.InvalidWebhookURL as exc:
            form.add_error("url", str(exc))
        else:
            messages.success(request, _("Webhook added. Give its secret to the receiver."))
            return redirect("integrations:webhook_detail", team=team.slug, webhook=webhook.pk)
    hooks = list(team.webhooks.all())
    last = {}
    for delivery in Delivery.objects.filter(webhook__in=hooks).order_by("webhook_id", "-created_at", "-pk"):
        last.setdefault(delivery.webhook_id, delivery)
    rows = [(hook, last.get(hook.pk)) for hook in hooks]
    return render(request, "integrations/webhook_list.html", {"team": team, "rows": rows, "form": form})


@require_GET
def webhook_detail(request, team, webhook):
    hook = _webhook(request, team, webhook)
    deliveries = hook.deliveries.all()[:DELIVERIES_SHOWN]
    return render(
        request,
        "integrations/webhook_detail.html",
        {"team": hook.team, "hook": hook, "deliveries": deliveries},
    )


@require_POST
def webhook_test(request, team, webhook):
    hook = _webhook(request, team, webhook)
    services.send_test(webhook=hook, user=request.user)
    messages.success(request, _("A test delivery was queued; its result appears in the log below."))
    return redirect("integrations:webhook_detail", team=hook.team.slug, webhook=hook.pk)


@require_POST
def webhook_delete(request, team, webhook):
    hook = _webhook(request, team, webhook)
    slug = hook.team.slug
    services.delete_webhook(webhook=hook)
    messages.success(request, _("Webhook deleted."))
    return redirect("integrations:webhook_list", team=slug)
