"""Pages of the support desk: a host's history, the diff of two of its
snapshots, and the one search box. Thin: ``desk.hosts`` and ``desk.search`` read."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import get_language

from config.language import content_language
from desk import hosts
from desk.charts import findings_over_time
from desk.search import global_search


def host_detail(request: HttpRequest, team: str, host: str) -> HttpResponse:
    snapshots = list(hosts.host_snapshots(request.user, team=team, host=host))
    rows = hosts.history(snapshots)
    done = [row for row in rows if row.snapshot.status == "done"]
    diff_pair = (done[-2].snapshot.pk, done[-1].snapshot.pk) if len(done) >= 2 else None
    return render(
        request,
        "desk/host_detail.html",
        {
            "team_part": team,
            "host": host,
            "team": snapshots[-1].team,
            "rows": list(reversed(rows)),
            "latest": snapshots[-1],
            "clusters": sorted({s.cluster for s in snapshots if s.cluster}),
            "chart": findings_over_time(done),
            "acknowledgements": hosts.acknowledgements(snapshots, host=host),
            "sessions": hosts.sessions(request.user, snapshots),
            "diff_pair": diff_pair,
        },
    )


def host_diff(request: HttpRequest, team: str, host: str) -> HttpResponse:
    """``?a=<id>&b=<id>``: what changed in the facts and findings from snapshot a to b."""
    snapshots = {s.pk: s for s in hosts.host_snapshots(request.user, team=team, host=host)}
    try:
        a, b = snapshots[int(request.GET.get("a", ""))], snapshots[int(request.GET.get("b", ""))]
    except (KeyError, ValueError):
        raise Http404("Choose two snapshots of this host.") from None
    rows = {row.snapshot.pk: row for row in hosts.history([a, b] if a.created_at <= b.created_at else [b, a])}
    return render(
        request,
        "desk/host_diff.html",
        {
            "team_part": team,
            "host": host,
            "a": a,
            "b": b,
            "choices": sorted(snapshots.values(), key=lambda s: (s.created_at, s.pk), reverse=True),
            "changes": hosts.facts_diff(a.facts, b.facts),
            "later": rows[max((a, b), key=lambda s: (s.created_at, s.pk)).pk],
        },
    )


def search(request: HttpRequest) -> HttpResponse:
    """``/search/?q=``: hosts, tickets, snapshots, sessions, rules and cases, grouped."""
    text = request.GET.get("q", "")
    groups = global_search(request.user, text, language=content_language(get_language()))
    return render(request, "desk/search.html", {"q": text, "groups": groups})
