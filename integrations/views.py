"""Thin views: a user's e-mail notifications and personal webhooks; a team's
webhooks (its administrators)."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.access import can_manage_integrations, can_view_team, integration_teams
from accounts.models import Team

from . import services
from .forms import NotificationForm, PersonalWebhookForm, WebhookForm
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
    return _index_page(request, form=form, hook_form=PersonalWebhookForm())


def _index_page(request, *, form, hook_form):
    teams = integration_teams(request.user)
    hooks = list(request.user.personal_webhooks.all())
    context = {"form": form, "teams": teams, "hook_form": hook_form, "rows": _with_last_delivery(hooks)}
    return render(request, "integrations/index.html", context)


def _with_last_delivery(hooks: list[Webhook]) -> list[tuple[Webhook, Delivery | None]]:
    last: dict[int, Delivery] = {}
    for delivery in Delivery.objects.filter(webhook__in=hooks).order_by("webhook_id", "-created_at", "-pk"):
        last.setdefault(delivery.webhook_id, delivery)
    return [(hook, last.get(hook.pk)) for hook in hooks]


@require_POST
def personal_webhook_add(request):
    """Add a webhook of one's own (the form sits on the notifications page)."""
    hook_form = PersonalWebhookForm(request.POST)
    if hook_form.is_valid():
        try:
            hook = services.create_personal_webhook(user=request.user, **hook_form.cleaned_data)
        except services.InvalidWebhookURL as exc:
            hook_form.add_error("url", str(exc))
        else:
            messages.success(request, _("Webhook added. Give its secret to the receiver."))
            return redirect("integrations:personal_webhook_detail", webhook=hook.pk)
    pref = NotificationPreference.objects.filter(user=request.user).first()
    initial = {"email": request.user.email, "events": pref.events if pref else []}
    return _index_page(request, form=NotificationForm(initial=initial), hook_form=hook_form)


def _personal_webhook(request, pk: int) -> Webhook:
    """One's own webhook; anyone else's (a team's included) is 404."""
    return get_object_or_404(Webhook, pk=pk, user=request.user)


def _detail_page(request, hook: Webhook, *, back_url: str, back_label: str, actions: dict[str, str]):
    deliveries = hook.deliveries.all()[:DELIVERIES_SHOWN]
    context = {"hook": hook, "deliveries": deliveries, "back_url": back_url, "back_label": back_label}
    return render(request, "integrations/webhook_detail.html", context | actions)


@require_GET
def personal_webhook_detail(request, webhook):
    hook = _personal_webhook(request, webhook)
    return _detail_page(
        request,
        hook,
        back_url=reverse("integrations:index") + "#personal-webhooks",
        back_label=_("Integrations"),
        actions={
            "test_url": reverse("integrations:personal_webhook_test", args=[hook.pk]),
            "delete_url": reverse("integrations:personal_webhook_delete", args=[hook.pk]),
        },
    )


@require_POST
def personal_webhook_test(request, webhook):
    hook = _personal_webhook(request, webhook)
    services.send_test(webhook=hook, user=request.user)
    messages.success(request, _("A test delivery was queued; its result appears in the log below."))
    return redirect("integrations:personal_webhook_detail", webhook=hook.pk)


@require_POST
def personal_webhook_delete(request, webhook):
    services.delete_webhook(webhook=_personal_webhook(request, webhook))
    messages.success(request, _("Webhook deleted."))
    return redirect(reverse("integrations:index") + "#personal-webhooks")


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
    rows = _with_last_delivery(list(team.webhooks.all()))
    return render(request, "integrations/webhook_list.html", {"team": team, "rows": rows, "form": form})


@require_GET
def webhook_detail(request, team, webhook):
    hook = _webhook(request, team, webhook)
    return _detail_page(
        request,
        hook,
        back_url=reverse("integrations:webhook_list", args=[hook.team.slug]),
        back_label=_("Webhooks of %(name)s") % {"name": hook.team.name},
        actions={
            "test_url": reverse("integrations:webhook_test", args=[hook.team.slug, hook.pk]),
            "delete_url": reverse("integrations:webhook_delete", args=[hook.team.slug, hook.pk]),
        },
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
