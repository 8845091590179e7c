from django.contrib import admin

from triage.models import Finding, Snapshot, SnapshotArtifact


class FindingInline(admin.TabularInline):
    model = Finding
    extra = 0
    fields = ("rule", "severity", "host", "title", "engine_version")
    readonly_fields = fields
    can_delete = False
    show_change_link = True


class SnapshotArtifactInline(admin.TabularInline):
    """Evidence added after the upload (read-only: added through the report or the API)."""

    model = SnapshotArtifact
    extra = 0
    fields = ("name", "size", "sha256", "added_by", "created_at")
    readonly_fields = fields
    can_delete = False


@admin.register(Snapshot)
class SnapshotAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "label",
        "original_filename",
        "owner",
        "cluster",
        "kind",
        "status",
        "engine_version",
        "created_at",
    )
    list_filter = ("status", "kind", "engine_version")
    search_fields = ("label", "original_filename", "cluster", "sha256", "owner__username")
    readonly_fields = (
        "sha256",
        "size",
        "file",
        "engine_version",
        "queued_at",
        "started_at",
        "finished_at",
        "parse_seconds",
        "rules_seconds",
        "attempts",
        "last_error",
    )
    inlines = [FindingInline, SnapshotArtifactInline]


@admin.register(Finding)
class FindingAdmin(admin.ModelAdmin):
    list_display = ("id", "snapshot", "rule", "severity", "host", "engine_version")
    list_filter = ("severity", "engine_version")
    search_fields = ("rule", "title", "host")
    raw_id_fields = ("snapshot",)
