"""Read-mostly admin: sessions are changed through the wizard so that every
change reaches the audit trail; the trail itself cannot be edited here."""

from django.contrib import admin

from troubleshoot.models import AuditEntry, PlannedMeasure, Session, SessionSnapshot


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class SnapshotInline(ReadOnlyInline):
    model = SessionSnapshot
    fields = ("snapshot", "phase", "attached_at")
    readonly_fields = fields


class MeasureInline(ReadOnlyInline):
    model = PlannedMeasure
    fields = ("measure", "tier", "position", "status", "step", "metric_after", "applied_by", "applied_at")
    readonly_fields = fields


class AuditInline(ReadOnlyInline):
    model = AuditEntry
    fields = ("at", "user", "action", "target", "old", "new")
    readonly_fields = fields


@admin.register(Session)
class SessionAdmin(admin.ModelAdmin):
    list_display = ("title", "owner", "team", "step", "state", "outcome", "updated_at")
    list_filter = ("state", "outcome", "team")
    search_fields = ("title", "symptom", "root_cause")
    inlines = (SnapshotInline, MeasureInline, AuditInline)

    def has_change_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False
