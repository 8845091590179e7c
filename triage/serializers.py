"""API shapes of snapshots, findings and the rule catalogue.

The finding and similar-case shapes follow DESIGN.md "Interfaces" (the same
keys ``manage.py analyze --json`` prints): ``{"rule", "severity", "title",
"evidence", "measures"}`` and ``{"slug", "score", "shared_rules"}``.
"""

from __future__ import annotations

import contextlib
from typing import Any

from django.urls import NoReverseMatch, reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from collectors.facts import Reading, to_dict
from triage import fleetview
from triage.fleetview import acknowledgements_for
from triage.models import Acknowledgement, Finding, Snapshot, SnapshotArtifact, TicketRef
from triage.reports import facts_summary
from triage.selectors import host_readings, sounds_like_cases


class EvidenceSerializer(serializers.Serializer):
    fact = serializers.CharField(required=False, allow_blank=True)
    value = serializers.JSONField(required=False, allow_null=True)
    artifact = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    line = serializers.IntegerField(required=False, allow_null=True)
    host = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    excerpt = serializers.JSONField(required=False, help_text="[{line, text, hit}] around the cited line")


class AcknowledgementSerializer(serializers.ModelSerializer):
    by = serializers.CharField(source="created_by.username", read_only=True)
    team = serializers.CharField(source="team.slug", read_only=True, allow_null=True, default=None)
    revoked_by = serializers.CharField(
        source="revoked_by.username", read_only=True, allow_null=True, default=None
    )
    active = serializers.SerializerMethodField()

    class Meta:
        model = Acknowledgement
        fields = [
            "id", "rule", "host", "cluster", "team", "reason", "expires_at", "by", "created_at",
            "revoked_at", "revoked_by", "active", "snapshot",
        ]  # fmt: skip

    def get_active(self, ack: Acknowledgement) -> bool:
        return ack.is_active()


class AcknowledgeSerializer(serializers.Serializer):
    rule = serializers.CharField(max_length=100)
    scope = serializers.ChoiceField(choices=["host", "cluster"], default="host")
    reason = serializers.CharField(max_length=2000)
    expires_at = serializers.DateTimeField(required=False, allow_null=True)


class TicketSerializer(serializers.ModelSerializer):
    url = serializers.CharField(read_only=True)

    class Meta:
        model = TicketRef
        fields = ["key", "url", "added_at"]


class FindingSerializer(serializers.ModelSerializer):
    evidence = serializers.SerializerMethodField()
    measures = serializers.ListField(child=serializers.CharField(), read_only=True)
    acknowledged = serializers.SerializerMethodField(
        help_text="the active acknowledgement that folds this finding away, or null"
    )

    class Meta:
        model = Finding
        fields = [
            "rule", "severity", "host", "title", "title_zh", "explanation", "explanation_zh",
            "evidence", "measures", "impact", "engine_version", "acknowledged",
        ]  # fmt: skip

    @extend_schema_field(AcknowledgementSerializer(allow_null=True))
    def get_acknowledged(self, finding: Finding) -> dict | None:
        ack = (self.context.get("acknowledgements") or {}).get(finding.rule)
        return AcknowledgementSerializer(ack).data if ack else None

    @extend_schema_field(EvidenceSerializer(many=True))
    def get_evidence(self, finding: Finding) -> list:
        return [e if isinstance(e, dict) else {"value": e} for e in finding.evidence or []]


class ScoreContributionSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="rule, feature or text")
    name = serializers.CharField(allow_blank=True)
    points = serializers.FloatField(min_value=0, max_value=1)


class SimilarCaseSerializer(serializers.Serializer):
    slug = serializers.CharField()
    score = serializers.FloatField(min_value=0, max_value=1)
    shared_rules = serializers.ListField(child=serializers.CharField())
    title = serializers.CharField(required=False, allow_blank=True)
    title_zh = serializers.CharField(required=False, allow_blank=True)
    language = serializers.CharField(required=False)
    matched_features = serializers.ListField(child=serializers.CharField(), required=False)
    why = serializers.CharField(required=False, allow_blank=True)
    contributions = ScoreContributionSerializer(many=True, required=False)
    url = serializers.CharField(required=False)


