"""Snapshot pages: upload, live status, report, list, dashboard. Thin: the
work is in ``triage.uploads``, ``triage.analysis``, ``triage.selectors``,
``triage.acknowledgements`` and ``triage.tickets``."""

from __future__ import annotations

from datetime import datetime, time
from typing import Any

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count, F, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from collectors.facts import HostFacts
from config.language import in_language, reads_chinese, ui_language
from config.pagination import paginate
from config.request_limits import upload_view
from engine import run as engine_run
from engine.remedies.libvirt import RULES as DOMAIN_RULES
from engine.remedies.playbook import MEDIA_TYPE as PLAYBOOK_MEDIA_TYPE
from engine.remedies.playbook import in_playbook_language, render_playbook
from engine.rules import RuleFinding, rule_title
from engine.rules import load_all as load_rules
from engine.severity import SEVERITIES
from kb import authoring
from kb import views as kb_views
from kb.access import readable_cases
from kb.models import Case, Measure, RetroScan
from kb.similarity import QUALIFYING_SEVERITIES, case_digest, explain, format_score
from triage import acknowledgements, analysis, charts, fleetview, selectors, tickets, uploads
from triage import cluster as clusters
from triage.forms import AcknowledgeForm, AddArtifactForm, SnapshotFilterForm, SnapshotUploadForm, TicketForm
from triage.models import Finding, Snapshot, TicketRef
from triage.reports import ROLES, shown_value

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
    return reads_chinese(get_language())


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
                    uploads.create_snapshot(
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
                    uploads.create_snapshot(
                        owner=request.user,
                        data=text.encode("utf-8") + b"\n",
                        filename=PASTED_NAME,
                        label=data["label"],
                        cluster=data["cluster"],
                    )
                )
        except uploads.UploadRejected as exc:
            form.add_error(None, str(exc))
        else:
            for snap in created:
                if getattr(snap, "duplicate", False):
                    messages.info(
                        request,
                        _(
                            "Already uploaded as #%(id)d (%(name)s); the label and cluster given were "
                            "applied to it."
                        )
                        % {"id": snap.pk, "name": snap.display_name},
                    )
            if len(created) == 1:
                return redirect(created[0].get_absolute_url(), permanent=False)
            messages.success(request, _("%(count)d snapshots uploaded.") % {"count": len(created)})
            url = reverse("triage:snapshot_list")
            if data["cluster"]:
                url += "?" + urlencode({"cluster": data["cluster"]})
            return redirect(url)
    return render(request, "triage/snapshot_new.html", {"form": form}, status=400 if form.errors else 200)


def _evidence_view(evidence: list) -> list[dict]:
    out = []
    for item in evidence or []:
        if not isinstance(item, dict):
            item = {"fact": "", "value": item}
        out.append({**item, "shown": shown_value(item.get("value"))})
    return out


def _finding_view(finding: Finding | RuleFinding, zh: bool, ack=None) -> dict:
    """A stored finding (a row) or one the page computed (a rule ``Finding``,
    e.g. the cluster page's fleet findings), as the templates show it;
    ``ack``: the acknowledgement that folds it away."""
    if isinstance(finding, RuleFinding):
        finding = Finding(**engine_run.finding_to_dict(finding))  # unsaved: evidence as stored
    return {
        "obj": finding,
        "rule": finding.rule,
        "severity": finding.severity,
        "host": finding.host,
        "title": in_language(finding.title, finding.title_zh, zh) or finding.rule,
        "explanation": in_language(finding.explanation, finding.explanation_zh, zh),
        "evidence": _evidence_view(finding.evidence),
        "measures": [{"slug": slug, "url": measure_url(slug)} for slug in finding.measures or []],
        "ack": ack,
    }


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
                    "title": rule_title(rule, zh) or rule,
                    "reason": in_language(
                        str(item.get("reason") or ""), str(item.get("reason_zh") or ""), zh
                    ),
                    "commands": [str(c) for c in item.get("commands") or [] if c],
                    "host": str(item.get("host") or ""),
                    "snapshot": snap,
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
            {**f, "shown": in_language(f.get("title") or "", f.get("title_zh") or "", zh) or f.get("rule")}
            for f in entry.get("findings") or []
            if isinstance(f, dict)
        ]
        finished = parse_datetime(str(entry.get("finished_at") or ""))
        out.append({**entry, "finished": finished, "findings": findings})
    return out


