"""REST API of troubleshooting sessions: create, attach a snapshot, record a
measure and its metric, close. Thin: the services (``troubleshoot.lifecycle``,
``snapshots``, ``planning``, ``apply``) do the work (and write the audit trail);
sessions the user cannot see are 404."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kb.models import Measure
from triage.api import SnapshotListCreateView
from triage.models import Snapshot
from triage.selectors import visible_snapshots
from troubleshoot import access, apply, lifecycle, planning, snapshots
from troubleshoot.models import Session
from troubleshoot.serializers import (
    AttachSnapshotSerializer,
    CloseSessionSerializer,
    RecordMeasureSerializer,
    SessionCreateSerializer,
    SessionSerializer,
)


def _sessions(request: Request):
    return (
        access.visible_sessions(request.user)
        .select_related("owner", "team", "assignee")
        .prefetch_related("tickets", "comments__author")
    )


def _editable_session(request: Request, pk: int) -> Session:
    session = get_object_or_404(_sessions(request), pk=pk)
    if not access.can_edit(request.user, session):
        raise PermissionDenied("you may not change this session")
    return session


def _detail(request: Request, session: Session, code: int = status.HTTP_200_OK) -> Response:
    session = (
        _sessions(request).prefetch_related("measures__measure", "measures__applied_by").get(pk=session.pk)
    )
    return Response(SessionSerializer(session, context={"request": request}).data, status=code)


class SessionListCreateView(generics.GenericAPIView):
    serializer_class = SessionSerializer

    def get_queryset(self):
        return _sessions(self.request).prefetch_related("measures__measure", "measures__applied_by")

    @extend_schema(responses=SessionSerializer(many=True))
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    @extend_schema(request=SessionCreateSerializer, responses={201: SessionSerializer})
    def post(self, request: Request) -> Response:
        form = SessionCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = dict(form.validated_data)
        title = data.pop("title")
        session = lifecycle.create_session(owner=request.user, title=title, **data)
        return _detail(request, session, status.HTTP_201_CREATED)


class SnapshotUploadView(SnapshotListCreateView):
    """``POST /api/v1/snapshots/`` with the session parts: an upload given a
    ``session`` (and ``phase``) is analysed with that phase's other files and
    attached to the session. The one path by which an upload reaches a session."""

    def session_for_upload(self, request: Request, session_id: int | None) -> Session | None:
        if session_id is None:
            return None
        session = access.visible_sessions(request.user).filter(pk=session_id).first()
        if session is None or not access.can_edit(request.user, session):
            raise NotFound("No such troubleshooting session.")
        return session

    def session_cluster(self, session: Session, phase: str) -> str:
        return snapshots.cluster_name(session, phase)

    def attach_to_session(
        self, request: Request, *, session: Session, snapshot: Snapshot, phase: str
    ) -> None:
        snapshots.attach_snapshot(session=session, user=request.user, snapshot=snapshot, phase=phase)


class SessionDetailView(APIView):
    @extend_schema(responses=SessionSerializer)
    def get(self, request: Request, pk: int) -> Response:
        return _detail(request, get_object_or_404(_sessions(request), pk=pk))


class SessionAttachSnapshotView(APIView):
    @extend_schema(request=AttachSnapshotSerializer, responses={200: SessionSerializer})
    def post(self, request: Request, pk: int) -> Response:
        session = _editable_session(request, pk)
        form = AttachSnapshotSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        snapshot = visible_snapshots(request.user).filter(pk=form.validated_data["snapshot"]).first()
        if snapshot is None:
            raise NotFound("No such snapshot.")
        snapshots.attach_snapshot(
            session=session, user=request.user, snapshot=snapshot, phase=form.validated_data["phase"]
        )
        return _detail(request, session)


class SessionRecordMeasureView(APIView):
    @extend_schema(
        summary="Record a measure and its metric",
        description=(
            "Plans the measure when it is not in the plan yet (refused with 400 when the session's "
            "constraints forbid it), then records its status, the change made, notes and the metric "
            "measured after it. Every change is written to the session's audit trail."
        ),
        request=RecordMeasureSerializer,
        responses={200: SessionSerializer},
    )
    def post(self, request: Request, pk: int) -> Response:
        session = _editable_session(request, pk)
        form = RecordMeasureSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        if not Measure.objects.filter(slug=data["measure"]).exists():
            raise ValidationError({"measure": ["unknown measure"]})
        try:
            with transaction.atomic():
                pm = planning.plan_measure(
                    session=session, user=request.user, slug=data["measure"], tier=data["tier"]
                )
                apply.record_application(
                    session=session,
                    user=request.user,
                    pm=pm,
                    status=data.get("status"),
                    change_made=data.get("change_made"),
                    notes=data.get("notes"),
                    metric_after=data.get("metric_after"),
                    clear_metric="metric_after" in data and data["metric_after"] is None,
                )
        except ValueError as exc:
            raise ValidationError({"measure": [str(exc)]}) from None
        return _detail(request, session)


class SessionCloseView(APIView):
    @extend_schema(request=CloseSessionSerializer, responses={200: SessionSerializer})
    def post(self, request: Request, pk: int) -> Response:
        session = _editable_session(request, pk)
        form = CloseSessionSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            with transaction.atomic():
                if data.get("metric_after") is not None:
                    lifecycle.update_session(
                        session=session, user=request.user, changes={"metric_after": data["metric_after"]}
                    )
                lifecycle.close_session(
                    session=session,
                    user=request.user,
                    outcome=data["outcome"],
                    root_cause=data["root_cause"],
                    lessons=data["lessons"],
                )
        except ValueError as exc:
            raise ValidationError({"outcome": [str(exc)]}) from None
        return _detail(request, session)
