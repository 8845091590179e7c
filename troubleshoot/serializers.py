"""API shapes of troubleshooting sessions (the wizard's models, read-only here:
every write goes through the services: ``troubleshoot.lifecycle``, ``snapshots``,
``planning``, ``apply`` ...)."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from kb.models import Measure
from triage.serializers import TicketSerializer
from troubleshoot.lifecycle import PROBLEM_FIELDS
from troubleshoot.models import Comment, PlannedMeasure, Session, SessionSnapshot


class SessionSnapshotSerializer(serializers.ModelSerializer):
    id = serializers.IntegerField(source="snapshot_id")
    # a declared field (the metaclass moves it into ``_declared_fields``), not ``Field.label``
    label = serializers.CharField(source="snapshot.display_name")  # type: ignore[assignment]
    status = serializers.CharField(source="snapshot.status")
    api_url = serializers.SerializerMethodField()

    class Meta:
        model = SessionSnapshot
        fields = ["id", "label", "phase", "status", "attached_at", "api_url"]

    def get_api_url(self, link: SessionSnapshot) -> str:
        path = reverse("api-snapshot-detail", args=[link.snapshot_id])
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path


class PlannedMeasureSerializer(serializers.ModelSerializer):
    measure: serializers.SlugRelatedField[Measure] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True
    )
    applied_by = serializers.CharField(source="applied_by.username", allow_null=True, default=None)

    class Meta:
        model = PlannedMeasure
        fields = [
            "measure", "tier", "position", "status", "commands", "change_made", "notes",
            "metric_after", "step", "applied_by", "applied_at",
        ]  # fmt: skip


class CommentSerializer(serializers.ModelSerializer):
    author = serializers.CharField(source="author.username", read_only=True)

    class Meta:
        model = Comment
        fields = ["author", "text", "created_at"]


class SessionSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    team = serializers.CharField(source="team.slug", read_only=True, allow_null=True, default=None)
    url = serializers.SerializerMethodField()
    snapshots = serializers.SerializerMethodField()
    measures = PlannedMeasureSerializer(many=True, read_only=True)
    assignee = serializers.CharField(
        source="assignee.username", read_only=True, allow_null=True, default=None
    )
    tickets = TicketSerializer(many=True, read_only=True)
    comments = CommentSerializer(many=True, read_only=True)

    class Meta:
        model = Session
        fields = [
            "id", "url", "title", "state", "step", "owner", "team",
            "symptom", "workload", "platform", "database",
            "metric_name", "metric_unit", "metric_baseline", "metric_expected", "metric_direction",
            "metric_after", "outcome", "root_cause", "lessons",
            "snapshots", "measures", "assignee", "tickets", "comments",
            "created_at", "updated_at", "closed_at",
        ]  # fmt: skip

    def get_url(self, session: Session) -> str:
        request = self.context.get("request")
        path = session.get_absolute_url()
        return request.build_absolute_uri(path) if request is not None else path

    @extend_schema_field(SessionSnapshotSerializer(many=True))
    def get_snapshots(self, session: Session) -> list:
        links = session.attachments.select_related("snapshot")
        # many=True makes a ListSerializer (the stubs type the single form)
        return SessionSnapshotSerializer(links, many=True, context=self.context).data  # type: ignore[return-value]


class SessionCreateSerializer(serializers.ModelSerializer):
    title = serializers.CharField(max_length=200)

    class Meta:
        model = Session
        fields = list(PROBLEM_FIELDS)


class AttachSnapshotSerializer(serializers.Serializer):
    snapshot = serializers.IntegerField(min_value=1)
    phase = serializers.ChoiceField(
        choices=SessionSnapshot.Phase.values, default=SessionSnapshot.Phase.BEFORE
    )


class RecordMeasureSerializer(serializers.Serializer):
    measure = serializers.SlugField(max_length=80, help_text="a measure slug of the catalogue")
    tier = serializers.IntegerField(min_value=1, max_value=3, default=1, help_text="when it is planned now")
    status = serializers.ChoiceField(choices=PlannedMeasure.Status.values, required=False)
    change_made = serializers.CharField(required=False, allow_blank=True, max_length=10000)
    notes = serializers.CharField(required=False, allow_blank=True, max_length=10000)
    metric_after = serializers.FloatField(
        required=False, allow_null=True, help_text="the session's metric measured after this measure"
    )


class CloseSessionSerializer(serializers.Serializer):
    outcome = serializers.ChoiceField(choices=Session.Outcome.values)
    root_cause = serializers.CharField(allow_blank=True, default="", max_length=20000)
    lessons = serializers.CharField(allow_blank=True, default="", max_length=20000)
    metric_after = serializers.FloatField(required=False, allow_null=True, help_text="the verified metric")
