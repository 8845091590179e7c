"""The inbox: what waits for one person (a review asked of them, a case
returned to them, a session given to them, a comment naming them, an analysis
of their upload that found something critical, a new case or rule that
matches their team's stored hosts)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class InboxItem(models.Model):
    class Kind(models.TextChoices):
        REVIEW_REQUESTED = "review_requested", _("review requested")
        CASE_RETURNED = "case_returned", _("case returned")
        SESSION_ASSIGNED = "session_assigned", _("session assigned")
        MENTION = "mention", _("mentioned")
        CRITICAL_FINDING = "critical_finding", _("critical finding")
        HOSTS_MATCHED = "hosts_matched", _("new knowledge matches your hosts")

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="inbox_items")
    kind = models.CharField(max_length=24, choices=Kind.choices)
    # What the item is about, in the reader-independent words of the event
    # (a case title, a session title, a snapshot name); shown escaped.
    title = models.CharField(max_length=300)
    detail = models.TextField(blank=True)
    url = models.CharField(max_length=500)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # One item per event and person: "<kind>:<object>:<event id>".
    key = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="inbox_item_once")]
        indexes = [models.Index(fields=["user", "read_at", "created_at"], name="inbox_unread")]

    def __str__(self) -> str:
        return f"{self.user}: {self.kind} {self.title}"
