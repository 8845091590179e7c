"""REST API of the knowledge base (thin: kb.search does the work)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from kb import authoring, search, services
from kb.access import can_create_case, case_search_filters, readable_cases
from kb.forms import CaseSearchForm
from kb.models import Case, Measure
from kb.serializers import (
    CaseCreateSerializer,
    CaseSearchResponseSerializer,
    CaseSerializer,
    MeasureSerializer,
)
from kb.views import reader_language

SEARCH_PARAMETERS = [
    OpenApiParameter("q", str, description="words in English or Chinese, identifiers, rule IDs"),
    OpenApiParameter("platform", str, enum=[c for c, _ in Case.Platform.choices]),
    OpenApiParameter("database", str),
    OpenApiParameter("rule", str, description="a rule ID of the case signature"),
    OpenApiParameter("state", str, enum=[c for c, _ in Case.State.choices], description="default: published"),
    OpenApiParameter("language", str, enum=["en", "zh"]),
    OpenApiParameter("page", int),
]


class CaseSearchView(APIView):
    @extend_schema(
        operation_id="api_v1_cases_search",
        parameters=SEARCH_PARAMETERS,
        responses=CaseSearchResponseSerializer,
    )
    def get(self, request: Request) -> Response:
        form = CaseSearchForm(request.query_params)
        if not form.is_valid():
            raise ValidationError(form.errors)  # type: ignore[arg-type]  # a dict of message lists
        data = form.cleaned_data
        filters = {"state": data["state"] or Case.State.PUBLISHED}
        filters.update({k: data[k] for k in ("platform", "database", "rule", "language") if data[k]})
        results = search.search(
            data["q"],
            filters=case_search_filters(request.user, filters),
            page=data["page"] or 1,
            language=reader_language(),
        )
        payload = {
            "count": results.total,
            "count_capped": results.total_capped,
            "page": results.page,
            "pages": results.pages,
            "relaxed": results.relaxed,
            "suggestion": results.suggestion,
            "terms": results.query.terms,
            "results": results.hits,
        }
        counts = {hit.case.slug: hit.reuse_count for hit in results.hits}
        return Response(CaseSearchResponseSerializer.represent(payload, context={"reuse_counts": counts}))

    @extend_schema(
        operation_id="api_v1_cases_create",
        request=CaseCreateSerializer,
        responses={201: CaseSerializer},
        description="Create a draft case (both language versions; the review workflow publishes it).",
    )
    def post(self, request: Request) -> Response:
        if not can_create_case(request.user):
            raise PermissionDenied("only team members and support staff write cases")
        serializer = CaseCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        structured = {
            name: data[name]
            for name in ("slug", *authoring.ENV_FIELDS, "tags", "references", "metrics", "applies_to")
        }
        docs = [
            authoring.CaseDocument(
                language=data["language"],
                **{name: data[name] for name in services.TEXT_FIELDS},
                steps=data["resolution"],
                **structured,
            )
        ]
        if data["translation"]:
            other = "zh" if data["language"] == "en" else "en"
            docs.append(
                authoring.CaseDocument(
                    language=other,
                    **{name: data["translation"][name] for name in services.TEXT_FIELDS},
                    steps=data["resolution"],
                    **structured,
                )
            )
        try:
            analysis = (
                authoring.analyse_snapshot(user=request.user, snapshot_id=data["snapshot"])
                if data["snapshot"]
                else None
            )
            created = authoring.do_create_case(user=request.user, documents=docs, analysis=analysis)
        except authoring.CaseInputError as exc:
            raise ValidationError({"detail": str(exc)}) from None
        return Response(CaseSerializer(created[data["language"]]).data, status=status.HTTP_201_CREATED)


class CaseDetailView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("language", str, enum=["en", "zh"], description="default: en, else any")
        ],
        responses=CaseSerializer,
    )
    def get(self, request: Request, slug: str) -> Response:
        versions = {
            c.language: c
            for c in readable_cases(request.user)
            .filter(slug=slug)
            .prefetch_related("tags", "metrics", "references", "steps__measure")
        }
        wanted = request.query_params.get("language")
        case = versions.get(wanted) if wanted else (versions.get("en") or next(iter(versions.values()), None))
        if case is None:
            raise NotFound("no such case")
        return Response(CaseSerializer(case).data)


class MeasureListView(generics.ListAPIView):
    queryset = Measure.objects.all()
    serializer_class = MeasureSerializer
    pagination_class = None


class MeasureDetailView(generics.RetrieveAPIView):
    queryset = Measure.objects.all()
    serializer_class = MeasureSerializer
    lookup_field = "slug"
