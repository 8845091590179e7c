"""Snapshot pages: upload, live status, report, list, dashboard. Thin: the
work is in ``triage.services``."""

from __future__ import annotations

from django.contrib import messages
from django.db.models import Count, F, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse
from django.utils.dateparse import parse_datetime
from django.utils.http import urlencode
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy as _lazy
from django.views.decorators.http import require_http_methods, require_POST

from collectors.facts import HostFacts, from_dict
from config.request_limits import upload_view
from kb.similarity import QUALIFYING_SEVERITIES, explain, format_score
from triage import cluster as clusters
from triage import engine, services
from triage.forms import AddArtifactForm, SnapshotFilterForm, SnapshotUploadForm
from triage.models import Finding, Snapshot
from triage.remedies import remedies_for_host
from triage.remedies.libvirt import RULES as DOMAIN_RULES
from triage.remedies.libvirt import domain_remedy
from triage.rules import Finding as RuleFinding
from triage.rules import artifact_file
from triage.rules import load_all as load_rules
from troubleshoot import charts

SEVERITIES = ("critical", "warning", "info")
TOP_FINDINGS = 3
PASTED_NAME = "pasted-transcript.txt"


def _url(name: str, slug: str) -> str | None:
    """The knowledge-base page of a slug; None (shown as plain text) for a
    slug its URL pattern does not accept."""
    try:
        return reverse(name, args=[slug])
    except NoReverseMatch:
        return None


def measure_url(slug: str) -> str | None:
    return _url("kb:measure_detail", slug)


def case_url(slug: str) -> str | None:
    return _url("kb:case_detail", slug)


def _zh() -> bool:
    return (get_language() or "").lower().startswith("zh")


@upload_view()
@require_http_methods(["GET", "POST"])
def snapshot_new(request: HttpRequest) -> HttpResponse:
    form = SnapshotUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        created: list[Snapshot] = []
        try:
            for upload in data["files"]:
                created.append(
                    services.create_snapshot(
                        owner=request.user,
                        uploaded_file=upload,
                        filename=upload.name,
                        label=data["label"] if len(data["files"]) == 1 else "",
                        cluster=data["cluster"],
                    )
                )
            text = (data.get("transcript") or "").strip()
            if text:
                created.append(
                    services.create_snapshot(
                        owner=request.user,
                        data=text.encode("utf-8") + b"\n",
                        filename=PASTED_NAME,
                        label=data["label"],
                        cluster=data["cluster"],
                    )
                )
        except services.UploadRejected as exc:
            form.add_error(None, str(exc))
        else:
            if len(created) == 1:
                return redirect(created[0].get_absolute_url(), permanent=False)
            messages.success(request, _("%(count)d snapshots uploaded.") % {"count": len(created)})
            url = reverse("triage:snapshot_list")
            if data["cluster"]:
                url += "?" + urlencode({"cluster": data["cluster"]})
            return redirect(url)
    return render(request, "triage/snapshot_new.html", {"form": form}, status=400 if form.errors else 200)


