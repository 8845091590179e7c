"""Snapshots and their findings.

A :class:`Snapshot` is one uploaded host snapshot (collector archive, sosreport,
transcript or single artifact). The upload is stored through Django's storage
API before the row exists; a Celery worker parses it, runs the rule engine and
writes :class:`Finding` rows. Findings are keyed by engine version so that a
re-analysis by a newer engine replaces only its own set.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _


class Snapshot(models.Model):
    class Kind(models.TextChoices):
        COLLECTOR = "collector", _("Collector archive")
        SOSREPORT = "sosreport", _("sosreport")
        TRANSCRIPT = "transcript", _("Transcript")
        ARTIFACT = "artifact", _("Single artifact")

    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        ANALYZING = "analyzing", _("Analyzing")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="snapshots")
    # The owner's team at upload time: team members can read the snapshot.
    team = models.ForeignKey(
        "accounts.Team", on_delete=models.SET_NULL, null=True, blank=True, related_name="snapshots"
    )
    label = models.CharField(_("label"), max_length=200, blank=True)
    # A free-form cluster name: snapshots of one owner/team sharing it are
    # analysed together so the fleet rules can compare hosts.
    cluster = models.CharField(_("cluster"), max_length=200, blank=True, db_index=True)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.ARTIFACT)
    original_filename = models.CharField(max_length=255, blank=True)
    sha256 = models.CharField(max_length=64)
    size = models.BigIntegerField()
    file = models.FileField(upload_to="snapshots/", max_length=500)

    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    engine_version = models.CharField(max_length=32, blank=True)

    created_at = models.DateTimeField(auto_now_add=True)
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    parse_seconds = models.FloatField(null=True, blank=True)
    rules_seconds = models.FloatField(null=True, blank=True)

    # [{"artifact": ..., "message": ..., "line": ...}]: artifacts that could not be parsed
    errors = models.JSONField(default=list, blank=True)
    # collectors.facts.to_dict(HostFacts)
    facts = models.JSONField(default=dict, blank=True)
    # [{"rule": ..., "reason": ...}]
    skipped = models.JSONField(default=list, blank=True)
    # [{"slug": ..., "score": 0..1, "shared_rules": [...], ...}]
    similar_cases = models.JSONField(default=list, blank=True)
    # rule IDs evaluated, and [{rule, reason, reason_zh, commands, host}] that could not be
    checked = models.JSONField(default=list, blank=True)
    not_checked = models.JSONField(default=list, blank=True)
    # further hosts of the same upload (a paste that ssh-es from a host to its
    # guest): HostFacts dicts like ``facts``
    extra_hosts = models.JSONField(default=list, blank=True)
    # earlier analyses replaced after evidence was added, oldest first:
    # [{"engine_version", "finished_at", "reason", "findings": [{rule, severity, host, title, title_zh}]}]
    history = models.JSONField(default=list, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    # The lease of a running analysis: who runs it (``host:pid:token``) and until
    # when; the worker renews it while it works, and the sweeper re-queues an
    # ``analyzing`` snapshot only once its lease has expired (worker gone).
    lease_owner = models.CharField(max_length=255, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "sha256"], name="snapshot_unique_owner_sha256"),
        ]
        indexes = [models.Index(fields=["status", "queued_at"], name="snapshot_status_queued")]

    # What lists show of a snapshot (the snapshot list, the dashboard, the
    # wizard's tables and pickers): ``.only(*SUMMARY_FIELDS)`` keeps the facts
    # and other JSON (megabytes per snapshot) out of those queries.
    SUMMARY_FIELDS = (
        "label",
        "original_filename",
        "status",
        "cluster",
        "kind",
        "created_at",
        "engine_version",
        "last_error",
        "owner",
        "team",
        "not_checked",  # a few entries: the list says "N rules not checked"
    )

    def __str__(self) -> str:
        return self.display_name

    def get_absolute_url(self) -> str:
        from django.urls import reverse

        return reverse("triage:snapshot_detail", args=[self.pk])

    @property
    def display_name(self) -> str:
        return self.label or self.original_filename or f"snapshot {self.pk}"

    @property
    def host_label(self) -> str:
        """The label the analysis gives this snapshot's host; unique per snapshot
        so findings of a cluster run can be attributed back."""
        return self.label or self.original_filename or f"snapshot-{self.pk}"

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)

    @property
    def duration_seconds(self) -> float | None:
        if self.queued_at and self.finished_at:
            return (self.finished_at - self.queued_at).total_seconds()
        return None

    def current_findings(self):
        """Findings of the engine version that last analysed this snapshot."""
        return self.findings.filter(engine_version=self.engine_version)


class SnapshotArtifact(models.Model):
    """Evidence added to a snapshot after its upload (a pasted command output or
    a file), read into the same host as the original upload on every analysis."""

    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="added_artifacts")
    name = models.CharField(_("name"), max_length=200)
    file = models.FileField(upload_to="snapshots/", max_length=500)
    sha256 = models.CharField(max_length=64)
    size = models.BigIntegerField()
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="snapshot_artifacts"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["snapshot", "created_at", "id"]

    def __str__(self) -> str:
        return f"{self.name} (+{self.snapshot_id})"


class Finding(models.Model):
    class Severity(models.TextChoices):
        CRITICAL = "critical", _("Critical")
        WARNING = "warning", _("Warning")
        INFO = "info", _("Info")

    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="findings")
    rule = models.CharField(max_length=100, db_index=True)
    severity = models.CharField(max_length=16, choices=Severity.choices)
    host = models.CharField(max_length=200, blank=True)
    title = models.CharField(max_length=300)
    title_zh = models.CharField(max_length=300, blank=True)
    explanation = models.TextField(blank=True)
    explanation_zh = models.TextField(blank=True)
    # [{"fact", "value", "artifact", "line", "host"}]
    evidence = models.JSONField(default=list, blank=True)
    # measure slugs
    measures = models.JSONField(default=list, blank=True)
    # severity weight x how far past its threshold; the report orders by it
    impact = models.FloatField(default=0)
    engine_version = models.CharField(max_length=32)

    SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}

    class Meta:
        ordering = ["snapshot", "id"]
        indexes = [models.Index(fields=["snapshot", "engine_version"], name="finding_snapshot_version")]

    def __str__(self) -> str:
        return f"{self.rule} ({self.severity})"

    @classmethod
    def in_report_order(cls, findings) -> list[Finding]:
        """Largest impact first (the report names the top findings first); the
        severity, rule and host break ties so the order is stable."""
        return sorted(
            findings,
            key=lambda f: (
                -(f.impact or 0.0),
                cls.SEVERITY_ORDER.get(f.severity, 9),
                f.rule,
                f.host,
                f.pk or 0,
            ),
        )

    def localized_title(self, language: str | None = None) -> str:
        lang = (language or get_language() or "en").lower()
        return self.title_zh if lang.startswith("zh") and self.title_zh else self.title

    def localized_explanation(self, language: str | None = None) -> str:
        lang = (language or get_language() or "en").lower()
        return self.explanation_zh if lang.startswith("zh") and self.explanation_zh else self.explanation
