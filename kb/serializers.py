from rest_framework import serializers

from kb.models import Case, CaseMeasure, Measure, Metric, Reference


class MeasureSerializer(serializers.ModelSerializer):
    class Meta:
        model = Measure
        fields = [
            "slug", "title_en", "title_zh", "what_why_en", "what_why_zh", "config_kind",
            "commands", "rollback", "disruption", "remeasure", "rules",
        ]  # fmt: skip


class CaseMeasureSerializer(serializers.ModelSerializer):
    measure = serializers.SlugRelatedField(slug_field="slug", read_only=True)
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
    tags = serializers.SlugRelatedField(slug_field="name", many=True, read_only=True)
    resolution = CaseMeasureSerializer(source="steps", many=True, read_only=True)
    metrics = MetricSerializer(many=True, read_only=True)
    references = ReferenceSerializer(many=True, read_only=True)
    translations = serializers.SerializerMethodField()
    url = serializers.CharField(source="get_absolute_url", read_only=True)

    class Meta:
        model = Case
        fields = [
            "slug", "language", "title", "state", "symptom", "environment_notes", "cause",
            "resolution_summary", "resolution", "metrics", "references", "tags",
            "platform", "hypervisor", "cpu_architecture", "cpu_model", "database", "database_version",
            "signature", "signature_engine_version", "translations", "url",
            "created_at", "updated_at", "published_at",
        ]  # fmt: skip

    def get_translations(self, case) -> list[dict]:
        return [{"language": c.language, "title": c.title} for c in case.translations()]


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


class CaseSearchResponseSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    count_capped = serializers.BooleanField()
    page = serializers.IntegerField()
    pages = serializers.IntegerField()
    relaxed = serializers.BooleanField(help_text="no case had every query word; any word matched")
    terms = serializers.ListField(child=serializers.CharField())
    results = CaseHitSerializer(many=True)