def _case_views(cases, zh: bool) -> list[dict]:
    """Similar (or sounds-like) cases as the report shows them: title in the
    reader's language, link, score and why in words."""
    out = []
    for case in cases or []:
        if not isinstance(case, dict) or not case.get("slug"):
            continue
        out.append(
            {
                **case,
                "url": case_url(case["slug"]),
                "title_shown": in_language(case.get("title") or "", case.get("title_zh") or "", zh)
                or case["slug"],
                "score_text": format_score(case.get("score")),
                "why": explain(case, ui_language(zh)) if case.get("contributions") else "",
            }
        )
    return out


def _best_case(match: dict | None, zh: bool, sounds_like: bool = False) -> dict | None:
    """The header's case: the match (similar or sounds-like) with the case's
    cause, the measures that fixed it and their measured effect."""
    if match is None:
        return None
    digest = case_digest(match["slug"], "zh" if zh else "en")
    if digest is None:
        return None
    case = digest["case"]
    return {
        **digest,
        "match": match,
        "title": case.title,
        "url": case.get_absolute_url(),
        "sounds_like": sounds_like,
    }


def report_context(snapshot: Snapshot) -> dict:
    zh = _zh()
    all_findings = Finding.in_report_order(snapshot.current_findings())
    # acknowledged findings stay in their group, folded; the counts and the
    # top findings are about the others
    findings, acknowledged = fleetview.split_acknowledged(snapshot, all_findings)
    acks = {f.pk: ack for f, ack in acknowledged}
    groups: list[dict[str, Any]] = []
    for severity in SEVERITIES:
        items = [_finding_view(f, zh, acks.get(f.pk)) for f in all_findings if f.severity == severity]
        if items:
            groups.append(
                {"severity": severity, "label": Finding.Severity(severity).label, "findings": items}
            )
    similar = _case_views(snapshot.similar_cases, zh)
    serious = sum(1 for f in findings if f.severity in QUALIFYING_SEVERITIES)
    # A text upload no rule explains: cases that sound like what it says.
    sounds = (
        _case_views(selectors.sounds_like_cases(snapshot, language="zh" if zh else "en"), zh)
        if not similar and not serious
        else []
    )
    best = _best_case(similar[0], zh) if similar else _best_case(next(iter(sounds), None), zh, True)
    host = snapshot.host_facts()
    return {
        "snapshot": snapshot,
        "rules": {f.rule for f in all_findings},
        "groups": groups,
        "finding_count": len(findings),
        "acknowledged_count": len(acknowledged),
        "counts": {g["severity"]: len(g["findings"]) for g in groups},
        "similar": similar,
        # cases that state version ranges holding this host's versions
        "known_issues": selectors.known_issues(snapshot, language="zh" if zh else "en"),
        "sounds_like": sounds,
        # the report's header: the best matching case, what fixed it and why it matched
        "best_case": best,
        # warning/critical findings: an empty ``similar`` means a possibly new problem
        "serious_findings": serious,
        "hostname": host.hostname or "",
        "role": ROLES.get(host.role or "", host.role or ""),
        "host": host,
        # the findings with the largest impact, named first
        "top_findings": [_finding_view(f, zh) for f in findings[:TOP_FINDINGS]] if len(findings) > 1 else [],
        "checked": sorted((rule_title(r, zh) or r, r) for r in snapshot.checked or []),
        "not_checked": not_checked_items([snapshot], zh),
        "readings": selectors.host_readings(snapshot, host),
        "history": _history(snapshot, zh),
        "added_artifacts": list(snapshot.added_artifacts.select_related("added_by")),
        "tickets": list(snapshot.tickets.all()),
    }


