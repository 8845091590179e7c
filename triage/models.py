"""Snapshots and their findings.

A :class:`Snapshot` is one uploaded host snapshot (collector archive, sosreport,
transcript or single artifact). The upload is stored through Django's storage
API before the row exists; a Celery worker parses it, runs the rule engine and
writes :class:`Finding` rows. Findings are keyed by engine version so that a
re-analysis by a newer engine replaces only its own set.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.db import models
from django.db.models import Exists, F, OuterRef, Q, QuerySet, Subquery
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from collectors.derived.fleet import fleet_profile, profile_from_json
from collectors.facts import HostFacts, from_dict
from config.language import in_language, reads_chinese
from engine.run import first_commands
from engine.severity import severity_rank

# Rule ids of the fleet rules (``engine.run.is_fleet_rule``): findings about a
# whole cluster.
FLEET_PREFIX = "fleet."


def host_label_of(label: str, original_filename: str, pk: int | None) -> str:
    """:attr:`Snapshot.host_label` of a snapshot with these columns."""
    return label or original_filename or f"snapshot-{pk}"


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
    # collectors.derived.fleet.FleetProfile of the host: what the fleet rules,
    # the cluster page and the guest/host pairing read of it when it is another
    # member of a cluster being analysed
    fleet_facts = models.JSONField(default=dict, blank=True)
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
    # Which host this is (``triage.selectors.host_key``: the hostname, else the
    # label), stored when the analysis finishes so that "the newest snapshot
    # of every host" is one indexed query over a fleet (rule pages,
    # acknowledgements) instead of a read of every snapshot's facts.
    host_key = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "sha256"], name="snapshot_unique_owner_sha256"),
        ]
        indexes = [
            models.Index(fields=["status", "queued_at"], name="snapshot_status_queued"),
            models.Index(fields=["host_key", "team", "created_at"], name="snapshot_host_newest"),
        ]
        # On PostgreSQL, migration 0007 adds the index snapshot_cluster_finished
        # (cluster, finished_at DESC NULLS LAST, id DESC): a cluster's members,
        # the last analysed first, so the member whose fleet findings are the
        # cluster's (``fleet_findings_source``) is found without sorting every
        # member. SQLite cannot index NULLS LAST.

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
        "host_key",  # which acknowledgements cover it (the badges count open findings)
    )

    def __str__(self) -> str:
        return self.display_name

    def get_absolute_url(self) -> str:
        return reverse("triage:snapshot_detail", args=[self.pk])

    @property
    def display_name(self) -> str:
        return self.label or self.original_filename or f"snapshot {self.pk}"

    @property
    def host_label(self) -> str:
        """The label the analysis gives this snapshot's host; unique per snapshot
        so findings of a cluster run can be attributed back."""
        return host_label_of(self.label, self.original_filename, self.pk)

    @property
    def first_commands(self) -> list[str]:
        """What to collect first when nothing could be checked yet."""
        return first_commands()

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)

    @property
    def duration_seconds(self) -> float | None:
        if self.queued_at and self.finished_at:
            return (self.finished_at - self.queued_at).total_seconds()
        return None

    def host_facts(self):
        """The snapshot's host as its analysis stored it (typed ``HostFacts``,
        labelled as the analysis labels it); the upload is never parsed again
        after its analysis, except by ``reanalyze``."""
        host = from_dict(HostFacts, self.facts or {})
        host.label = self.host_label
        if self.cluster and not host.cluster:
            host.cluster = self.cluster
        return host

    def extra_host_facts(self) -> list:
        """The further hosts of the same upload (a guest reached by ssh), typed."""
        return [from_dict(HostFacts, data) for data in self.extra_hosts or [] if isinstance(data, dict)]

    def fleet_profile(self):
        """The host as the fleet rules and the cluster page compare it
        (``FleetProfile``, labelled as ``host_facts``): its stored profile,
        else (analysed before profiles were stored) derived from its stored
        facts."""
        if self.fleet_facts:
            profile = profile_from_json(self.fleet_facts)
        else:
            profile = fleet_profile(self.host_facts())
        profile.label = self.host_label
        return profile

    def current_findings(self):
        """Findings of the engine version that last analysed this snapshot.

        A member of a cluster holds one row per fleet finding of its cluster
        (so counts, rule pages and filters find it), written when the finding
        appears; what the finding says ("1997 of 2000 hosts ...") changes with
        every member that joins, and is read from the cluster's latest
        analysis (:meth:`fleet_findings_source`) rather than rewritten on every
        member each time."""
        own = self.findings.filter(engine_version=self.engine_version)
        if not self.cluster:
            return own
        fleet = Q(rule__startswith=FLEET_PREFIX)
        source = Subquery(self.fleet_findings_source())
        # a fleet finding that blames some hosts only is not on the source when
        # it is not one of them: the member's own row says it then
        at_source = Finding.objects.filter(fleet, snapshot_id=source, engine_version=self.engine_version)
        return Finding.objects.filter(
            (Q(snapshot_id=self.pk) & ~fleet)
            | (fleet & Q(snapshot_id=source) & Q(rule__in=own.filter(fleet).values("rule")))
            | (fleet & Q(snapshot_id=self.pk) & ~Q(rule__in=at_source.values("rule"))),
            engine_version=self.engine_version,
        )

    def fleet_findings_source(self, engine_version: str | None = None) -> QuerySet:
        """The snapshot whose fleet findings are the cluster's current ones (as
        a one-row subquery of its id): of this snapshot's cluster, as its
        owner or team sees it, the member analysed last by this engine that
        found any (``engine_version``: by that engine instead). Each analysis
        of a member writes its own fleet findings anew, so the last one's are
        the latest word on the cluster."""
        version = engine_version or self.engine_version
        scope = Q(owner_id=self.owner_id)
        if self.team_id:
            scope |= Q(team_id=self.team_id)
        found = Finding.objects.filter(
            snapshot_id=OuterRef("pk"), engine_version=version, rule__startswith=FLEET_PREFIX
        )
        return (
            Snapshot.objects.filter(
                scope, Exists(found), cluster=self.cluster, status=self.Status.DONE, engine_version=version
            )
            .order_by(F("finished_at").desc(nulls_last=True), "-pk")
            .values("pk")[:1]
        )


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
                severity_rank(f.severity),
                f.rule,
                f.host,
                f.pk or 0,
            ),
        )

    @classmethod
    def current_of(cls, snapshots: Iterable[Snapshot]) -> list[Finding]:
        """The current findings (:meth:`Snapshot.current_findings`) of several
        snapshots in one query: snapshot by snapshot in the order given, each
        finding with its snapshot already set."""
        given = {snap.pk: snap for snap in snapshots}
        by_snapshot: dict[int, list[Finding]] = {pk: [] for pk in given}
        rows = cls.objects.filter(
            snapshot__in=list(given), engine_version=models.F("snapshot__engine_version")
        )
        for finding in rows.order_by("id"):
            finding.snapshot = given[finding.snapshot_id]
            by_snapshot[finding.snapshot_id].append(finding)
        return [finding for found in by_snapshot.values() for finding in found]

    def localized_title(self, language: str | None = None) -> str:
        return in_language(self.title, self.title_zh, reads_chinese(language or get_language()))

    def localized_explanation(self, language: str | None = None) -> str:
        return in_language(self.explanation, self.explanation_zh, reads_chinese(language or get_language()))


class Acknowledgement(models.Model):
    """ "We know, and accept it": one rule's finding acknowledged for one host
    (``host``, a :attr:`Snapshot.host_key`) or for every host of a cluster,
    within the team (or, for team-less snapshots, the owner) whose snapshots
    it applies to. Acknowledged findings are folded away, never deleted; an
    acknowledgement ends when it expires or is withdrawn (``revoked_at``) and
    its rows stay as the record. Every change is an audit trail entry
    (``troubleshoot.AuditEntry.acknowledgement``)."""

    rule = models.CharField(_("rule"), max_length=100, db_index=True)
    team = models.ForeignKey(
        "accounts.Team", on_delete=models.CASCADE, null=True, blank=True, related_name="acknowledgements"
    )
    # the scope of a team-less acknowledgement: that owner's snapshots
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    host = models.CharField(_("host"), max_length=200, blank=True)
    cluster = models.CharField(_("cluster"), max_length=200, blank=True)
    reason = models.TextField(_("reason"))
    expires_at = models.DateTimeField(_("expires"), null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    # the snapshot it was made on, for the rule page's link
    snapshot = models.ForeignKey(Snapshot, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=(models.Q(host="") & ~models.Q(cluster=""))
                | (~models.Q(host="") & models.Q(cluster="")),
                name="acknowledgement_host_xor_cluster",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.rule} @ {self.host or self.cluster}"

    @property
    def scope_label(self) -> str:
        return self.host or self.cluster

    def is_active(self, now=None) -> bool:
        now = now or timezone.now()
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)


class TicketRef(models.Model):
    """An external ticket (a Jira issue, a ServiceNow incident...) a snapshot or
    a troubleshooting session belongs to: its key and URL, shown as a link and
    searchable on the snapshot and session lists."""

    key = models.CharField(_("ticket"), max_length=64, db_index=True)
    url = models.URLField(_("URL"), max_length=500, blank=True)
    snapshot = models.ForeignKey(
        Snapshot, on_delete=models.CASCADE, null=True, blank=True, related_name="tickets"
    )
    session = models.ForeignKey(
        "troubleshoot.Session", on_delete=models.CASCADE, null=True, blank=True, related_name="tickets"
    )
    added_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["key", "id"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(snapshot__isnull=False, session__isnull=True)
                | models.Q(snapshot__isnull=True, session__isnull=False),
                name="ticketref_one_owner",
            ),
        ]

    def __str__(self) -> str:
        return self.key
