from __future__ import annotations

from rest_framework import serializers

from kb.models import Case, CaseMeasure, Measure, Metric, Reference, Tag
from kb.services import reuse_counts


class MeasureSerializer(serializers.ModelSerializer):
    class Meta:
        model = Measure
        fields = [
            "slug", "title_en", "title_zh", "what_why_en", "what_why_zh", "config_kind",
            "commands", "rollback", "disruption", "remeasure", "rules",
        ]  # fmt: skip


class CaseMeasureSerializer(serializers.ModelSerializer):
    measure: serializers.SlugRelatedField[Measure] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True
    )
    title = serializers.SerializerMethodField()

    class Meta:
        model = CaseMeasure
        fields = ["order", "measure", "title", "status", "outcome"]

    def get_title(self, step) -> str:
        return step.measure.title_for(step.case.language)


class MetricSerializer(serializers.ModelSerializer):
    class Meta:
        model = Metric
        fields = ["name", "before", "after", "unit", "expected", "note"]


class ReferenceSerializer(serializers.ModelSerializer):
    class Meta:
        model = Reference
        fields = ["key", "title", "url"]


class CaseSerializer(serializers.ModelSerializer):
    tags: serializers.SlugRelatedField[Tag] = serializers.SlugRelatedField(
        slug_field="name", many=True, read_only=True
    )
    resolution = CaseMeasureSerializer(source="steps", many=True, read_only=True)
    metrics = MetricSerializer(many=True, read_only=True)
    references = ReferenceSerializer(many=True, read_only=True)
    translations = serializers.SerializerMethodField()
    url = serializers.CharField(source="get_absolute_url", read_only=True)
    reuse_count = serializers.SerializerMethodField()

    class Meta:
        model = Case
        fields = [
            "slug", "language", "title", "state", "symptom", "environment_notes", "cause",
            "resolution_summary", "resolution", "metrics", "references", "tags",
            "platform", "hypervisor", "cpu_architecture", "cpu_model", "database", "database_version",
            "signature", "signature_engine_version", "applies_to", "translations", "url",
            "created_at", "updated_at", "published_at", "reuse_count",
        ]  # fmt: skip

    def get_reuse_count(self, case) -> int:
        return reuse_counts([case.slug]).get(case.slug, 0)

    def get_translations(self, case) -> list[dict]:
        return [{"language": c.language, "title": c.title} for c in case.translations()]


class SynonymMatchSerializer(serializers.Serializer):
    word = serializers.CharField(help_text="the query word as written")
    synonym = serializers.CharField(help_text="its glossary synonym the case holds")


class WhySerializer(serializers.Serializer):
    in_fields = serializers.ListField(
        source="fields",
        child=serializers.CharField(),
        help_text="where the query words are: title, symptom, cause, resolution, environment, measures, tags",
    )
    matched = serializers.ListField(child=serializers.CharField(), help_text="query words the case holds")
    missing = serializers.ListField(child=serializers.CharField(), help_text="query words it lacks")
    rules = serializers.ListField(child=serializers.CharField(), help_text="signature rules the query names")
    tags = serializers.ListField(child=serializers.CharField(), help_text="tags the query names")
    solved = serializers.BooleanField(help_text="a measure of the resolution was applied")
    verified = serializers.BooleanField(help_text="a metric was measured before and after")
    language = serializers.CharField(
        help_text="the language version these words were read from: the one shown when it holds "
        "the query words, else the one that matched"
    )
    synonyms = SynonymMatchSerializer(
        many=True, help_text="query words the version holds only through a glossary synonym"
    )


class OtherVersionSerializer(serializers.Serializer):
    language = serializers.CharField()
    title = serializers.CharField()
    url = serializers.CharField(source="get_absolute_url")


class CaseHitSerializer(serializers.Serializer):
    slug = serializers.CharField(source="case.slug")
    language = serializers.CharField(source="case.language")
    title = serializers.CharField(source="case.title")
    state = serializers.CharField(source="case.state")
    platform = serializers.CharField(source="case.platform")
    database = serializers.CharField(source="case.database")
    score = serializers.FloatField()
    snippet = serializers.CharField(help_text="HTML: escaped text with <mark> around matches")
    url = serializers.CharField(source="case.get_absolute_url")
    why = WhySerializer(allow_null=True)
    other = OtherVersionSerializer(
        allow_null=True, help_text="the same case in the other language (one hit per case)"
    )
    reuse_count = serializers.SerializerMethodField(
        help_text='how many times "this case helped" was recorded'
    )

    def get_reuse_count(self, hit) -> int:
        return self.context.get("reuse_counts", {}).get(hit.case.slug, 0)

    def to_representation(self, instance) -> dict:
        """The fields declared above, written out: a page of hits is built
        without DRF's per-field machinery (the largest part of a search
        request's CPU after the search itself)."""
        case, why, other = instance.case, instance.why, instance.other
        return {
            "slug": case.slug,
            "language": case.language,
            "title": case.title,
            "state": case.state,
            "platform": case.platform,
            "database": case.database,
            "score": float(instance.score),
            "snippet": str(instance.snippet),
            "url": case.get_absolute_url(),
            "why": None
            if why is None
            else {
                "in_fields": list(why.fields),
                "matched": list(why.matched),
                "missing": list(why.missing),
                "rules": list(why.rules),
                "tags": list(why.tags),
                "solved": bool(why.solved),
                "verified": bool(why.verified),
                "language": why.language,
                "synonyms": [{"word": word, "synonym": synonym} for word, synonym in why.synonyms],
            },
            "other": None
            if other is None
            else {"language": other.language, "title": other.title, "url": other.get_absolute_url()},
            "reuse_count": self.get_reuse_count(instance),
        }


class CaseSearchResponseSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    count_capped = serializers.BooleanField()
    page = serializers.IntegerField()
    pages = serializers.IntegerField()
    relaxed = serializers.BooleanField(
        help_text="fewer than 3 cases had every query word: cases with some of them are ranked in"
    )
    suggestion = serializers.CharField(
        help_text="the query with unknown words respelled from the index vocabulary ('' when none)"
    )
    terms = serializers.ListField(child=serializers.CharField())
    results = CaseHitSerializer(many=True)

    @staticmethod
    def represent(payload: dict, context: dict) -> dict:
        """``CaseSearchResponseSerializer(payload, context=context).data``,
        written out: the fields above without instantiating (deep-copying) the
        serializer and its nested ones for every request."""
        hit = CaseHitSerializer(context=context)
        return {
            "count": int(payload["count"]),
            "count_capped": bool(payload["count_capped"]),
            "page": int(payload["page"]),
            "pages": int(payload["pages"]),
            "relaxed": bool(payload["relaxed"]),
            "suggestion": str(payload["suggestion"]),
            "terms": [str(term) for term in payload["terms"]],
            "results": [hit.to_representation(h) for h in payload["results"]],
        }


class CaseTextsSerializer(serializers.Serializer):
    """The prose of one language version."""

    title = serializers.CharField(max_length=250)
    symptom = serializers.CharField()
    cause = serializers.CharField(required=False, allow_blank=True, default="")
    resolution_summary = serializers.CharField(required=False, allow_blank=True, default="")
    environment_notes = serializers.CharField(required=False, allow_blank=True, default="")


class StepInputSerializer(serializers.Serializer):
    measure = serializers.SlugField(help_text="a measure slug of /api/v1/measures/")
    status = serializers.ChoiceField(choices=CaseMeasure.Status.choices, default=CaseMeasure.Status.APPLIED)
    outcome = serializers.CharField(required=False, allow_blank=True, default="")


class MetricInputSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    before = serializers.FloatField(required=False, allow_null=True, default=None)
    after = serializers.FloatField(required=False, allow_null=True, default=None)
    unit = serializers.CharField(max_length=30, required=False, allow_blank=True, default="")
    expected = serializers.CharField(max_length=120, required=False, allow_blank=True, default="")
    note = serializers.CharField(required=False, allow_blank=True, default="")


class ReferenceInputSerializer(serializers.Serializer):
    key = serializers.CharField(max_length=80)
    title = serializers.CharField(max_length=250, required=False, allow_blank=True, default="")
    url = serializers.URLField(required=False, allow_blank=True, default="")


class CaseCreateSerializer(CaseTextsSerializer):
    """A new draft case: one language version (``translation`` optionally
    gives the other; without it the other is pre-filled for the author to
    translate), its structured fields and an optional snapshot whose analysis
    fills the signature and the environment."""

    language = serializers.ChoiceField(choices=[("en", "English"), ("zh", "Chinese")])
    slug = serializers.SlugField(max_length=100, required=False, allow_blank=True, default="")
    platform = serializers.ChoiceField(choices=Case.Platform.choices, default=Case.Platform.OTHER)
    hypervisor = serializers.CharField(max_length=80, required=False, allow_blank=True, default="")
    cpu_architecture = serializers.CharField(max_length=20, required=False, allow_blank=True, default="")
    cpu_model = serializers.CharField(max_length=120, required=False, allow_blank=True, default="")
    database = serializers.CharField(max_length=40, required=False, allow_blank=True, default="")
    database_version = serializers.CharField(max_length=60, required=False, allow_blank=True, default="")
    tags = serializers.ListField(child=serializers.CharField(max_length=60), required=False, default=list)
    references = ReferenceInputSerializer(many=True, required=False, default=list)
    metrics = MetricInputSerializer(many=True, required=False, default=list)
    resolution = StepInputSerializer(many=True, required=False, default=list)
    translation = CaseTextsSerializer(required=False, allow_null=True, default=None)
    applies_to = serializers.DictField(
        child=serializers.CharField(max_length=120),
        required=False,
        default=dict,
        help_text='versions the case applies to: {"kernel": ">=3.5, <3.10", "database": "10.4", ...}',
    )
    snapshot = serializers.IntegerField(
        required=False, allow_null=True, default=None, help_text="id of an analysed snapshot you may see"
    )
