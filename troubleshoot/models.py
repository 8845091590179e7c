"""Guided troubleshooting sessions (the wizard).

A :class:`Session` is one incident worked from symptom to verified fix, owned
by an engineer and readable by the engineer's team. It links the snapshots
taken before and after the fix, the measures planned and applied (a ledger:
applying is recorded, never executed by the app) and an append-only
:class:`AuditEntry` trail of every change. Writes go through
the service modules (``troubleshoot.lifecycle``, ``people``, ``snapshots``,
``planning``, ``apply``, ``promotion``), each writing ``troubleshoot.audit``, so that
nothing changes without a trail entry.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils.translation import gettext_lazy as _


class Step(models.TextChoices):
    PROBLEM = "problem", _("Problem")
    SNAPSHOTS = "snapshots", _("Snapshots")
    FINDINGS = "findings", _("Findings and similar cases")
    CONSTRAINTS = "constraints", _("Constraints")
    PLAN = "plan", _("Plan")
    APPLY = "apply", _("Apply")
    VERIFY = "verify", _("Verify")
    CLOSE = "close", _("Close")


STEP_ORDER = [s.value for s in Step]


class Session(models.Model):
    class State(models.TextChoices):
        OPEN = "open", _("open")
        CLOSED = "closed", _("closed")

    class Outcome(models.TextChoices):
        RESOLVED = "resolved", _("resolved")
        PARTLY = "partly", _("partly resolved")
        NOT_RESOLVED = "not resolved", _("not resolved")

    class Direction(models.TextChoices):
        LOWER = "lower", _("lower is better (a duration)")
        HIGHER = "higher", _("higher is better (a throughput)")

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="troubleshoot_sessions"
    )
    # The owner's team when the session was opened: its members share the session.
    team = models.ForeignKey(
        "accounts.Team",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="troubleshoot_sessions",
    )
    title = models.CharField(_("title"), max_length=200)
    step = models.CharField(max_length=16, choices=Step.choices, default=Step.PROBLEM)
    state = models.CharField(max_length=10, choices=State.choices, default=State.OPEN, db_index=True)

    # 1. Problem
    symptom = models.TextField(_("symptom"), blank=True)
    workload = models.CharField(_("workload"), max_length=200, blank=True)
    platform = models.CharField(_("platform"), max_length=100, blank=True)
    database = models.CharField(_("database"), max_length=100, blank=True)
    metric_name = models.CharField(_("metric"), max_length=200, blank=True)
    metric_unit = models.CharField(_("unit"), max_length=30, blank=True)
    metric_baseline = models.FloatField(_("baseline"), null=True, blank=True)
    metric_expected = models.CharField(_("expected value"), max_length=100, blank=True)
    metric_direction = models.CharField(
        _("better when"), max_length=8, choices=Direction.choices, default=Direction.LOWER
    )

    # 4. Constraints
    guest_reboot_allowed = models.BooleanField(_("guest reboot allowed"), default=False)
    host_reboot_allowed = models.BooleanField(_("host reboot allowed"), default=False)
    service_restart_allowed = models.BooleanField(_("service restart allowed"), default=True)
    other_workloads = models.BooleanField(_("other workloads on the host"), default=False)
    change_approval = models.BooleanField(_("change approval needed"), default=False)
    maintenance_window = models.CharField(_("maintenance window"), max_length=200, blank=True)

    # 7. Verify: the metric measured on the after-snapshot
    metric_after = models.FloatField(_("metric after"), null=True, blank=True)

    # 8. Close
    outcome = models.CharField(_("outcome"), max_length=16, choices=Outcome.choices, blank=True)
    root_cause = models.TextField(_("root cause"), blank=True)
    lessons = models.TextField(_("lessons"), blank=True)
    promoted_case = models.ForeignKey(
        "kb.Case", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    linked_case = models.ForeignKey(
        "kb.Case", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    snapshots = models.ManyToManyField(
        "triage.Snapshot", through="SessionSnapshot", related_name="troubleshoot_sessions", blank=True
    )

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    # who works the session now (the owner opened it)
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="assigned_sessions",
        verbose_name=_("assignee"),
    )

    class Meta:
        ordering = ["-updated_at", "-id"]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("troubleshoot:step", args=[self.pk, self.step])

    @property
    def is_closed(self) -> bool:
        return self.state == self.State.CLOSED


class SessionSnapshot(models.Model):
    class Phase(models.TextChoices):
        BEFORE = "before", _("before")
        AFTER = "after", _("after")

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="attachments")
    snapshot = models.ForeignKey("triage.Snapshot", on_delete=models.CASCADE, related_name="+")
    # The default lets an attachment through the ``snapshots`` M2M be "before".
    phase = models.CharField(max_length=8, choices=Phase.choices, default=Phase.BEFORE)
    attached_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["phase", "attached_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["session", "snapshot"], name="troubleshoot_snapshot_once"),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}: {self.snapshot_id} ({self.phase})"


class PlannedMeasure(models.Model):
    class Status(models.TextChoices):
        PLANNED = "planned", _("planned")
        APPLIED = "applied", _("applied")
        SKIPPED = "skipped", _("skipped")
        FAILED = "failed", _("failed")
        ROLLED_BACK = "rolled back", _("rolled back")

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="measures")
    measure = models.ForeignKey("kb.Measure", on_delete=models.PROTECT, related_name="+")
    # 1: do first; 2: add when the target is not met; 3: later / optional
    tier = models.PositiveSmallIntegerField(default=1)
    position = models.PositiveIntegerField(default=0)
    commands = models.TextField(_("commands or configuration"), blank=True)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PLANNED)
    change_made = models.TextField(_("change actually made"), blank=True)
    notes = models.TextField(_("notes"), blank=True)
    metric_after = models.FloatField(_("metric after"), null=True, blank=True)
    # Measures applied together share one step number (1, 2, ... in the order
    # applied) and one metric_after, measured once after the whole step; the
    # services keep the metric equal across a step. None until applied.
    step = models.PositiveIntegerField(_("applied in step"), null=True, blank=True)
    applied_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    applied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["session", "tier", "position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["session", "measure"], name="troubleshoot_measure_once"),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}: {self.measure.slug} ({self.status})"


class Comment(models.Model):
    """A note on a session by anyone who may edit it; only ever added."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    text = models.TextField(_("comment"))
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.session_id}: {self.author} {self.created_at:%Y-%m-%d %H:%M}"


class AuditEntry(models.Model):
    """One change: who, when, what, old -> new. Rows are only ever added.
    An entry belongs to a session, or to a finding acknowledgement (made on a
    report, outside any session)."""

    session = models.ForeignKey(
        Session, on_delete=models.CASCADE, null=True, blank=True, related_name="audit"
    )
    acknowledgement = models.ForeignKey(
        "triage.Acknowledgement", on_delete=models.CASCADE, null=True, blank=True, related_name="audit"
    )
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    at = models.DateTimeField(auto_now_add=True, db_index=True)
    # "created", "step", "field", "snapshot", "measure", "measure.status", "metric", "promote" ...
    action = models.CharField(max_length=30)
    target = models.CharField(max_length=120, blank=True)  # a field name or measure slug
    old = models.TextField(blank=True)
    new = models.TextField(blank=True)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return (
            f"{self.at:%Y-%m-%d %H:%M} {self.user}: {self.action} {self.target} {self.old!r} -> {self.new!r}"
        )