def snapshot_detail(request: HttpRequest, pk: int) -> HttpResponse:
    visible = selectors.visible_snapshots(request.user)
    snapshot = get_object_or_404(visible, pk=pk)
    context = report_context(snapshot)
    context["paste_form"] = AddArtifactForm()
    context["ack_form"] = AcknowledgeForm()
    context["ticket_form"] = TicketForm()
    context["can_reanalyze"] = snapshot.is_finished and (
        snapshot.status == Snapshot.Status.FAILED or snapshot.engine_version != engine_run.ENGINE_VERSION
    )
    if snapshot.status == Snapshot.Status.DONE:
        context["remedy_domains"] = _remedy_domains(snapshot, context["host"], context["rules"])
        context["host_remedies"] = selectors.host_remedies(snapshot, context["rules"], host=context["host"])
        if any(r.ok for r in context["host_remedies"]):
            context["playbook_url"] = reverse("triage:snapshot_playbook", args=[snapshot.pk])
    if snapshot.cluster:
        context["cluster_members"] = (
            visible.filter(cluster=snapshot.cluster).exclude(pk=snapshot.pk).order_by("label", "pk")[:64]
        )
    return render(request, "triage/snapshot_detail.html", context)


def _remedy_domains(snapshot: Snapshot, host: HostFacts, rules: set[str]) -> list[dict]:
    """The guests of this host with KVM findings, each linked to its patch page."""
    if not rules & set(DOMAIN_RULES):
        return []
    out = []
    for domain in host.domains:
        name = domain.name or domain.uuid
        if name and "/" not in name:
            out.append({"name": name, "url": reverse("triage:snapshot_remedy", args=[snapshot.pk, name])})
    return out


def _guest_remedy(request: HttpRequest, pk: int, domain: str):
    snapshot = get_object_or_404(selectors.visible_snapshots(request.user), pk=pk)
    try:
        return snapshot, selectors.guest_remedy(snapshot, domain)
    except FileNotFoundError:
        raise Http404("the stored upload is missing") from None
    except LookupError:
        raise Http404("no such domain in this snapshot") from None


def snapshot_remedy(request: HttpRequest, pk: int, domain: str) -> HttpResponse:
    """The generated patch of one guest: diff, virsh commands, rollback."""
    snapshot, result = _guest_remedy(request, pk, domain)
    return render(
        request,
        "triage/snapshot_remedy.html",
        {
            "snapshot": snapshot,
            "domain": domain,
            "remedy": result,
            "playbook_url": (
                reverse("triage:snapshot_remedy_playbook", args=[pk, domain]) if result.ok else ""
            ),
        },
    )


