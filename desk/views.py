"""Pages of the support desk: a host's history, the diff of two of its
snapshots, and the one search box. Thin: ``desk.hosts`` and ``desk.search`` read."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import get_language
from django.views.decorators.http import require_POST

from config.language import content_language
from desk import hosts, inbox, playbooks
from desk.charts import findings_over_time
from desk.models import InboxItem
from desk.search import global_search
from engine.remedies.playbook import MEDIA_TYPE as PLAYBOOK_MEDIA_TYPE
from engine.remedies.playbook import fleet_inventory, in_playbook_language, render_fleet_playbook


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


def _download(text: str, filename: str, content_type: str) -> HttpResponse:
    response = HttpResponse(text, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@in_playbook_language
def rule_playbook(request: HttpRequest, rule_id: str) -> HttpResponse:
    """``/rules/<id>/fleet/playbook.yml?snapshot=1&snapshot=2``: the rule's
    changes for the selected hosts, one inventory group each."""
    per_host = playbooks.selected_hosts(request.user, rule_id, request.GET.getlist("snapshot"))
    stem = playbooks.file_stem(rule_id)
    try:
        text = render_fleet_playbook(
            per_host,
            title=rule_id,
            source=f"rule {rule_id} for {len(per_host)} hosts",
            filename=f"{stem}.yml",
            inventory=f"{stem}-inventory.ini",
        )
    except ValueError:
        raise Http404("nothing to apply on the selected hosts") from None
    return _download(text, f"{stem}.yml", PLAYBOOK_MEDIA_TYPE)


@in_playbook_language
def rule_inventory(request: HttpRequest, rule_id: str) -> HttpResponse:
    """The inventory of :func:`rule_playbook` for the same selection."""
    per_host = playbooks.selected_hosts(request.user, rule_id, request.GET.getlist("snapshot"))
    stem = playbooks.file_stem(rule_id)
    text = fleet_inventory(per_host, source=f"rule {rule_id} for {len(per_host)} hosts")
    return _download(text, f"{stem}-inventory.ini", "text/plain")


def inbox_page(request: HttpRequest) -> HttpResponse:
    """What waits for the reader, and (for reviewers) the cases in review."""
    items = list(inbox.items_for(request.user)[:200])
    return render(
        request,
        "desk/inbox.html",
        {
            "items": items,
            "queue": inbox.review_queue(request.user),
            "unread": sum(1 for i in items if not i.read_at),
        },
    )


def inbox_open(request: HttpRequest, pk: int) -> HttpResponse:
    """Follow an item's link, marking it read."""
    item = get_object_or_404(InboxItem, pk=pk, user=request.user)
    inbox.do_mark_read(user=request.user, item_ids=[item.pk])
    return redirect(
        item.url if url_has_allowed_host_and_scheme(item.url, allowed_hosts=None) else "desk:inbox"
    )


@require_POST
def inbox_read_all(request: HttpRequest) -> HttpResponse:
    inbox.do_mark_read(user=request.user)
    return redirect("desk:inbox")
