"""REST API of snapshots and the rule catalogue (thin: the uploads, analysis,
selectors, acknowledgements and tickets modules of the app do the work).

Every snapshot lookup goes through ``selectors.visible_snapshots(user)``, so
another team's snapshot is a 404, never a 403 that would confirm it exists.
"""

from __future__ import annotations

import tempfile
from typing import Any

from django.conf import settings
from django.core.files import File
from django.db.models import F
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.utils.translation import get_language
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.exceptions import NotFound, ParseError, ValidationError
from rest_framework.parsers import BaseParser, FormParser, MultiPartParser
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import BaseThrottle
from rest_framework.views import APIView

from config import ratelimit
from config.api_errors import ErrorSerializer, FirstRendererNegotiation, PayloadTooLarge
from config.request_limits import MULTIPART_SLACK, upload_limit
from engine.remedies.playbook import MEDIA_TYPE as PLAYBOOK_MEDIA_TYPE
from engine.remedies.playbook import in_playbook_language
from engine.rules import load_all as load_rules
from kb import api as kb_api
from kb import authoring
from triage import acknowledgements, analysis, fleetview, selectors, tickets, uploads
from triage.models import Snapshot
from triage.reports import MARKUPS, render_report, report_language
from triage.serializers import (
    AcknowledgementSerializer,
    AcknowledgeSerializer,
    ArtifactAcceptedSerializer,
    ArtifactUploadSerializer,
    RuleDetailSerializer,
    RuleSerializer,
    SimilarCaseSerializer,
    SnapshotAcceptedSerializer,
    SnapshotDetailSerializer,
    SnapshotListSerializer,
    SnapshotUploadSerializer,
    TicketSerializer,
    similar_cases_data,
)
from triage.views import playbook_response

RAW_TYPES = ("application/gzip", "application/x-gzip", "application/x-xz", "application/x-tar", "text/plain")
RAW_NAMES = {
    "application/gzip": "upload.tar.gz",
    "application/x-gzip": "upload.tar.gz",
    "application/x-xz": "upload.tar.xz",
    "application/x-tar": "upload.tar",
    "text/plain": "upload.txt",
}
CHUNK = 1 << 20


def _too_large() -> PayloadTooLarge:
    return PayloadTooLarge(f"The upload is larger than the limit of {upload_limit()} bytes.")


class UploadThrottle(BaseThrottle):
    """The ``uploads`` rate (settings DEFAULT_THROTTLE_RATES) on POSTs only:
    reading snapshots and polling their status stay unthrottled. The counter
    is the one the web upload form and the wizard use (config.ratelimit)."""

    def __init__(self):
        self.decision = ratelimit.Decision(True, 0)

    def allow_request(self, request, view) -> bool:
        if request.method != "POST":
            return True
        size = request.META.get("CONTENT_LENGTH") or ""
        self.decision = ratelimit.hit_uploads(
            request.user, self.get_ident(request), size=int(size) if size.isdigit() else 0
        )
        return self.decision.allowed

    def wait(self) -> int | None:
        return self.decision.retry_after or None


class RawUploadParser(BaseParser):
    """A request body that is the upload itself (``curl --data-binary @x.tar.gz``).
    Spooled to a temporary file under FILE_UPLOAD_TEMP_DIR with a byte count,
    so a body without Content-Length still cannot exceed the limit."""

    media_type = "application/gzip"

    def parse(self, stream, media_type=None, parser_context=None):
        limit = upload_limit()
        spool = tempfile.SpooledTemporaryFile(  # noqa: SIM115 - handed to the view, closed there
            max_size=settings.FILE_UPLOAD_MAX_MEMORY_SIZE, dir=settings.FILE_UPLOAD_TEMP_DIR
        )
        size = 0
        if stream is not None:
            while True:
                chunk = stream.read(CHUNK)
                if not chunk:
                    break
                size += len(chunk)
                if size > limit:
                    spool.close()
                    raise _too_large()
                spool.write(chunk)
        spool.seek(0)
        base = (self.media_type or "").split(";")[0]
        return {"raw": spool, "raw_size": size, "raw_name": RAW_NAMES.get(base, "upload")}


def _raw_parser(media: str) -> type[RawUploadParser]:
    name = "Raw" + "".join(ch for ch in media.title() if ch.isalnum()) + "Parser"
    return type(name, (RawUploadParser,), {"media_type": media})


RAW_PARSERS = [_raw_parser(m) for m in RAW_TYPES]


class SnapshotFilterSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=Snapshot.Status.values, required=False)
    kind = serializers.ChoiceField(choices=Snapshot.Kind.values, required=False)
    cluster = serializers.CharField(required=False, allow_blank=True, max_length=200)
    rule = serializers.CharField(required=False, allow_blank=True, max_length=100)


class RawQuerySerializer(serializers.Serializer):
    # a declared field (the metaclass moves it into ``_declared_fields``), not ``Field.label``
    label = serializers.CharField(  # type: ignore[assignment]
        required=False, allow_blank=True, max_length=200
    )
    cluster = serializers.CharField(required=False, allow_blank=True, max_length=200)
    filename = serializers.CharField(required=False, allow_blank=True, max_length=200)
    session = serializers.IntegerField(required=False, min_value=1)
    phase = serializers.ChoiceField(choices=["before", "after"], required=False, default="before")


def _body_type(request: Request) -> str:
    """The request's media type, once its declared length is within the upload
    limit: a body too large is refused before a byte of it is read."""
    limit = upload_limit()
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        raise ParseError("Invalid Content-Length.") from None
    if declared > limit + MULTIPART_SLACK:
        raise _too_large()
    content_type = (request.content_type or "").split(";")[0].strip().lower()
    if content_type in RAW_TYPES and declared > limit:
        raise _too_large()
    return content_type


def _raw_spool(request: Request):
    body: Any = request.data  # a dict of the multipart parts, or what a JSON body held
    spool = body.get("raw") if hasattr(body, "get") else None
    if spool is None:
        raise ParseError("Empty request body.")
    return spool, body.get("raw_name") or "upload"


def _visible(request: Request):
    return selectors.visible_snapshots(request.user)


def get_visible_snapshot(request: Request, pk: int) -> Snapshot:
    return get_object_or_404(_visible(request).select_related("owner", "team"), pk=pk)


RAW_BODY = {media: OpenApiTypes.BINARY for media in RAW_TYPES}
UPLOAD_ERRORS = {
    413: OpenApiResponse(ErrorSerializer, description="the upload is larger than the limit"),
    415: OpenApiResponse(ErrorSerializer, description="not multipart, gzip, xz, tar or text"),
}