def playbook_response(results: list, *, snapshot: Snapshot, suffix: str = "") -> HttpResponse:
    """The remedies as an Ansible playbook download (``engine.remedies.playbook``);
    404 when none of them can be applied."""
    if not any(r.ok for r in results):
        raise Http404("nothing to apply")
    filename = f"casebook-snapshot-{snapshot.pk}{suffix}.yml"
    text = render_playbook(
        results,
        title=snapshot.display_name,
        source=f"snapshot {snapshot.pk}",
        filename=filename,
    )
    response = HttpResponse(text, content_type=f"{PLAYBOOK_MEDIA_TYPE}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@in_playbook_language
def snapshot_playbook(request: HttpRequest, pk: int) -> HttpResponse:
    """The host-level changes of the report as an Ansible playbook."""
    snapshot = get_object_or_404(
        selectors.visible_snapshots(request.user), pk=pk, status=Snapshot.Status.DONE
    )
    return playbook_response(selectors.host_remedies(snapshot), snapshot=snapshot)


@in_playbook_language
def snapshot_remedy_playbook(request: HttpRequest, pk: int, domain: str) -> HttpResponse:
    """One guest's patch as an Ansible playbook (backup, define, rollback)."""
    snapshot, result = _guest_remedy(request, pk, domain)
    return playbook_response([result], snapshot=snapshot, suffix="-guest")


@require_POST
def snapshot_reanalyze(request: HttpRequest, pk: int) -> HttpResponse:
    """Queue a finished snapshot for analysis again (after a failure, or to
    apply a newer engine)."""
    snapshot = get_object_or_404(selectors.visible_snapshots(request.user), pk=pk)
    if snapshot.is_finished:
        analysis.reanalyze(snapshots=[snapshot], enqueue=True)
        messages.info(request, _("The snapshot was queued for analysis again."))
    return redirect(snapshot.get_absolute_url())


@require_POST
def snapshot_add_artifact(request: HttpRequest, pk: int) -> HttpResponse:
    """Add pasted output (or a file) to the snapshot as evidence and queue it
    for analysis again: the same snapshot, its earlier findings kept in its
    history. htmx posts get the form back when it is invalid, else a redirect
    to the report (which then polls the new analysis)."""
    snapshot = get_object_or_404(selectors.visible_snapshots(request.user), pk=pk)
    form = AddArtifactForm(request.POST, request.FILES)
    if form.is_valid():
        data = form.cleaned_data
        try:
            if data.get("file"):
                uploads.add_artifact(
                    snapshot=snapshot, user=request.user, uploaded_file=data["file"], name=data["name"]
                )
            else:
                text = data["output"].strip("\n") + "\n"
                uploads.add_artifact(
                    snapshot=snapshot, user=request.user, data=text.encode("utf-8"), name=data["name"]
                )
        except uploads.UploadRejected as exc:
            form.add_error(None, str(exc))
    url = snapshot.get_absolute_url()
    if form.errors:
        if getattr(request, "htmx", False):
            return render(request, "triage/_paste_form.html", {"snapshot": snapshot, "paste_form": form})
        for error in form.non_field_errors() or [e for errors in form.errors.values() for e in errors]:
            messages.error(request, str(error))
        return redirect(url + "#not-checked")
    messages.info(request, _("The output was added to this snapshot; it is being analysed again."))
    # the wizard's verify step adds to its after-snapshot and comes back to the step
    back = request.POST.get("next") or ""
    if back and url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        url = back
    if getattr(request, "htmx", False):
        response = HttpResponse(status=204)
        response["HX-Redirect"] = url
        return response
    return redirect(url)


def snapshot_status(request: HttpRequest, pk: int) -> HttpResponse:
    """The polled status partial. When the analysis finishes, htmx reloads the
    page so the report appears (polling only exists while unfinished)."""
    snapshot = get_object_or_404(selectors.visible_snapshots(request.user), pk=pk)
    response = render(request, "triage/_status.html", {"snapshot": snapshot})
    if snapshot.is_finished and getattr(request, "htmx", False):
        response["HX-Refresh"] = "true"
    return response


def snapshot_list(request: HttpRequest) -> HttpResponse:
    form = SnapshotFilterForm(request.GET or None)
    qs = selectors.visible_snapshots(request.user).select_related("owner").only(*Snapshot.SUMMARY_FIELDS)
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
        if form.cleaned_data["ticket"]:
            ticket = form.cleaned_data["ticket"].strip()
            qs = qs.filter(pk__in=TicketRef.objects.filter(key__iexact=ticket).values("snapshot_id"))
    pages = paginate(request, _with_counts(qs))
    snapshots = list(pages["page_obj"])
    fleetview.discount_acknowledged(snapshots)
    cluster_names = (
        selectors.visible_snapshots(request.user)
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
            **pages,
            # While some are queued or analysing, the table refreshes itself.
            "pending": any(not s.is_finished for s in snapshots),
            "rule_ids": sorted(load_rules()),
        },
    )


# Hosts per page of the cluster comparison.
CLUSTER_PAGE_HOSTS = 100


def cluster_detail(request: HttpRequest, name: str) -> HttpResponse:
    """The hosts of one cluster side by side; 404 when the user sees none."""
    if "\x00" in name:
        # No stored name holds a NUL, and PostgreSQL refuses one in a query.
        raise Http404("no such cluster")
    view = clusters.load_cluster(selectors.visible_snapshots(request.user), name)
    if view is None:
        raise Http404("no such cluster")
    rows: list[dict[str, Any]] = [
        {"row": row, "snapshot": snap} for row, snap in zip(view.matrix.rows, view.snapshots, strict=True)
    ]
    # Thousands of hosts: the matrix is compared whole (highlighting, fleet
    # findings, references), then shown a page at a time; the charts show the
    # hosts of the page against the cluster's best result.
    page = Paginator(rows, CLUSTER_PAGE_HOSTS).get_page(request.GET.get("page"))
    on_page = {item["row"].label for item in page.object_list}
    chart_list = [
        {
            "title": column.label,
            "svg": charts.host_bars(
                [p for p in points if p[0] in on_page],
                unit=column.unit,
                reference=best,
                title=_("%(metric)s per host") % {"metric": column.label},
            ),
        }
        for column, points, best in clusters.benchmark_series(view.matrix)
        if any(p[0] in on_page for p in points)
    ]
    zh = _zh()
    return render(
        request,
        "triage/cluster_detail.html",
        {
            "cluster": view,
            "columns": view.matrix.columns,
            "rows": page.object_list,
            "page": page,
            "host_count": len(rows),
            "differing": view.matrix.differing_hosts(),
            "findings": [_finding_view(f, zh) for f in view.fleet_findings],
            "charts": chart_list,
        },
    )