class SoundsLikeCaseSerializer(serializers.Serializer):
    """A case the text of a snapshot no rule explains sounds like (issue 13):
    never a similar case, compared by words only."""

    slug = serializers.CharField()
    score = serializers.FloatField(min_value=0, max_value=1)
    title = serializers.CharField(allow_blank=True)
    language = serializers.CharField()
    shared_terms = serializers.ListField(child=serializers.CharField(), help_text="rarest first")
    url = serializers.CharField(required=False)


class ArtifactErrorSerializer(serializers.Serializer):
    artifact = serializers.CharField(allow_blank=True, allow_null=True)
    message = serializers.CharField(allow_blank=True)
    line = serializers.IntegerField(required=False, allow_null=True)


class SkippedRuleSerializer(serializers.Serializer):
    rule = serializers.CharField()
    reason = serializers.CharField(allow_blank=True)


class NotCheckedSerializer(serializers.Serializer):
    rule = serializers.CharField()
    reason = serializers.CharField(allow_blank=True)
    reason_zh = serializers.CharField(allow_blank=True)
    commands = serializers.ListField(
        child=serializers.CharField(), help_text="the exact commands that produce the missing evidence"
    )
    host = serializers.CharField(allow_blank=True)


class ReadArtifactSerializer(serializers.Serializer):
    kind = serializers.CharField(allow_null=True)
    start_line = serializers.IntegerField()
    end_line = serializers.IntegerField()
    parsed = serializers.BooleanField()
    name = serializers.CharField(required=False, allow_blank=True)
    command = serializers.CharField(required=False, allow_null=True)


class UnrecognisedBlockSerializer(serializers.Serializer):
    start_line = serializers.IntegerField()
    end_line = serializers.IntegerField()
    first_line = serializers.CharField(allow_blank=True)
    name = serializers.CharField(required=False, allow_blank=True)


class UnusedBlockSerializer(serializers.Serializer):
    start_line = serializers.IntegerField()
    end_line = serializers.IntegerField()
    what = serializers.CharField()
    name = serializers.CharField(required=False, allow_blank=True)


class ReadingSerializer(serializers.Serializer):
    lines = serializers.IntegerField()
    read_lines = serializers.IntegerField()
    prompt_lines = serializers.IntegerField(required=False)
    prose_lines = serializers.IntegerField(required=False)
    unrecognised_lines = serializers.IntegerField(required=False)
    unused_lines = serializers.IntegerField(required=False)
    artifacts = ReadArtifactSerializer(many=True)
    unrecognised = UnrecognisedBlockSerializer(many=True)
    unused = UnusedBlockSerializer(many=True, required=False)


def _reading_dict(reading: Reading) -> dict[str, Any]:
    """A host's reading as the API shows it; ``unused_lines`` and ``unused``
    (outputs recognised but not used, since issue 26) only when there are any,
    so a reading stored before them reads back as stored."""
    out: dict[str, Any] = {
        "lines": reading.lines,
        "read_lines": reading.read_lines,
        "prompt_lines": reading.prompt_lines,
        "prose_lines": reading.prose_lines,
        "unrecognised_lines": reading.unrecognised_lines,
        "artifacts": [to_dict(a) for a in reading.artifacts],
        "unrecognised": [to_dict(u) for u in reading.unrecognised],
    }
    if reading.unused_lines or reading.unused:
        out["unused_lines"] = reading.unused_lines
        out["unused"] = [to_dict(u) for u in reading.unused]
    return out


class FactConflictSerializer(serializers.Serializer):
    fact = serializers.CharField()
    values = serializers.ListField(child=serializers.CharField())
    artifacts = serializers.ListField(child=serializers.CharField())
    lines = serializers.ListField(child=serializers.IntegerField(allow_null=True))
    reason = serializers.CharField(allow_blank=True)


