"""Admin for the knowledge base. Saves go through kb.services so the search
index and signature rules stay in sync with what editors change here."""

from django.contrib import admin

from kb import services
from kb.models import Case, CaseMeasure, Measure, Metric, Reference, Tag, TermStat


class CaseMeasureInline(admin.TabularInline):
    model = CaseMeasure
    extra = 0
    autocomplete_fields = ["measure"]
    ordering = ["order"]


class MetricInline(admin.TabularInline):
    model = Metric
    extra = 0


class ReferenceInline(admin.TabularInline):
    model = Reference
    extra = 0


@admin.register(Case)
class CaseAdmin(admin.ModelAdmin):
    list_display = [
        "slug",
        "language",
        "title",
        "state",
        "platform",
        "database",
        "signature_engine_version",
        "updated_at",
    ]
    list_filter = ["state", "language", "platform", "database", "tags"]
    search_fields = ["slug", "title", "symptom"]
    filter_horizontal = ["tags"]
    inlines = [CaseMeasureInline, MetricInline, ReferenceInline]
    readonly_fields = ["created_at", "updated_at", "published_at", "search_dictionary_version"]
    raw_id_fields = ["author", "reviewer"]
    fieldsets = [
        (None, {"fields": ["slug", "language", "title", "state", "author", "reviewer"]}),
        ("KCS", {"fields": ["symptom", "environment_notes", "cause", "resolution_summary", "tags"]}),
        (
            "Environment",
            {
                "fields": [
                    "platform",
                    "hypervisor",
                    "cpu_architecture",
                    "cpu_model",
                    "database",
                    "database_version",
                ]
            },
        ),
        ("Signature", {"fields": ["signature", "signature_engine_version", "signature_source"]}),
        ("Timestamps", {"fields": ["created_at", "updated_at", "published_at", "search_dictionary_version"]}),
    ]

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        # Inlines and tags are saved now: re-save through the service so the
        # index, the rule rows and published_at follow.
        services.save_case(form.instance)

    def delete_model(self, request, obj):
        services.delete_case(obj)

    def delete_queryset(self, request, queryset):
        for case in queryset:
            services.delete_case(case)


@admin.register(Measure)
class MeasureAdmin(admin.ModelAdmin):
    list_display = ["slug", "title_en", "disruption", "config_kind"]
    list_filter = ["disruption", "config_kind"]
    search_fields = ["slug", "title_en", "title_zh"]


@admin.register(Tag)
class TagAdmin(admin.ModelAdmin):
    search_fields = ["name"]


@admin.register(TermStat)
class TermStatAdmin(admin.ModelAdmin):
    list_display = ["term", "ndoc"]
    search_fields = ["term"]
    ordering = ["-ndoc"]