def _with_counts(qs):
    """Snapshots with their current findings counted per severity, newest
    first. The ``order_by`` is explicit: a query with aggregates (GROUP BY)
    does not use ``Meta.ordering``, which once listed them oldest first."""
    current = Q(findings__engine_version=F("engine_version"))
    return qs.annotate(
        n_critical=Count("findings", filter=current & Q(findings__severity="critical")),
        n_warning=Count("findings", filter=current & Q(findings__severity="warning")),
        n_info=Count("findings", filter=current & Q(findings__severity="info")),
    ).order_by("-created_at", "-id")


def recent_snapshots_context(request, user, limit: int = 10) -> dict:
    """Context of ``triage/_recent_snapshots.html`` (the dashboard includes it
    through ``{% recent_snapshots %}``): the newest visible snapshots, paged
    by ``?recent=``."""
    qs = selectors.visible_snapshots(user).select_related("owner").only(*Snapshot.SUMMARY_FIELDS)
    pages = paginate(request, _with_counts(qs), per_page=limit, param="recent")
    snapshots = list(pages["page_obj"])
    fleetview.discount_acknowledged(snapshots)
    return {"recent_snapshots": snapshots, **pages}


# --------------------------------------------------------------------------- acknowledgements, tickets


@require_POST
def snapshot_acknowledge(request: HttpRequest, pk: int) -> HttpResponse:
    """Acknowledge one finding of the report; back to it, folded."""
    snapshot = get_object_or_404(selectors.visible_snapshots(request.user), pk=pk)
    form = AcknowledgeForm(request.POST)
    anchor = ""
    if not form.is_valid():
        messages.error(request, _("The acknowledgement needs a reason (and a valid date, if any)."))
    else:
        data = form.cleaned_data
        expires = None
        if data["expires"]:
            expires = timezone.make_aware(datetime.combine(data["expires"], time.max))
        try:
            acknowledgements.acknowledge(
                user=request.user,
                snapshot=snapshot,
                rule=data["rule"],
                scope=data["scope"],
                reason=data["reason"],
                expires_at=expires,
            )
        except acknowledgements.AcknowledgementRejected as exc:
            messages.error(request, _("Not acknowledged: %(reason)s") % {"reason": exc})
        else:
            messages.success(request, _("Finding acknowledged."))
            finding = snapshot.current_findings().filter(rule=data["rule"]).order_by("pk").first()
            anchor = f"#finding-{finding.pk}" if finding else ""
    return redirect(snapshot.get_absolute_url() + anchor)


@require_POST
def acknowledgement_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    """Withdraw an acknowledgement; back to where it was withdrawn from."""
    ack = acknowledgements.visible_acknowledgement(request.user, pk)
    if ack is None:
        raise Http404("no such acknowledgement")
    acknowledgements.revoke_acknowledgement(user=request.user, acknowledgement=ack)
    messages.success(request, _("Acknowledgement withdrawn."))
    target = request.POST.get("next") or ""
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}):
        target = reverse("triage:rule_detail", args=[ack.rule])
    return redirect(target)