def _shown_value(value) -> str:
    """Evidence values as an engineer reads them: no Python reprs."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ", ".join(_shown_value(v) for v in value) or "—"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_shown_value(v)}" for k, v in value.items()) or "—"
    return str(value)


def _evidence_view(evidence: list) -> list[dict]:
    out = []
    for item in evidence or []:
        if not isinstance(item, dict):
            item = {"fact": "", "value": item}
        out.append({**item, "shown": _shown_value(item.get("value"))})
    return out


ROLES = {"physical": _lazy("physical host"), "guest": _lazy("virtual machine")}


def _finding_view(finding: Finding | RuleFinding, zh: bool) -> dict:
    """A stored finding (a row) or one the page computed (a rule ``Finding``,
    e.g. the cluster page's fleet findings), as the templates show it."""
    if isinstance(finding, RuleFinding):
        finding = Finding(**engine.finding_to_dict(finding))  # unsaved: evidence as stored
    return {
        "obj": finding,
        "rule": finding.rule,
        "severity": finding.severity,
        "host": finding.host,
        "title": (finding.title_zh if zh and finding.title_zh else finding.title) or finding.rule,
        "explanation": finding.explanation_zh if zh and finding.explanation_zh else finding.explanation,
        "evidence": _evidence_view(finding.evidence),
        "measures": [{"slug": slug, "url": measure_url(slug)} for slug in finding.measures or []],
    }


def _rule_title(rule_id: str, zh: bool) -> str:
    spec = load_rules().get(rule_id)
    if spec is None:
        return rule_id
    return (spec.title_zh if zh and spec.title_zh else spec.title) or rule_id


def not_checked_items(snapshots, zh: bool | None = None) -> list[dict]:
    """What the finished ``snapshots`` could not check, as
    ``triage/_not_checked.html`` shows it: the rule's title, the reason in the
    reader's language and the commands that produce the missing evidence."""
    zh = _zh() if zh is None else zh
    out = []
    for snap in snapshots:
        if snap.status != Snapshot.Status.DONE:
            continue
        for item in snap.not_checked or []:
            if not isinstance(item, dict) or not item.get("rule"):
                continue
            rule = str(item["rule"])
            out.append(
                {
                    "rule": rule,
                    "title": _rule_title(rule, zh),
                    "reason": str((item.get("reason_zh") if zh else None) or item.get("reason") or ""),
                    "commands": [str(c) for c in item.get("commands") or [] if c],
                    "host": str(item.get("host") or ""),
                    "snapshot": snap,
                }
            )
    return out


def _readings(snapshot: Snapshot) -> list[dict]:
    """Per host of the snapshot (the upload's host and any further host of the
    same paste): what Casebook read, for "What Casebook read"."""
    out = []
    for facts in [snapshot.facts or {}, *(snapshot.extra_hosts or [])]:
        if not isinstance(facts, dict):
            continue
        reading = facts.get("reading") or {}
        if not isinstance(reading, dict):
            reading = {}
        # the file each block came from (the upload or an added artifact):
        # line numbers are per file
        files = {
            (entry.get("command"), entry.get("start_line")): artifact_file(entry)
            for entry in facts.get("artifacts") or []
            if isinstance(entry, dict) and entry.get("start_line")
        }
        out.append(
            {
                "host": facts.get("hostname") or facts.get("label") or snapshot.host_label,
                "lines": reading.get("lines") or 0,
                "read_lines": reading.get("read_lines") or 0,
                "artifacts": [
                    {**a, "file": files.get((a.get("command"), a.get("start_line")), "")}
                    for a in reading.get("artifacts") or []
                    if isinstance(a, dict)
                ],
                "unrecognised": [u for u in reading.get("unrecognised") or [] if isinstance(u, dict)],
            }
        )
    return out


def _history(snapshot: Snapshot, zh: bool) -> list[dict]:
    """Earlier analyses of the snapshot, newest first, with titles in the reader's language."""
    out = []
    for entry in reversed(snapshot.history or []):
        if not isinstance(entry, dict):
            continue
        findings = [
            {**f, "shown": (f.get("title_zh") if zh else None) or f.get("title") or f.get("rule")}
            for f in entry.get("findings") or []
            if isinstance(f, dict)
        ]
        finished = parse_datetime(str(entry.get("finished_at") or ""))
        out.append({**entry, "finished": finished, "findings": findings})
    return out


def report_context(snapshot: Snapshot) -> dict:
    zh = _zh()
    findings = Finding.in_report_order(snapshot.current_findings())
    groups = []
    for severity in SEVERITIES:
        items = [_finding_view(f, zh) for f in findings if f.severity == severity]
        if items:
            groups.append(
                {"severity": severity, "label": Finding.Severity(severity).label, "findings": items}
            )
    similar = []
    for case in snapshot.similar_cases or []:
        if not isinstance(case, dict) or not case.get("slug"):
            continue
        similar.append(
            {
                **case,
                "url": case_url(case["slug"]),
                "title_shown": (case.get("title_zh") if zh else None) or case.get("title") or case["slug"],
                "score_text": format_score(case.get("score")),
                "why": explain(case, "zh-hans" if zh else "en") if case.get("contributions") else "",
            }
        )
    facts = snapshot.facts or {}
    return {
        "snapshot": snapshot,
        "rules": {f.rule for f in findings},
        "groups": groups,
        "finding_count": len(findings),
        "counts": {g["severity"]: len(g["findings"]) for g in groups},
        "similar": similar,
        # warning/critical findings: an empty ``similar`` means a possibly new problem
        "serious_findings": sum(1 for f in findings if f.severity in QUALIFYING_SEVERITIES),
        "hostname": facts.get("hostname") or "",
        "role": ROLES.get(facts.get("role") or "", facts.get("role") or ""),
        "artifacts": facts.get("artifacts") or [],
        # the findings with the largest impact, named first
        "top_findings": [_finding_view(f, zh) for f in findings[:TOP_FINDINGS]] if len(findings) > 1 else [],
        "checked": sorted((_rule_title(r, zh), r) for r in snapshot.checked or []),
        "not_checked": not_checked_items([snapshot], zh),
        "readings": _readings(snapshot),
        "history": _history(snapshot, zh),
        "added_artifacts": list(snapshot.added_artifacts.select_related("added_by")),
    }


def snapshot_detail(request: HttpRequest, pk: int) -> HttpResponse:
    visible = services.visible_snapshots(request.user)
    snapshot = get_object_or_404(visible, pk=pk)
    context = report_context(snapshot)
    context["paste_form"] = AddArtifactForm()
    context["can_reanalyze"] = snapshot.is_finished and (
        snapshot.status == Snapshot.Status.FAILED or snapshot.engine_version != engine.ENGINE_VERSION
    )
    if snapshot.status == Snapshot.Status.DONE:
        context["remedy_domains"] = _remedy_domains(snapshot, context["rules"])
        context["host_remedies"] = _host_remedies(snapshot, context["rules"])
    if snapshot.cluster:
        context["cluster_members"] = (
            visible.filter(cluster=snapshot.cluster).exclude(pk=snapshot.pk).order_by("label", "pk")[:64]
        )
    return render(request, "triage/snapshot_detail.html", context)


def _remedy_domains(snapshot: Snapshot, rules: set[str]) -> list[dict]:
    """The guests of this host with KVM findings, each linked to its patch page."""
    if not rules & set(DOMAIN_RULES):
        return []
    out = []
    for domain in (snapshot.facts or {}).get("domains") or []:
        name = (domain or {}).get("name") or (domain or {}).get("uuid")
        if name and "/" not in name:
            out.append({"name": name, "url": reverse("triage:snapshot_remedy", args=[snapshot.pk, name])})
    return out


def _host_remedies(snapshot: Snapshot, rules: set[str]) -> list:
    """Host-level changes for the current findings (sysctl.d files, my.cnf lines,
    OceanBase statements, tc, IRQ affinity ...), filled from the stored facts.
    Guests have their own page (``snapshot_remedy``)."""
    host_rules = rules - set(DOMAIN_RULES)
    if not host_rules or not snapshot.facts:
        return []
    return remedies_for_host(host=from_dict(HostFacts, snapshot.facts), rules=host_rules)


def snapshot_remedy(request: HttpRequest, pk: int, domain: str) -> HttpResponse:
    """The generated patch of one guest: diff, virsh commands, rollback. The
    upload is parsed again because the stored facts keep no raw XML."""
    snapshot = get_object_or_404(services.visible_snapshots(request.user), pk=pk)
    try:
        host = services.load_host_facts(snapshot)
    except FileNotFoundError:
        raise Http404("the stored upload is missing") from None
    match = next((d for d in host.domains if domain in (d.name, d.uuid)), None)
    if match is None:
        raise Http404("no such domain in this snapshot")
    result = domain_remedy(domain_xml=match.raw_xml, host=host)
    return render(
        request,
        "triage/snapshot_remedy.html",
        {"snapshot": snapshot, "domain": domain, "remedy": result},
    )


@require_POST
def snapshot_reanalyze(request: HttpRequest, pk: int) -> HttpResponse:
    """Queue a finished snapshot for analysis again (after a failure, or to
    apply a newer engine)."""
    snapshot = get_object_or_404(services.visible_snapshots(request.user), pk=pk)
    if snapshot.is_finished:
        services.reanalyze(snapshots=[snapshot], enqueue=True)
        messages.info(request, _("The snapshot was queued for analysis again."))
    return redirect(snapshot.get_absolute_url())


@require_POST
def snapshot_add_artifact(request: HttpRequest, pk: int) -> HttpResponse:
    """Add pasted output (or a file) to the snapshot as evidence and queue it
    for analysis again: the same snapshot, its earlier findings kept in its
    history. htmx posts get the form back when it is invalid, else a redirect
    to the report (which then polls the new analysis)."""
    snapshot = get_object_or_404(services.visible_snapshots(request.user), pk=pk)
    form = AddArtifactForm(request.POST, request.FILES)
    if form.is_valid():
        data = form.cleaned_data
        try:
            if data.get("file"):
                services.add_artifact(
                    snapshot=snapshot, user=request.user, uploaded_file=data["file"], name=data["name"]
                )
            else:
                text = data["output"].strip("\n") + "\n"
                services.add_artifact(
                    snapshot=snapshot, user=request.user, data=text.encode("utf-8"), name=data["name"]
                )
        except services.UploadRejected as exc:
            form.add_error(None, str(exc))
    url = snapshot.get_absolute_url()
    if form.errors:
        if getattr(request, "htmx", False):
            return render(request, "triage/_paste_form.html", {"snapshot": snapshot, "paste_form": form})
        for error in form.non_field_errors() or [e for errors in form.errors.values() for e in errors]:
            messages.error(request, error)
        return redirect(url + "#not-checked")
    messages.info(request, _("The output was added to this snapshot; it is being analysed again."))
    if getattr(request, "htmx", False):
        response = HttpResponse(status=204)
        response["HX-Redirect"] = url
        return response
    return redirect(url)


def snapshot_status(request: HttpRequest, pk: int) -> HttpResponse:
    """The polled status partial. When the analysis finishes, htmx reloads the
    page so the report appears (polling only exists while unfinished)."""
    snapshot = get_object_or_404(services.visible_snapshots(request.user), pk=pk)
    response = render(request, "triage/_status.html", {"snapshot": snapshot})
    if snapshot.is_finished and getattr(request, "htmx", False):
        response["HX-Refresh"] = "true"
    return response


def snapshot_list(request: HttpRequest) -> HttpResponse:
    form = SnapshotFilterForm(request.GET or None)
    qs = services.visible_snapshots(request.user).select_related("owner").only(*Snapshot.SUMMARY_FIELDS)
    cluster_filter = ""
    if form.is_valid():
        if form.cleaned_data["status"]:
            qs = qs.filter(status=form.cleaned_data["status"])
        if form.cleaned_data["cluster"]:
            cluster_filter = form.cleaned_data["cluster"].strip()
            qs = qs.filter(cluster=cluster_filter)
        if form.cleaned_data["rule"]:
            rule = form.cleaned_data["rule"].strip()
            qs = qs.filter(pk__in=Finding.objects.filter(rule=rule).values("snapshot_id"))
    current = Q(findings__engine_version=F("engine_version"))
    qs = qs.annotate(
        n_critical=Count("findings", filter=current & Q(findings__severity="critical")),
        n_warning=Count("findings", filter=current & Q(findings__severity="warning")),
        n_info=Count("findings", filter=current & Q(findings__severity="info")),
    )
    snapshots = list(qs[:200])
    cluster_names = (
        services.visible_snapshots(request.user)
        .exclude(cluster="")
        .order_by("cluster")
        .values_list("cluster", flat=True)
        .distinct()[:100]
    )
    return render(
        request,
        "triage/snapshot_list.html",
        {
            "form": form,
            "snapshots": snapshots,
            "clusters": list(cluster_names),
            # the comparison page of the cluster filtered on, when it has visible snapshots
            "cluster_filter": cluster_filter if snapshots and cluster_filter else "",
            "truncated": len(snapshots) == 200,
            # While some are queued or analysing, the table refreshes itself.
            "pending": any(not s.is_finished for s in snapshots),
            "rule_ids": sorted(load_rules()),
        },
    )


def cluster_detail(request: HttpRequest, name: str) -> HttpResponse:
    """The hosts of one cluster side by side; 404 when the user sees none."""
    if "\x00" in name:
        # No stored name holds a NUL, and PostgreSQL refuses one in a query.
        raise Http404("no such cluster")
    view = clusters.load_cluster(services.visible_snapshots(request.user), name)
    if view is None:
        raise Http404("no such cluster")
    rows = [
        {"row": row, "snapshot": snap} for row, snap in zip(view.matrix.rows, view.snapshots, strict=True)
    ]
    chart_list = [
        {
            "title": column.label,
            "svg": charts.host_bars(
                points,
                unit=column.unit,
                reference=median,
                title=_("%(metric)s per host") % {"metric": column.label},
            ),
        }
        for column, points, median in clusters.benchmark_series(view.matrix)
    ]
    zh = _zh()
    return render(
        request,
        "triage/cluster_detail.html",
        {
            "cluster": view,
            "columns": view.matrix.columns,
            "rows": rows,
            "differing": view.matrix.differing_hosts(),
            "findings": [_finding_view(f, zh) for f in view.fleet_findings],
            "charts": chart_list,
        },
    )


def recent_snapshots_context(user, limit: int = 10) -> dict:
    """Context of ``triage/_recent_snapshots.html`` (the dashboard includes it
    through ``{% recent_snapshots %}``)."""
    current = Q(findings__engine_version=F("engine_version"))
    qs = (
        services.visible_snapshots(user)
        .select_related("owner")
        .only(*Snapshot.SUMMARY_FIELDS)
        .annotate(
            n_critical=Count("findings", filter=current & Q(findings__severity="critical")),
            n_warning=Count("findings", filter=current & Q(findings__severity="warning")),
            n_info=Count("findings", filter=current & Q(findings__severity="info")),
        )
    )
    return {"recent_snapshots": list(qs[:limit])}
