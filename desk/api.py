"""``GET /api/v1/hosts/<team>/<host>/``: a host's history, as its page shows it;
``GET /api/v1/search/?q=``: the one search box."""

from __future__ import annotations

from django.utils.translation import get_language
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.language import content_language
from desk import hosts
from desk.search import global_search


def _changes(changes: list[hosts.Change]) -> list[dict]:
    return [{"rule": c.rule, "severity": c.severity, "title": c.title} for c in changes]


class HostDetailView(APIView):
    @extend_schema(
        summary="A host's history",
        description=(
            "Every snapshot of the host you may see, oldest first, with its current findings and "
            "the findings that appeared, cleared (re-checked and no longer found) or could not be "
            "re-checked since the analysed snapshot before it. `team` is the team's slug, or `-`."
        ),
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request, team: str, host: str) -> Response:
        snapshots = list(hosts.host_snapshots(request.user, team=team, host=host))
        rows = hosts.history(snapshots)
        return Response(
            {
                "host": host,
                "team": hosts.team_slug(snapshots[-1]),
                "clusters": sorted({s.cluster for s in snapshots if s.cluster}),
                "snapshots": [
                    {
                        "id": row.snapshot.pk,
                        "created_at": row.snapshot.created_at,
                        "status": row.snapshot.status,
                        "findings": [{"rule": f.rule, "severity": f.severity} for f in row.findings],
                        "appeared": _changes(row.appeared),
                        "cleared": _changes(row.cleared),
                        "not_rechecked": _changes(row.not_rechecked),
                    }
                    for row in rows
                ],
                "sessions": [{"id": s.pk, "title": s.title} for s in hosts.sessions(request.user, snapshots)],
                "acknowledgements": [
                    {"rule": a.rule, "host": a.host, "cluster": a.cluster, "reason": a.reason}
                    for a in hosts.acknowledgements(snapshots, host=host)
                ],
            }
        )


class SearchView(APIView):
    @extend_schema(
        summary="Search hosts, tickets, snapshots, sessions, rules and cases",
        description=(
            "One query (a hostname, a ticket key, `#42`, a rule id or ticket text) over what you may "
            "see, grouped by kind: `groups[].kind` is hosts, tickets, snapshots, sessions, rules or "
            "cases; each item has `title`, `url` (the web page) and `detail`."
        ),
        parameters=[OpenApiParameter("q", str, required=True)],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request) -> Response:
        text = request.query_params.get("q", "")
        groups = global_search(request.user, text, language=content_language(get_language()))
        return Response(
            {
                "q": text,
                "groups": [
                    {
                        "kind": g.kind,
                        "label": g.label,
                        "items": [{"title": i.title, "url": i.url, "detail": i.detail} for i in g.items],
                    }
                    for g in groups
                ],
            }
        )