class CutDomainSerializer(serializers.Serializer):
    domain = serializers.CharField()
    cut_in = serializers.CharField(allow_null=True)
    truncated_after = serializers.CharField(allow_null=True)


class CutTableSerializer(serializers.Serializer):
    table = serializers.CharField()
    shown = serializers.IntegerField()
    of = serializers.IntegerField(allow_null=True)
    truncated_after = serializers.CharField(allow_null=True)


class HostReadingSerializer(serializers.Serializer):
    hostname = serializers.CharField(allow_null=True)
    reading = ReadingSerializer()
    conflicts = FactConflictSerializer(many=True)
    split_reason = serializers.CharField(allow_null=True)
    cut_domains = CutDomainSerializer(many=True)
    cut_tables = CutTableSerializer(many=True)


class EarlierFindingSerializer(serializers.Serializer):
    rule = serializers.CharField()
    severity = serializers.CharField()
    host = serializers.CharField(allow_blank=True)
    title = serializers.CharField(allow_blank=True)
    title_zh = serializers.CharField(allow_blank=True)


class EarlierAnalysisSerializer(serializers.Serializer):
    engine_version = serializers.CharField(allow_blank=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    reason = serializers.CharField(allow_blank=True)
    findings = EarlierFindingSerializer(many=True)


class SnapshotArtifactSerializer(serializers.ModelSerializer):
    added_by = serializers.CharField(source="added_by.username", read_only=True)

    class Meta:
        model = SnapshotArtifact
        fields = ["id", "name", "sha256", "size", "created_at", "added_by"]


class FactsSummarySerializer(serializers.Serializer):
    hostname = serializers.CharField(allow_null=True)
    role = serializers.CharField(allow_null=True)
    architecture = serializers.CharField(allow_null=True)
    cpu_model = serializers.CharField(allow_null=True)
    cpus = serializers.IntegerField(allow_null=True)
    sockets = serializers.IntegerField(allow_null=True)
    numa_nodes = serializers.IntegerField(allow_null=True)
    kernel = serializers.CharField(allow_null=True)
    os = serializers.CharField(allow_null=True)
    database = serializers.CharField(allow_null=True)
    domains = serializers.IntegerField()
    artifacts = serializers.IntegerField()


def _absolute(request, path: str) -> str:
    return request.build_absolute_uri(path) if request is not None else path


class SnapshotLinksMixin(serializers.Serializer):
    url = serializers.SerializerMethodField(help_text="the report page (HTML) of the snapshot")
    api_url = serializers.SerializerMethodField()
    report_md_url = serializers.SerializerMethodField()

    def get_url(self, snap: Snapshot) -> str:
        return _absolute(self.context.get("request"), snap.get_absolute_url())

    def get_api_url(self, snap: Snapshot) -> str:
        return _absolute(self.context.get("request"), reverse("api-snapshot-detail", args=[snap.pk]))

    def get_report_md_url(self, snap: Snapshot) -> str:
        return _absolute(self.context.get("request"), reverse("api-snapshot-report-md", args=[snap.pk]))


class SnapshotAcceptedSerializer(SnapshotLinksMixin, serializers.ModelSerializer):
    duplicate = serializers.SerializerMethodField(
        help_text="true: the same bytes were already uploaded as this snapshot (the new label and "
        "cluster are applied to it); the answer is then 200, not 202"
    )

    class Meta:
        model = Snapshot
        fields = ["id", "url", "api_url", "report_md_url", "status", "duplicate"]

    def get_duplicate(self, snap: Snapshot) -> bool:
        return bool(getattr(snap, "duplicate", False))


class ArtifactAcceptedSerializer(SnapshotAcceptedSerializer):
    """The snapshot the evidence was added to (queued again) and the stored artifact."""

    artifact = serializers.SerializerMethodField()

    class Meta(SnapshotAcceptedSerializer.Meta):
        fields = [*SnapshotAcceptedSerializer.Meta.fields, "artifact"]

    @extend_schema_field(SnapshotArtifactSerializer)
    def get_artifact(self, snap: Snapshot) -> dict:
        return SnapshotArtifactSerializer(self.context["artifact"]).data


class ArtifactUploadSerializer(serializers.Serializer):
    """Evidence added as a multipart upload."""

    file = serializers.FileField()
    name = serializers.CharField(required=False, allow_blank=True, max_length=200)


class SnapshotListSerializer(SnapshotLinksMixin, serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    team = serializers.CharField(source="team.slug", read_only=True, allow_null=True, default=None)

    class Meta:
        model = Snapshot
        fields = [
            "id", "url", "api_url", "report_md_url", "status", "label", "cluster", "kind",
            "original_filename", "size", "sha256", "owner", "team", "engine_version",
            "created_at", "finished_at",
        ]  # fmt: skip


class SnapshotDetailSerializer(SnapshotListSerializer):
    facts_summary = serializers.SerializerMethodField()
    findings = serializers.SerializerMethodField()
    similar_cases = serializers.SerializerMethodField()
    sounds_like = serializers.SerializerMethodField(
        help_text="a text upload no rule explains: cases that sound like it (not similar cases)"
    )
    # the metaclass moves declared fields into ``_declared_fields``: ``Serializer.errors``
    # is untouched whatever mypy reads here
    errors = serializers.SerializerMethodField()  # type: ignore[assignment]
    skipped = serializers.SerializerMethodField()
    checked = serializers.ListField(
        child=serializers.CharField(), read_only=True, help_text="rule IDs evaluated"
    )
    not_checked = serializers.SerializerMethodField()
    hosts = serializers.SerializerMethodField()
    history = serializers.SerializerMethodField()
    added_artifacts = serializers.SerializerMethodField()
    tickets = serializers.SerializerMethodField()
    last_error = serializers.CharField(read_only=True)
    parse_seconds = serializers.FloatField(read_only=True, allow_null=True)
    rules_seconds = serializers.FloatField(read_only=True, allow_null=True)

    class Meta(SnapshotListSerializer.Meta):
        fields = [
            *SnapshotListSerializer.Meta.fields,
            "facts_summary", "findings", "checked", "not_checked", "hosts", "similar_cases", "errors",
            "skipped", "history", "added_artifacts", "tickets", "last_error", "parse_seconds",
            "rules_seconds", "sounds_like",
        ]  # fmt: skip

    @extend_schema_field(FactsSummarySerializer)
    def get_facts_summary(self, snap: Snapshot) -> dict:
        return facts_summary(snap.host_facts())

    @extend_schema_field(FindingSerializer(many=True))
    def get_findings(self, snap: Snapshot) -> list:
        if snap.status != Snapshot.Status.DONE:
            return []
        acks = acknowledgements_for(snap)
        findings = Finding.in_report_order(snap.current_findings())
        # many=True makes a ListSerializer (the stubs type the single form)
        data = FindingSerializer(findings, many=True, context={"acknowledgements": acks}).data
        return data  # type: ignore[return-value]

    @extend_schema_field(TicketSerializer(many=True))
    def get_tickets(self, snap: Snapshot) -> list:
        return TicketSerializer(snap.tickets.all(), many=True).data  # type: ignore[return-value]

    @extend_schema_field(NotCheckedSerializer(many=True))
    def get_not_checked(self, snap: Snapshot) -> list:
        if snap.status != Snapshot.Status.DONE:
            return []
        return [
            {
                "rule": str(n.get("rule") or ""),
                "reason": str(n.get("reason") or ""),
                "reason_zh": str(n.get("reason_zh") or ""),
                "commands": [str(c) for c in n.get("commands") or []],
                "host": str(n.get("host") or ""),
            }
            for n in snap.not_checked or []
            if isinstance(n, dict)
        ]

    @extend_schema_field(HostReadingSerializer(many=True))
    def get_hosts(self, snap: Snapshot) -> list:
        """Each host the upload holds (usually one; a paste that ssh-es to a
        guest holds two) with what Casebook read of it."""
        return [
            {
                "hostname": r.hostname,
                "reading": _reading_dict(r.reading),
                "conflicts": r.conflicts,
                "split_reason": r.split_reason,
                "cut_domains": r.cut_domains,
                "cut_tables": r.cut_tables,
            }
            for r in host_readings(snap)
            if r.recorded
        ]

    @extend_schema_field(EarlierAnalysisSerializer(many=True))
    def get_history(self, snap: Snapshot) -> list:
        return [h for h in snap.history or [] if isinstance(h, dict)]

    @extend_schema_field(SnapshotArtifactSerializer(many=True))
    def get_added_artifacts(self, snap: Snapshot) -> list:
        return SnapshotArtifactSerializer(  # type: ignore[return-value]
            snap.added_artifacts.select_related("added_by"), many=True
        ).data

    @extend_schema_field(SimilarCaseSerializer(many=True))
    def get_similar_cases(self, snap: Snapshot) -> list:
        return similar_cases_data(snap, self.context.get("request"))

    @extend_schema_field(SoundsLikeCaseSerializer(many=True))
    def get_sounds_like(self, snap: Snapshot) -> list:
        request = self.context.get("request")
        out = []
        for case in sounds_like_cases(snap):
            item = {
                "slug": str(case["slug"]),
                "score": _score(case.get("score")),
                "title": str(case.get("title") or ""),
                "language": str(case.get("language") or ""),
                "shared_terms": [str(t) for t in case.get("shared_terms") or []],
            }
            with contextlib.suppress(NoReverseMatch):
                item["url"] = _absolute(request, reverse("kb-api-case", args=[item["slug"]]))
            out.append(item)
        return out

    @extend_schema_field(ArtifactErrorSerializer(many=True))
    def get_errors(self, snap: Snapshot) -> list:
        return [
            {"artifact": e.get("artifact") or "", "message": str(e.get("message", "")), "line": e.get("line")}
            for e in snap.errors or []
            if isinstance(e, dict)
        ]

    @extend_schema_field(SkippedRuleSerializer(many=True))
    def get_skipped(self, snap: Snapshot) -> list:
        return [
            {"rule": str(s.get("rule", "")), "reason": str(s.get("reason", ""))}
            for s in snap.skipped or []
            if isinstance(s, dict)
        ]


def _score(value) -> float:
    """A stored score as a number in 0..1 (0 when it is not a number)."""
    try:
        number = float(value or 0)
    except (TypeError, ValueError):
        return 0.0
    return min(1.0, max(0.0, number)) if number == number else 0.0


def similar_cases_data(snap: Snapshot, request=None) -> list[dict]:
    """The stored similar cases in the documented shape, with a link to each."""
    out = []
    for case in snap.similar_cases or []:
        if not isinstance(case, dict) or not case.get("slug"):
            continue
        item = {
            "slug": str(case["slug"]),
            "score": _score(case.get("score")),
            "shared_rules": [str(r) for r in case.get("shared_rules") or []],
            "title": str(case.get("title") or ""),
            "title_zh": str(case.get("title_zh") or ""),
            "matched_features": [str(f) for f in case.get("matched_features") or []],
        }
        if case.get("language"):
            item["language"] = str(case["language"])
        if case.get("contributions"):  # why the case was offered (issue 17)
            item["why"] = str(case.get("why") or "")
            item["contributions"] = [
                {
                    "kind": str(c.get("kind") or ""),
                    "name": str(c.get("name") or ""),
                    "points": _score(c.get("points")),
                }
                for c in case["contributions"]
                if isinstance(c, dict)
            ]
        with contextlib.suppress(NoReverseMatch):
            # A slug the URL conf cannot express just has no link.
            item["url"] = _absolute(request, reverse("kb-api-case", args=[item["slug"]]))
        out.append(item)
    return out


class SnapshotUploadSerializer(serializers.Serializer):
    """The multipart upload (documentation and validation of the form fields)."""

    file = serializers.FileField()
    # a declared field (see ``errors`` above), not ``Field.label``
    label = serializers.CharField(  # type: ignore[assignment]
        required=False, allow_blank=True, max_length=200
    )
    cluster = serializers.CharField(required=False, allow_blank=True, max_length=200)
    session = serializers.IntegerField(required=False, min_value=1, help_text="troubleshooting session id")
    phase = serializers.ChoiceField(
        choices=["before", "after"], required=False, default="before", help_text="with session"
    )


class RuleSerializer(serializers.Serializer):
    id = serializers.CharField()
    severity = serializers.CharField()
    title = serializers.CharField()
    title_zh = serializers.CharField(allow_blank=True)
    condition = serializers.CharField(allow_blank=True)
    condition_zh = serializers.CharField(allow_blank=True)
    requires = serializers.ListField(child=serializers.CharField())
    measures = serializers.ListField(child=serializers.CharField())
    seeds = serializers.ListField(child=serializers.CharField())
    thresholds = serializers.DictField(child=serializers.JSONField())
    references = serializers.ListField(child=serializers.CharField())
    hosts_affected = serializers.IntegerField(
        required=False, help_text="hosts of the reader's teams whose newest snapshot has the finding"
    )

    @staticmethod
    def from_spec(spec) -> dict:
        return {
            "id": spec.id,
            "severity": spec.severity,
            "title": spec.title,
            "title_zh": spec.title_zh or "",
            "condition": spec.condition or "",
            "condition_zh": spec.condition_zh or "",
            "requires": list(spec.requires),
            "measures": list(spec.measures),
            "seeds": list(spec.seeds),
            "thresholds": dict(spec.thresholds),
            "references": list(spec.references),
        }


MARKDOWN = OpenApiTypes.STR


class AffectedHostSerializer(serializers.Serializer):
    host = serializers.CharField()
    cluster = serializers.CharField(allow_blank=True)
    team = serializers.CharField(allow_null=True)
    snapshot = serializers.IntegerField()
    url = serializers.CharField()
    created_at = serializers.DateTimeField()
    acknowledged = AcknowledgementSerializer(allow_null=True)


class WeekCountSerializer(serializers.Serializer):
    week = serializers.DateTimeField()
    hosts = serializers.IntegerField()


class RuleDetailSerializer(RuleSerializer):
    rationale = serializers.CharField(allow_blank=True)
    rationale_zh = serializers.CharField(allow_blank=True)
    hosts = AffectedHostSerializer(many=True)
    hosts_truncated = serializers.BooleanField()
    weeks = WeekCountSerializer(many=True)
    acknowledgements = AcknowledgementSerializer(many=True)

    @staticmethod
    def build(spec, *, visible, user, request=None) -> dict:
        """The rule with every affected host, the weekly counts and the
        acknowledgements, as the rule page shows them."""
        affected = fleetview.affected_snapshots(visible, spec.id)
        total = affected.count()
        hosts = fleetview.with_acknowledgements(spec.id, list(affected[: fleetview.MAX_HOSTS]))
        return {
            **RuleSerializer.from_spec(spec),
            "rationale": spec.rationale or "",
            "rationale_zh": spec.rationale_zh or "",
            "hosts_affected": total,
            "hosts_truncated": total > len(hosts),
            "hosts": [
                {
                    "host": h.snapshot.host_key,
                    "cluster": h.snapshot.cluster,
                    "team": h.snapshot.team.slug if h.snapshot.team is not None else None,
                    "snapshot": h.snapshot.pk,
                    "url": _absolute(request, h.snapshot.get_absolute_url()),
                    "created_at": h.snapshot.created_at,
                    "acknowledged": AcknowledgementSerializer(h.acknowledgement).data
                    if h.acknowledgement
                    else None,
                }
                for h in hosts
            ],
            "weeks": [{"week": week, "hosts": n} for week, n in fleetview.weekly_counts(visible, spec.id)],
            "acknowledgements": AcknowledgementSerializer(
                fleetview.visible_acknowledgements(user, spec.id)[:200], many=True
            ).data,
        }