class SnapshotListCreateView(generics.GenericAPIView):
    parser_classes = [MultiPartParser, FormParser, *RAW_PARSERS]
    throttle_classes = [UploadThrottle]
    serializer_class = SnapshotListSerializer

    def get_queryset(self):
        return _visible(self.request).select_related("owner", "team")

    @extend_schema(
        parameters=[
            OpenApiParameter("status", str, enum=Snapshot.Status.values),
            OpenApiParameter("kind", str, enum=Snapshot.Kind.values),
            OpenApiParameter("cluster", str),
            OpenApiParameter("rule", str, description="snapshots with a current finding of this rule ID"),
        ],
        responses=SnapshotListSerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        filters = SnapshotFilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        data = filters.validated_data
        qs = self.get_queryset()
        if data.get("status"):
            qs = qs.filter(status=data["status"])
        if data.get("kind"):
            qs = qs.filter(kind=data["kind"])
        if data.get("cluster"):
            qs = qs.filter(cluster=data["cluster"])
        if data.get("rule"):
            qs = qs.filter(
                findings__rule=data["rule"], findings__engine_version=F("engine_version")
            ).distinct()
        page = self.paginate_queryset(qs)
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    @extend_schema(
        summary="Upload a snapshot",
        description=(
            "Multipart (field `file`, optional `label`, `cluster`, `session`, `phase`), or the raw "
            "file as the body with Content-Type application/gzip, application/x-xz, application/x-tar "
            "or text/plain (then `label`, `cluster`, `filename`, `session`, `phase` are query "
            "parameters). Answers 202 at once; poll `api_url` until `status` is `done` or `failed`. "
            "An identical upload by the same user (the same bytes) answers 200 with the existing "
            'snapshot\'s `id` and `"duplicate": true`; a `label` or `cluster` given is applied to it '
            "(a new cluster queues it again). An upload that is binary (a PDF, an image, random bytes) "
            "is refused with 400 and the reason in `file`."
        ),
        parameters=[
            OpenApiParameter("label", str, description="raw bodies only"),
            OpenApiParameter("cluster", str, description="raw bodies only"),
            OpenApiParameter("filename", str, description="raw bodies only: the original file name"),
            OpenApiParameter("session", int, description="raw bodies only"),
            OpenApiParameter("phase", str, enum=["before", "after"], description="raw bodies only"),
        ],
        request={"multipart/form-data": SnapshotUploadSerializer, **RAW_BODY},
        responses={202: SnapshotAcceptedSerializer, 200: SnapshotAcceptedSerializer, **UPLOAD_ERRORS},
    )
    def post(self, request: Request) -> Response:
        if _body_type(request) in RAW_TYPES:
            return self._create_raw(request)
        return self._create_multipart(request)

    def _create_multipart(self, request: Request) -> Response:
        form = SnapshotUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        upload = data["file"]
        if upload.size > upload_limit():
            raise _too_large()
        session = self.session_for_upload(request, data.get("session"))
        return self._create(
            request,
            uploaded_file=upload,
            filename=upload.name or "upload",
            label=data.get("label", ""),
            cluster=data.get("cluster", ""),
            session=session,
            phase=data.get("phase") or "before",
        )

    def _create_raw(self, request: Request) -> Response:
        query = RawQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        params = query.validated_data
        spool, raw_name = _raw_spool(request)
        try:
            session = self.session_for_upload(request, params.get("session"))
            return self._create(
                request,
                uploaded_file=File(spool, name=params.get("filename") or raw_name),
                filename=params.get("filename") or raw_name,
                label=params.get("label", ""),
                cluster=params.get("cluster", ""),
                session=session,
                phase=params.get("phase") or "before",
            )
        finally:
            spool.close()

    # Triage knows no troubleshooting session: the sessions app serves this
    # route with a subclass that overrides these two (troubleshoot.api.SnapshotUploadView).
    def session_for_upload(self, request: Request, session_id: int | None) -> Any:
        """The session an upload is attached to (404 when the user may not add to it)."""
        if session_id is None:
            return None
        raise NotFound("No such troubleshooting session.")

    def attach_to_session(self, request: Request, *, session: Any, snapshot: Snapshot, phase: str) -> None:
        """Attach the stored upload to ``session`` (never called without one)."""

    def session_cluster(self, session: Any, phase: str) -> str:
        """The cluster the files of one phase of a session are analysed in."""
        return ""

    def _create(self, request: Request, *, uploaded_file, filename, label, cluster, session, phase):
        if session is not None and not cluster:
            # The files of one phase of a session are analysed together.
            cluster = self.session_cluster(session, phase)
        try:
            snapshot = uploads.create_snapshot(
                owner=request.user,
                uploaded_file=uploaded_file,
                filename=filename,
                label=label,
                cluster=cluster,
            )
        except uploads.UploadRejected as exc:
            if "larger than" in str(exc):
                raise _too_large() from None
            raise ValidationError({"file": [str(exc)]}) from None
        if session is not None:
            self.attach_to_session(request, session=session, snapshot=snapshot, phase=phase)
        payload = SnapshotAcceptedSerializer(snapshot, context={"request": request}).data
        headers = {"Location": payload["api_url"]}
        code = status.HTTP_200_OK if payload["duplicate"] else status.HTTP_202_ACCEPTED
        return Response(payload, status=code, headers=headers)


class SnapshotDetailView(APIView):
    @extend_schema(responses=SnapshotDetailSerializer)
    def get(self, request: Request, pk: int) -> Response:
        snapshot = get_visible_snapshot(request, pk)
        return Response(SnapshotDetailSerializer(snapshot, context={"request": request}).data)


class ArtifactQuerySerializer(serializers.Serializer):
    name = serializers.CharField(required=False, allow_blank=True, max_length=200)


class SnapshotArtifactCreateView(APIView):
    """Evidence added to an existing snapshot (issue 12, "Missing evidence")."""

    parser_classes = [MultiPartParser, FormParser, *RAW_PARSERS]
    throttle_classes = [UploadThrottle]
    throttle_scope = "uploads"

    @extend_schema(
        summary="Add evidence to a snapshot",
        description=(
            "Adds a command's output (what the snapshot's `not_checked` list asks for) to the SAME "
            "snapshot and queues it for analysis again; its earlier findings are kept in `history`. "
            "The body is the raw output with Content-Type text/plain (or a gzip/xz/tar file; then the "
            "optional `name` is a query parameter), or multipart with the field `file` and an "
            "optional `name`. Limits as for uploads. Answers 202 at once with the snapshot and the "
            "stored artifact; poll `api_url` until `status` is `done` or `failed`. The same content "
            "added twice is stored once and not analysed again. A binary file (a PDF, an image, random "
            "bytes; not an archive) is refused with 400 and the reason in `file`."
        ),
        parameters=[OpenApiParameter("name", str, description="raw bodies only: the artifact's name")],
        request={"multipart/form-data": ArtifactUploadSerializer, **RAW_BODY},
        responses={202: ArtifactAcceptedSerializer, **UPLOAD_ERRORS},
    )
    def post(self, request: Request, pk: int) -> Response:
        snapshot = get_visible_snapshot(request, pk)
        if _body_type(request) in RAW_TYPES:
            query = ArtifactQuerySerializer(data=request.query_params)
            query.is_valid(raise_exception=True)
            spool, raw_name = _raw_spool(request)
            name = query.validated_data.get("name") or ""
            try:
                return self._add(
                    request, snapshot, uploaded_file=File(spool, name=name or raw_name), name=name
                )
            finally:
                spool.close()
        form = ArtifactUploadSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        upload = form.validated_data["file"]
        if upload.size > upload_limit():
            raise _too_large()
        return self._add(request, snapshot, uploaded_file=upload, name=form.validated_data.get("name") or "")

    def _add(self, request: Request, snapshot: Snapshot, *, uploaded_file, name: str) -> Response:
        try:
            artifact = uploads.add_artifact(
                snapshot=snapshot, user=request.user, uploaded_file=uploaded_file, name=name
            )
        except uploads.UploadRejected as exc:
            if "larger than" in str(exc):
                raise _too_large() from None
            raise ValidationError({"file": [str(exc)]}) from None
        snapshot.refresh_from_db()
        payload = ArtifactAcceptedSerializer(
            snapshot, context={"request": request, "artifact": artifact}
        ).data
        return Response(payload, status=status.HTTP_202_ACCEPTED, headers={"Location": payload["api_url"]})


class SnapshotReanalyzeView(APIView):
    throttle_classes = [UploadThrottle]

    @extend_schema(request=None, responses={202: SnapshotAcceptedSerializer})
    def post(self, request: Request, pk: int) -> Response:
        snapshot = get_visible_snapshot(request, pk)
        analysis.reanalyze(snapshots=[snapshot], enqueue=True)
        snapshot.refresh_from_db()
        data = SnapshotAcceptedSerializer(snapshot, context={"request": request}).data
        return Response(data, status=status.HTTP_202_ACCEPTED)


class SnapshotSimilarView(APIView):
    @extend_schema(responses=SimilarCaseSerializer(many=True))
    def get(self, request: Request, pk: int) -> Response:
        snapshot = get_visible_snapshot(request, pk)
        return Response(similar_cases_data(snapshot, request))


REPORT_LANGUAGE = OpenApiParameter(
    "lang", str, enum=["en", "zh-hans"], description="default: the Accept-Language header"
)


class SnapshotReportMarkdownView(APIView):
    renderer_classes = [JSONRenderer]
    content_negotiation_class = FirstRendererNegotiation
    markup = "markdown"

    @extend_schema(
        summary="Ticket-ready Markdown report",
        parameters=[REPORT_LANGUAGE],
        responses={(200, "text/markdown"): OpenApiTypes.STR},
    )
    def get(self, request: Request, pk: int) -> HttpResponse:
        snapshot = get_visible_snapshot(request, pk)
        language = report_language(request.query_params.get("lang") or get_language())
        markup = MARKUPS[self.markup]
        text = render_report(
            snapshot, language=language, base_url=request.build_absolute_uri("/"), markup=self.markup
        )
        response = HttpResponse(text, content_type=markup.content_type)
        response["Content-Language"] = "zh-Hans" if language == "zh" else "en"
        response["Content-Disposition"] = f'inline; filename="snapshot-{snapshot.pk}.{markup.extension}"'
        return response


class SnapshotReportJiraView(SnapshotReportMarkdownView):
    markup = "jira"

    @extend_schema(
        summary="The same report in Jira wiki markup",
        parameters=[REPORT_LANGUAGE],
        responses={(200, "text/plain"): OpenApiTypes.STR},
    )
    def get(self, request: Request, pk: int) -> HttpResponse:
        return super().get(request, pk)


class SnapshotPlaybookView(APIView):
    """The snapshot's host-level remedies as an Ansible playbook (apply play,
    and a rollback play run with ``--tags rollback``)."""

    renderer_classes = [JSONRenderer]
    content_negotiation_class = FirstRendererNegotiation

    @extend_schema(
        summary="Host-level remedies as an Ansible playbook",
        responses={(200, PLAYBOOK_MEDIA_TYPE): OpenApiTypes.STR},
    )
    @in_playbook_language
    def get(self, request: Request, pk: int) -> HttpResponse:
        snapshot = get_visible_snapshot(request, pk)
        if snapshot.status != Snapshot.Status.DONE:
            raise NotFound("The snapshot is not analysed yet.")
        return playbook_response(selectors.host_remedies(snapshot), snapshot=snapshot)


class SnapshotGuestPlaybookView(APIView):
    """One guest's domain XML patch as an Ansible playbook."""

    renderer_classes = [JSONRenderer]
    content_negotiation_class = FirstRendererNegotiation

    @extend_schema(
        summary="A guest's domain patch as an Ansible playbook",
        responses={(200, PLAYBOOK_MEDIA_TYPE): OpenApiTypes.STR},
    )
    @in_playbook_language
    def get(self, request: Request, pk: int, domain: str) -> HttpResponse:
        snapshot = get_visible_snapshot(request, pk)
        try:
            result = selectors.guest_remedy(snapshot, domain)
        except (FileNotFoundError, LookupError):
            raise NotFound("No such guest in this snapshot.") from None
        return playbook_response([result], snapshot=snapshot, suffix="-guest")


class RuleListView(APIView):
    @extend_schema(
        summary="The rule catalogue, the rules affecting the most hosts first",
        responses=RuleSerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        counts = fleetview.affected_counts(_visible(request))
        specs = sorted(load_rules().values(), key=lambda s: (-counts.get(s.id, 0), s.id))
        return Response(
            [{**RuleSerializer.from_spec(s), "hosts_affected": counts.get(s.id, 0)} for s in specs]
        )


class RuleDetailView(APIView):
    @extend_schema(
        summary="One rule with every affected host, weekly counts and acknowledgements",
        responses=RuleDetailSerializer,
    )
    def get(self, request: Request, rule_id: str) -> Response:
        spec = load_rules().get(rule_id)
        if spec is None:
            raise NotFound("No such rule.")
        data = RuleDetailSerializer.build(spec, visible=_visible(request), user=request.user, request=request)
        return Response(data)


class SnapshotAcknowledgeView(APIView):
    @extend_schema(
        summary="Acknowledge one finding of the snapshot for its host or its cluster",
        request=AcknowledgeSerializer,
        responses={201: AcknowledgementSerializer},
    )
    def post(self, request: Request, pk: int) -> Response:
        snapshot = get_visible_snapshot(request, pk)
        body = AcknowledgeSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            ack = acknowledgements.acknowledge(user=request.user, snapshot=snapshot, **body.validated_data)
        except acknowledgements.AcknowledgementRejected as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return Response(AcknowledgementSerializer(ack).data, status=status.HTTP_201_CREATED)


class AcknowledgementRevokeView(APIView):
    @extend_schema(summary="Withdraw an acknowledgement", request=None, responses=AcknowledgementSerializer)
    def post(self, request: Request, pk: int) -> Response:
        ack = acknowledgements.visible_acknowledgement(request.user, pk)
        if ack is None:
            raise NotFound("No such acknowledgement.")
        acknowledgements.revoke_acknowledgement(user=request.user, acknowledgement=ack)
        return Response(AcknowledgementSerializer(ack).data)


class SnapshotTicketView(APIView):
    @extend_schema(
        summary="Link the snapshot to an external ticket",
        request=TicketSerializer,
        responses={201: TicketSerializer},
    )
    def post(self, request: Request, pk: int) -> Response:
        snapshot = get_visible_snapshot(request, pk)
        data: Any = request.data  # a form or a JSON object
        try:
            ticket = tickets.add_ticket(
                user=request.user,
                snapshot=snapshot,
                key=str(data.get("key") or ""),
                url=str(data.get("url") or ""),
            )
        except tickets.TicketRejected as exc:
            raise ValidationError({"detail": str(exc)}) from exc
        return Response(TicketSerializer(ticket).data, status=status.HTTP_201_CREATED)


class CaseListCreateView(kb_api.CaseSearchView):
    """``GET``/``POST /api/v1/cases/`` (``kb.api.CaseSearchView``), where a new
    case may name an analysed snapshot the caller may see as its environment
    and signature."""

    def snapshot_analysis(self, user, snapshot_id: int) -> authoring.SnapshotAnalysis:
        return selectors.case_snapshot_analysis(user, snapshot_id)