@require_POST
def snapshot_add_ticket(request: HttpRequest, pk: int) -> HttpResponse:
    snapshot = get_object_or_404(selectors.visible_snapshots(request.user), pk=pk)
    form = TicketForm(request.POST)
    if form.is_valid():
        try:
            tickets.add_ticket(
                user=request.user,
                snapshot=snapshot,
                key=form.cleaned_data["key"],
                url=form.cleaned_data["url"],
            )
        except tickets.TicketRejected as exc:
            messages.error(request, str(exc))
    else:
        messages.error(request, _("A ticket is a key like OPS-123 and an optional http(s) address."))
    return redirect(snapshot.get_absolute_url() + "#tickets")


# --------------------------------------------------------------------------- rule pages


def rule_list(request: HttpRequest) -> HttpResponse:
    """Every rule, those affecting the most hosts (of the reader's teams) first."""
    zh = _zh()
    counts = fleetview.affected_counts(selectors.visible_snapshots(request.user))
    rows: list[dict[str, Any]] = [
        {"spec": spec, "title": rule_title(rule_id, zh) or rule_id, "hosts": counts.get(rule_id, 0)}
        for rule_id, spec in load_rules().items()
    ]
    rows.sort(key=lambda r: (-r["hosts"], r["spec"].id))
    return render(request, "triage/rule_list.html", {"rows": rows})


def rule_detail(request: HttpRequest, rule_id: str) -> HttpResponse:
    """One rule: its text, thresholds and measures, the founding cases, every
    host whose newest snapshot has the finding, counts over time and the
    acknowledgements."""
    spec = load_rules().get(rule_id)
    if spec is None:
        raise Http404("no such rule")
    zh = _zh()
    visible = selectors.visible_snapshots(request.user)
    affected = fleetview.affected_snapshots(visible, rule_id)
    total = affected.count()
    # Paged, not cut: every affected host is one click away.
    pages = paginate(request, affected, per_page=fleetview.HOSTS_PER_PAGE, param="hosts", newest_first=False)
    hosts = fleetview.with_acknowledgements(rule_id, list(pages["page_obj"]))
    weeks = fleetview.weekly_counts(visible, rule_id)
    chart = charts.metric_bars(
        [(f"{week:%Y-%m-%d}", float(n)) for week, n in weeks],
        title=_("Hosts with this finding, per week"),
    )

    measures = {m.slug: m for m in Measure.objects.filter(slug__in=spec.measures)}
    lang = "zh" if zh else "en"
    cases: dict[str, Case] = {}
    # the reader's language version of each founding case where there is one
    for case in readable_cases(request.user).filter(slug__in=spec.seeds).only("slug", "language", "title"):
        if case.slug not in cases or case.language.startswith(lang):
            cases[case.slug] = case
    return render(
        request,
        "triage/rule_detail.html",
        {
            "spec": spec,
            "title": rule_title(rule_id, zh) or rule_id,
            "condition": spec.text("condition", zh),
            "rationale": spec.text("rationale", zh),
            "thresholds": sorted((k, shown_value(v)) for k, v in spec.thresholds.items()),
            "measures": [
                {
                    "slug": s,
                    "url": measure_url(s),
                    "title": measures[s].title_for(lang) if s in measures else "",
                }
                for s in spec.measures
            ],
            "cases": [
                {"slug": s, "url": case_url(s), "title": getattr(cases.get(s), "title", "") or s}
                for s in spec.seeds
            ],
            "hosts": hosts,
            "total": total,
            "acknowledged_hosts": sum(1 for h in hosts if h.acknowledgement),
            **pages,
            "weeks": weeks,
            "chart": chart,
            "acknowledgements": list(fleetview.visible_acknowledgements(request.user, rule_id)[:200]),
            # what the rule's last retro-scan found from the stored facts (it was added or changed)
            "matching": kb_views.matching_hosts_context(request, kind=RetroScan.Kind.RULE, target=rule_id),
        },
    )


class CaseNewView(kb_views.CaseNewView):
    """The New case page (``kb.views.CaseNewView``) offering the analysed
    snapshots the reader may see as the case's environment and signature."""

    def snapshot_choices(self, user) -> list[tuple[int, str]]:
        return selectors.case_snapshot_choices(user)

    def snapshot_analysis(self, user, snapshot_id: int) -> authoring.SnapshotAnalysis:
        return selectors.case_snapshot_analysis(user, snapshot_id)
