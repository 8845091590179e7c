"""API shapes of snapshots, findings and the rule catalogue.

The finding and similar-case shapes follow DESIGN.md "Interfaces" (the same
keys ``manage.py analyze --json`` prints): ``{"rule", "severity", "title",
"evidence", "measures"}`` and ``{"slug", "score", "shared_rules"}``.
"""

from __future__ import annotations

import contextlib

from django.urls import NoReverseMatch, reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from triage.models import Finding, Snapshot
from triage.reports import facts_summary


class EvidenceSerializer(serializers.Serializer):
    fact = serializers.CharField(required=False, allow_blank=True)
    value = serializers.JSONField(required=False, allow_null=True)
    artifact = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    line = serializers.IntegerField(required=False, allow_null=True)
    host = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    excerpt = serializers.JSONField(required=False, help_text="[{line, text, hit}] around the cited line")


class FindingSerializer(serializers.ModelSerializer):
    evidence = serializers.SerializerMethodField()
    measures = serializers.ListField(child=serializers.CharField(), read_only=True)

    class Meta:
        model = Finding
        fields = [
            "rule", "severity", "host", "title", "title_zh", "explanation", "explanation_zh",
            "evidence", "measures", "engine_version",
        ]  # fmt: skip

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


class ArtifactErrorSerializer(serializers.Serializer):
    artifact = serializers.CharField(allow_blank=True, allow_null=True)
    message = serializers.CharField(allow_blank=True)
    line = serializers.IntegerField(required=False, allow_null=True)


class SkippedRuleSerializer(serializers.Serializer):
    rule = serializers.CharField()
    reason = serializers.CharField(allow_blank=True)


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
    class Meta:
        model = Snapshot
        fields = ["id", "url", "api_url", "report_md_url", "status"]


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
    errors = serializers.SerializerMethodField()
    skipped = serializers.SerializerMethodField()
    last_error = serializers.CharField(read_only=True)
    parse_seconds = serializers.FloatField(read_only=True, allow_null=True)
    rules_seconds = serializers.FloatField(read_only=True, allow_null=True)

    class Meta(SnapshotListSerializer.Meta):
        fields = [
            *SnapshotListSerializer.Meta.fields,
            "facts_summary", "findings", "similar_cases", "errors", "skipped", "last_error",
            "parse_seconds", "rules_seconds",
        ]  # fmt: skip

    @extend_schema_field(FactsSummarySerializer)
    def get_facts_summary(self, snap: Snapshot) -> dict:
        return facts_summary(snap.facts)

    @extend_schema_field(FindingSerializer(many=True))
    def get_findings(self, snap: Snapshot) -> list:
        if snap.status != Snapshot.Status.DONE:
            return []
        findings = sorted(
            snap.current_findings(),
            key=lambda f: (Finding.SEVERITY_ORDER.get(f.severity, 9), f.rule, f.host, f.pk),
        )
        return FindingSerializer(findings, many=True).data

    @extend_schema_field(SimilarCaseSerializer(many=True))
    def get_similar_cases(self, snap: Snapshot) -> list:
        return similar_cases_data(snap, self.context.get("request"))

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
    label = serializers.CharField(required=False, allow_blank=True, max_length=200)
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
    requires = serializers.ListField(child=serializers.CharField())
    measures = serializers.ListField(child=serializers.CharField())
    seeds = serializers.ListField(child=serializers.CharField())
    thresholds = serializers.DictField(child=serializers.JSONField())
    references = serializers.ListField(child=serializers.CharField())

    @staticmethod
    def from_spec(spec) -> dict:
        return {
            "id": spec.id,
            "severity": spec.severity,
            "title": spec.title,
            "title_zh": spec.title_zh or "",
            "condition": spec.condition or "",
            "requires": list(spec.requires),
            "measures": list(spec.measures),
            "seeds": list(spec.seeds),
            "thresholds": dict(spec.thresholds),
            "references": list(spec.references),
        }


MARKDOWN = OpenApiTypes.STR
