"""Webhooks, their delivery log, e-mail notification preferences and the
cross-process counters ``/metrics`` reads (docs/integrations.md)."""

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Event(models.TextChoices):
    """The events a webhook or an e-mail can be sent for. The values are a
    public contract (receivers switch on them): never rename one."""

    ANALYSIS_DONE = "analysis.done", _("analysis done")
    ANALYSIS_FAILED = "analysis.failed", _("analysis failed")
    SESSION_CLOSED = "session.closed", _("session closed")
    CASE_PUBLISHED = "case.published", _("case published")
    CASE_MATCHES_HOSTS = "case.matches_hosts", _("a published case matches our hosts")
    RULE_MATCHES_HOSTS = "rule.matches_hosts", _("a new or changed rule matches our hosts")


class PersonalEvent(models.TextChoices):
    """Events about one person rather than a team: mailed to them when they
    opt in on their notification preferences, and posted to their personal
    webhooks subscribed to it. Public like ``Event``."""

    INBOX_ITEM = "inbox.item", _("something waits for me in my inbox")


# Sent only by the "send test" button; not subscribable.
TEST_EVENT = "webhook.test"


class Webhook(models.Model):
    """A receiver of signed JSON POSTs: a team's (its ``Event`` s, managed by
    the team's administrators) or one person's (``user``: their
    ``PersonalEvent`` s, managed by them alone). Exactly one of the two is set."""

    team = models.ForeignKey(
        "accounts.Team",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="webhooks",
        verbose_name=_("team"),
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="personal_webhooks",
        verbose_name=_("user"),
    )
    url = models.URLField(_("URL"), max_length=500)
    # Shared with the receiver to check X-Casebook-Signature; shown to managers.
    secret = models.CharField(_("secret"), max_length=128)
    events = models.JSONField(_("events"), default=list)
    active = models.BooleanField(_("active"), default=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        ordering = ["team__name", "pk"]
        verbose_name = _("webhook")
        verbose_name_plural = _("webhooks")
        constraints = [
            models.CheckConstraint(
                condition=models.Q(team__isnull=False, user__isnull=True)
                | models.Q(team__isnull=True, user__isnull=False),
                name="webhook_of_a_team_or_a_user",
            )
        ]

    def __str__(self) -> str:
        return f"{self.team or self.user} -> {self.url}"


class Delivery(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", _("pending")
        RETRYING = "retrying", _("retrying")
        DELIVERED = "delivered", _("delivered")
        FAILED = "failed", _("failed")

    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(_("event"), max_length=40)
    payload = models.JSONField(_("payload"), default=dict)
    status = models.CharField(_("status"), max_length=12, choices=Status.choices, default=Status.PENDING)
    status_code = models.PositiveSmallIntegerField(_("last status code"), null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(_("attempts"), default=0)
    error = models.TextField(_("last error"), blank=True)
    # [{"at": iso time, "status_code": int|None, "error": str, "ms": int}, ...] one per POST
    attempt_log = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    last_attempt_at = models.DateTimeField(_("last attempt"), null=True, blank=True)
    delivered_at = models.DateTimeField(_("delivered"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        verbose_name = _("delivery")
        verbose_name_plural = _("deliveries")

    def __str__(self) -> str:
        return f"{self.event} -> {self.webhook_id} ({self.status})"


class NotificationPreference(models.Model):
    """Opt-in e-mail notifications: the events a user wants to be mailed
    about, for the teams they belong to. No row: no e-mail."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_preference"
    )
    events = models.JSONField(_("events"), default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.user}: {', '.join(self.events) or '-'}"


class Counter(models.Model):
    """A monotonically increasing count shared by every process (web, workers,
    beat): events that leave no row of their own, such as the sweeper's
    re-queues, are counted here and exported by ``/metrics``."""

    name = models.CharField(max_length=80, unique=True)
    value = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.name}={self.value}"
