"""Teams, memberships and worker heartbeats.

A user sees the snapshots, sessions and cases of the teams they belong to.
Support staff (role ``support`` or ``admin`` in any team, or a superuser) see
every team: they are the ones who answer tickets across customers.
"""

import hashlib
import hmac
import re

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _


def validate_pattern(value: str) -> None:
    """A team's ticket key pattern must be a regular expression Python compiles."""
    try:
        re.compile(value)
    except re.error as exc:
        raise ValidationError(_("Not a regular expression: %(error)s"), params={"error": exc}) from exc


class Team(models.Model):
    name = models.CharField(_("name"), max_length=120, unique=True)
    slug = models.SlugField(_("slug"), max_length=120, unique=True)
    description = models.TextField(_("description"), blank=True)
    # A regular expression for this team's ticket keys in a paste (the first
    # lines of an upload); blank means Jira-style keys (triage.tickets.DEFAULT_KEY_PATTERN).
    ticket_pattern = models.CharField(
        _("ticket key pattern"),
        max_length=200,
        blank=True,
        help_text=_("A regular expression; blank for Jira-style keys such as OPS-123."),
        validators=[validate_pattern],
    )
    created_at = models.DateTimeField(_("created"), auto_now_add=True)
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="teams", verbose_name=_("members")
    )

    class Meta:
        ordering = ["name"]
        verbose_name = _("team")
        verbose_name_plural = _("teams")

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    class Role(models.TextChoices):
        ENGINEER = "engineer", _("Engineer")
        SUPPORT = "support", _("Support")
        ADMIN = "admin", _("Administrator")

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships", verbose_name=_("user")
    )
    team = models.ForeignKey(
        Team, on_delete=models.CASCADE, related_name="memberships", verbose_name=_("team")
    )
    role = models.CharField(_("role"), max_length=16, choices=Role.choices, default=Role.ENGINEER)
    joined_at = models.DateTimeField(_("joined"), auto_now_add=True)

    class Meta:
        ordering = ["team__name", "user__username"]
        constraints = [models.UniqueConstraint(fields=["user", "team"], name="membership_unique_user_team")]
        verbose_name = _("membership")
        verbose_name_plural = _("memberships")

    def __str__(self) -> str:
        return f"{self.user} @ {self.team} ({self.role})"


class WorkerHeartbeat(models.Model):
    """One round trip through the task queue: written when requested, completed
    by whichever worker ran it. /healthz and ``manage.py heartbeat`` read it to
    tell whether a worker is alive, which the broker status alone cannot."""

    requested_at = models.DateTimeField(_("requested"), auto_now_add=True)
    completed_at = models.DateTimeField(_("completed"), null=True, blank=True)
    worker = models.CharField(_("worker"), max_length=255, blank=True)

    class Meta:
        ordering = ["-requested_at", "-id"]
        get_latest_by = "requested_at"
        verbose_name = _("worker heartbeat")
        verbose_name_plural = _("worker heartbeats")

    def __str__(self) -> str:
        state = f"answered by {self.worker}" if self.completed_at else "pending"
        return f"heartbeat {self.pk} ({state})"


class ApiToken(models.Model):
    """A user's REST API key. Only its SHA-256 is stored: the key itself is
    shown once, when it is made, and a copy of the database authenticates no
    one. Keys are 160 random bits, so an unsalted hash is enough (nothing to
    guess from it) and lets a request find its token by one indexed lookup."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_token", verbose_name=_("user")
    )
    key_hash = models.CharField(_("key hash"), max_length=64, unique=True, editable=False)
    prefix = models.CharField(_("key prefix"), max_length=8, editable=False)
    created = models.DateTimeField(_("created"), auto_now_add=True)

    class Meta:
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"

    @staticmethod
    def hash_key(key: str) -> str:
        return hashlib.sha256(key.encode("utf-8")).hexdigest()

    def matches(self, key: str) -> bool:
        return hmac.compare_digest(self.key_hash, self.hash_key(key))
