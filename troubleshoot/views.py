"""Thin views of the wizard. Every step is one URL (``/sessions/<id>/step/<name>/``):
a plain GET renders the whole page, an htmx GET only the wizard fragment; a
POST does one action through a service module (``troubleshoot.lifecycle``,
``snapshots``, ``planning``, ``apply`` ...) and then redirects
(plain form) or answers with the fragment of the resulting step (htmx, with
``HX-Push-Url`` so the address bar follows)."""

from __future__ import annotations

import re
from collections.abc import Callable

from django.contrib import messages
from django.core.exceptions import BadRequest, PermissionDenied
from django.forms import BaseForm
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import get_language, pgettext_lazy
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.access import SignedInRequest, is_support
from config.language import reads_chinese
from config.pagination import paginate
from config.request_limits import upload_view
from kb.models import Case, CaseReuse, Measure
from kb.similarity import QUALIFYING_SEVERITIES, explain
from triage import charts
from triage.forms import AddArtifactForm, TicketForm
from triage.reports import MARKUPS
from triage.selectors import visible_snapshots
from triage.tickets import TicketRejected
from triage.uploads import UploadRejected
from triage.views import not_checked_items
from troubleshoot import access, apply, lifecycle, people, planning, promotion, snapshots, verify
from troubleshoot import effectiveness as measure_effectiveness
from troubleshoot import findings as session_findings
from troubleshoot.forms import (
    ApplyForm,
    ApplyTogetherForm,
    AttachForm,
    CloseForm,
    ConstraintsForm,
    PlanAddForm,
    ProblemForm,
    UploadForm,
    VerifyForm,
)
from troubleshoot.models import STEP_ORDER, PlannedMeasure, Session, SessionSnapshot, Step
from troubleshoot.summary import render_summary


def _language() -> str:
    return get_language() or "en"


def _session_for(request: HttpRequest, pk: int) -> Session:
    session = get_object_or_404(
        Session.objects.select_related("owner", "team", "promoted_case", "linked_case"), pk=pk
    )
    if not access.can_view(request.user, session):
        raise Http404("no such session")  # do not reveal that it exists
    return session


@require_GET
def session_list(request: SignedInRequest) -> HttpResponse:
    sessions = access.visible_sessions(request.user).select_related("owner", "team", "assignee")
    ticket = (request.GET.get("ticket") or "").strip()[:64]
    if ticket:
        sessions = sessions.filter(tickets__key__iexact=ticket).distinct()
    mine = request.GET.get("assignee") == "me"
    if mine:
        sessions = sessions.filter(assignee=request.user)
    pages = paginate(request, sessions.order_by("-updated_at", "-id"))
    return render(
        request,
        "troubleshoot/session_list.html",
        {"sessions": list(pages["page_obj"]), "ticket": ticket, "mine": mine, **pages},
    )


@require_http_methods(["GET", "POST"])
def session_new(request: HttpRequest) -> HttpResponse:
    # "Start troubleshooting session" on a report: the snapshot and the other
    # hosts of its cluster come along as before-snapshots.
    snapshot = snapshots.startable_snapshot(
        request.user, request.GET.get("snapshot") or request.POST.get("snapshot")
    )
    starting = snapshots.starting_snapshots(request.user, snapshot) if snapshot is not None else []
    initial = snapshots.problem_from_snapshot(snapshot) if snapshot is not None else None
    form = ProblemForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        data = dict(form.cleaned_data)
        session = lifecycle.create_session(owner=request.user, title=data.pop("title"), **data)
        snapshots.start_from_snapshots(session=session, user=request.user, snapshots=starting)
        return redirect("troubleshoot:step", pk=session.pk, step=Step.SNAPSHOTS)
    return render(
        request,
        "troubleshoot/session_new.html",
        {"form": form, "from_snapshot": snapshot, "starting": starting[1:]},
    )


@require_GET
def session_detail(request: HttpRequest, pk: int) -> HttpResponse:
    session = _session_for(request, pk)
    return redirect("troubleshoot:step", pk=session.pk, step=session.step)


@require_GET
def snapshot_progress(request: HttpRequest, pk: int) -> HttpResponse:
    session = _session_for(request, pk)
    phase = request.GET.get("phase") or ""
    return render(
        request,
        "troubleshoot/_progress.html",
        {
            "session": session,
            "progress": _progress(session, phase),
            "phase": phase,
            "step": Step.VERIFY if phase == SessionSnapshot.Phase.AFTER else Step.SNAPSHOTS,
            "editable": access.can_edit(request.user, session),
        },
    )


def _progress(session: Session, phase: str) -> dict:
    return snapshots.progress(session, phase or None)


@require_GET
def effectiveness(request: HttpRequest) -> HttpResponse:
    stats = measure_effectiveness.effectiveness_ranking()
    slugs = {slug for s in stats for slug in s["slugs"]}
    titles = {m.slug: m.title_for(_language()) for m in Measure.objects.filter(slug__in=slugs)}
    for s in stats:
        s["titles"] = [(slug, titles.get(slug, slug)) for slug in s["slugs"]]
    return render(
        request,
        "troubleshoot/effectiveness.html",
        {"stats": stats, "min_sessions": measure_effectiveness.MIN_SESSIONS},
    )


# --------------------------------------------------------------------------- steps


@upload_view(multipart_only=True)
@require_http_methods(["GET", "POST"])
def step(request: HttpRequest, pk: int, step: str) -> HttpResponse:
    if step not in STEP_ORDER:
        raise Http404("no such step")
    session = _session_for(request, pk)
    editable = access.can_edit(request.user, session)
    forms: dict = {}
    if request.method == "POST":
        if not editable:
            raise PermissionDenied("read-only")
        outcome = _handle_post(request, session, step)
        if isinstance(outcome, str):
            return _after_post(request, session, outcome)
        forms = outcome
    # A GET only shows a step: moving the session on (and its audit entry) is a POST.
    context = _context(request, session, step, editable, forms)
    htmx = getattr(request, "htmx", False)
    template = "troubleshoot/_wizard.html" if htmx else "troubleshoot/session_detail.html"
    response = render(request, template, context)
    if htmx and request.method == "GET":
        response["HX-Push-Url"] = reverse("troubleshoot:step", args=[session.pk, step])
    return response


def _after_post(request: HttpRequest, session: Session, target_step: str) -> HttpResponse:
    url = reverse("troubleshoot:step", args=[session.pk, target_step])
    session.refresh_from_db()
    if target_step != session.step:
        lifecycle.set_step(session=session, user=request.user, step=target_step)
    if not getattr(request, "htmx", False):
        return redirect(url)
    response = render(request, "troubleshoot/_wizard.html", _context(request, session, target_step, True, {}))
    response["HX-Push-Url"] = url
    return response


def _posted_int(request: HttpRequest, name: str) -> int:
    try:
        return int(request.POST.get(name, ""))
    except ValueError:
        raise BadRequest(f"{name} must be a number") from None


def _pm(session: Session, request: HttpRequest) -> PlannedMeasure:
    return get_object_or_404(
        PlannedMeasure.objects.select_related("measure"), pk=_posted_int(request, "pm"), session=session
    )


def _handle_post(request: HttpRequest, session: Session, step: str) -> str | dict:
    """Do the posted action. Returns the step to show next, or the bound forms
    with errors to re-render the same step."""
    user, action = request.user, request.POST.get("action", "save")
    forward = lifecycle.next_step(step) if "next" in request.POST else step
    form: BaseForm
    if step == Step.PROBLEM:
        form = ProblemForm(request.POST, instance=Session.objects.get(pk=session.pk))
        if not form.is_valid():
            return {"problem_form": form}
        lifecycle.update_session(session=session, user=user, changes=form.cleaned_data)
        return forward
    if step in (Step.SNAPSHOTS, Step.VERIFY):
        return _snapshot_post(request, session, step, action, forward)
    if step == Step.CONSTRAINTS:
        form = ConstraintsForm(request.POST, instance=Session.objects.get(pk=session.pk))
        if not form.is_valid():
            return {"constraints_form": form}
        lifecycle.update_session(session=session, user=user, changes=form.cleaned_data)
        return forward
    if step == Step.PLAN:
        if action == "add":
            form = PlanAddForm(request.POST)
            if form.is_valid():
                try:
                    planning.plan_measure(
                        session=session,
                        user=user,
                        slug=form.cleaned_data["measure"],
                        tier=form.cleaned_data["tier"],
                    )
                except (ValueError, Measure.DoesNotExist) as exc:
                    messages.error(request, str(exc))
        elif action in ("up", "down"):
            planning.move_measure(session=session, user=user, pm=_pm(session, request), direction=action)
        elif action == "tier":
            planning.set_tier(
                session=session, user=user, pm=_pm(session, request), tier=_posted_int(request, "tier")
            )
        elif action == "remove":
            try:
                planning.unplan_measure(session=session, user=user, pm=_pm(session, request))
            except ValueError as exc:
                messages.error(request, str(exc))
        return forward
    if step == Step.APPLY:
        if action == "record":
            pm = _pm(session, request)
            form = ApplyForm(request.POST, prefix=f"pm{pm.pk}")
            if not form.is_valid():
                return {"apply_errors": {pm.pk: form}}
            data = form.cleaned_data
            apply.record_application(
                session=session,
                user=user,
                pm=pm,
                status=data["status"],
                change_made=data["change_made"],
                notes=data["notes"],
                metric_after=data["metric_after"],
                clear_metric=data["metric_after"] is None,
            )
        elif action == "together":
            form = ApplyTogetherForm(request.POST, session=session)
            if not form.is_valid():
                return {"together_form": form}
            data = form.cleaned_data
            apply.apply_together(
                session=session,
                user=user,
                pms=list(data["measures"]),
                metric_after=data["metric_after"],
                change_made=data["change_made"],
                notes=data["notes"],
            )
        return forward
    if step == Step.CLOSE:
        return _close_post(request, session, action)
    return forward


def _snapshot_post(request, session: Session, step: str, action: str, forward: str) -> str | dict:
    user = request.user
    form: BaseForm
    if action == "upload":
        form = UploadForm(request.POST, request.FILES)
        if not form.is_valid():
            return {"upload_form": form}
        for f in form.cleaned_data["files"]:
            try:
                snapshots.upload_snapshot(
                    session=session, user=user, uploaded_file=f, phase=form.cleaned_data["phase"]
                )
            except UploadRejected as exc:
                messages.error(request, f"{f.name}: {exc}")
        return step
    if action == "attach":
        form = AttachForm(request.POST, snapshots=visible_snapshots(user))
        if not form.is_valid():
            return {"attach_form": form}
        snapshots.attach_snapshot(
            session=session,
            user=user,
            snapshot=form.cleaned_data["snapshot"],
            phase=form.cleaned_data["phase"],
        )
        return step
    if action == "detach":
        snapshots.detach_snapshot(session=session, user=user, snapshot_id=_posted_int(request, "snapshot"))
        return step
    if action == "metric":
        form = VerifyForm(request.POST)
        if not form.is_valid():
            return {"verify_form": form}
        lifecycle.update_session(
            session=session, user=user, changes={"metric_after": form.cleaned_data["metric_after"]}
        )
        return forward
    return forward


def _close_post(request, session: Session, action: str) -> str | dict:
    user, lang = request.user, _language()
    if action == "close":
        form = CloseForm(request.POST, instance=Session.objects.get(pk=session.pk))
        if not form.is_valid():
            return {"close_form": form}
        lifecycle.close_session(session=session, user=user, **form.cleaned_data)
    elif action == "reopen":
        lifecycle.reopen_session(session=session, user=user)
    elif action == "promote":
        similar = promotion.promotion_check(session, language=lang)
        if similar and "confirm" not in request.POST:
            messages.warning(request, _("A very similar case already exists; link to it or promote anyway."))
        else:
            try:
                promotion.promote(session=session, user=user, language=lang)
            except ValueError as exc:
                messages.error(request, str(exc))
    elif action == "link":
        try:
            promotion.link_case(
                session=session, user=user, case_slug=request.POST.get("case", ""), language=lang
            )
        except Case.DoesNotExist:
            messages.error(request, _("No such case."))
    elif action == "helped":
        try:
            promotion.case_helped(session=session, user=user, case_slug=request.POST.get("case", ""))
        except Case.DoesNotExist:
            messages.error(request, _("No such case."))
    return Step.CLOSE


# --------------------------------------------------------------------------- context


def _context(request, session: Session, step: str, editable: bool, forms: dict) -> dict:
    lang = _language()
    session.refresh_from_db()
    labels = dict(Step.choices)
    ctx = {
        "session": session,
        "step": step,
        "step_label": labels[step],
        "steps": [
            {"name": name, "label": labels[name], "n": n, "current": name == step}
            for n, name in enumerate(STEP_ORDER, start=1)
        ],
        "step_template": f"troubleshoot/_step_{step}.html",
        "editable": editable,
        "is_support": is_support(request.user),
        "audit": _audit_rows(session.audit.select_related("user")[:300]),
        "comments": list(session.comments.select_related("author")),
        "tickets": list(session.tickets.all()),
        "assignable": list(people.assignable_users(session)) if editable else [],
        "language": lang,
        "next_step": lifecycle.next_step(step) if step != Step.CLOSE else None,
    }
    ctx.update(forms)
    builder = STEP_CONTEXT.get(step)
    if builder:
        builder(request, session, ctx)
    return ctx


ACTION_LABELS = {
    "created": pgettext_lazy("audit", "created"),
    "step": pgettext_lazy("audit", "step"),
    "field": pgettext_lazy("audit", "field"),
    "metric": pgettext_lazy("audit", "metric"),
    "snapshot": pgettext_lazy("audit", "snapshot"),
    "measure": pgettext_lazy("audit", "measure"),
    "measure.status": pgettext_lazy("audit", "measure status"),
    "measure.order": pgettext_lazy("audit", "plan order"),
    "measure.step": pgettext_lazy("audit", "applied together"),
    "measure.change_made": pgettext_lazy("audit", "change made"),
    "measure.notes": pgettext_lazy("audit", "notes"),
    "state": pgettext_lazy("audit", "state"),
    "promote": pgettext_lazy("audit", "promoted"),
    "link": pgettext_lazy("audit", "linked case"),
    "publish": pgettext_lazy("audit", "published"),
    "assignee": pgettext_lazy("audit", "assignee"),
    "comment": pgettext_lazy("audit", "comment"),
    "ticket": pgettext_lazy("audit", "ticket"),
    "helped": pgettext_lazy("audit", "case helped"),
}
# Values the services write in English; shown in the reader's language.
VALUE_PATTERNS = (
    (re.compile(r"^planned \(tier (?P<tier>\d)\)$"), pgettext_lazy("audit", "planned (tier %(tier)s)")),
    (re.compile(r"^tier (?P<tier>\d) #(?P<n>\d+)$"), pgettext_lazy("audit", "tier %(tier)s #%(n)s")),
    (re.compile(r"^tier (?P<tier>\d)$"), pgettext_lazy("audit", "tier %(tier)s")),
    (re.compile(r"^step (?P<n>\d+)$"), pgettext_lazy("audit", "step %(n)s")),
    (re.compile(r"^draft case (?P<slug>\S+)$"), pgettext_lazy("audit", "draft case %(slug)s")),
)


def _display_value(value: str, labels: dict[str, str]) -> str:
    if value in labels:
        return labels[value]
    for pattern, template in VALUE_PATTERNS:
        m = pattern.match(value)
        if m:
            return str(template) % m.groupdict()
    return value


def _value_labels() -> dict[str, str]:
    labels: dict[str, str] = {"yes": _("yes"), "no": _("no")}
    for choices in (
        Step.choices,
        PlannedMeasure.Status.choices,
        Session.State.choices,
        Session.Outcome.choices,
        Session.Direction.choices,
        SessionSnapshot.Phase.choices,
    ):
        labels.update({value: str(label) for value, label in choices})
    return labels


def _audit_rows(entries) -> list[dict]:
    """The trail in the reader's language; stored values stay untranslated."""
    values = _value_labels()
    fields = {f.name: str(f.verbose_name) for f in Session._meta.get_fields() if hasattr(f, "verbose_name")}
    rows = []
    for e in entries:
        if e.action in ("step", "state"):
            target = str(ACTION_LABELS.get(e.target, e.target))
        elif e.action in ("field", "metric"):
            target = fields.get(e.target, e.target)
        else:
            target = e.target
        rows.append(
            {
                "entry": e,
                "action": ACTION_LABELS.get(e.action, e.action),
                "target": target,
                "old": _display_value(e.old, values),
                "new": _display_value(e.new, values),
            }
        )
    return rows


def _problem(request, session, ctx):
    ctx.setdefault("problem_form", ProblemForm(instance=session))


def _snapshot_forms(request, session, ctx, phase):
    ctx.setdefault("upload_form", UploadForm(initial={"phase": phase}))
    attached = session.attachments.values_list("snapshot_id", flat=True)
    ctx.setdefault(
        "attach_form",
        AttachForm(
            initial={"phase": phase},
            # The picker shows names only: no facts JSON for every visible snapshot.
            snapshots=visible_snapshots(request.user)
            .exclude(pk__in=attached)
            .only("label", "original_filename", "created_at", "cluster")
            .order_by("-created_at", "-id"),
        ),
    )
    ctx["phase"] = phase
    ctx["progress"] = _progress(session, phase)


def _snapshots(request, session, ctx):
    _snapshot_forms(request, session, ctx, SessionSnapshot.Phase.BEFORE)
    ctx["all_progress"] = _progress(session, "")


def _host_charts(snaps) -> list[dict]:
    out = []
    for snap in snaps:
        if snap.status != "done":
            continue
        host = snap.host_facts()
        out.append(
            {
                "snapshot": snap,
                "memory": charts.numa_memory_bars(
                    host,
                    title=_("Memory per NUMA node"),
                    labels={
                        "anon": _("anon"),
                        "page cache": _("page cache"),
                        "huge pages": _("huge pages"),
                        "free": _("free"),
                        "other": _("other"),
                    },
                ),
                "cpu": charts.cpu_heat_strip(
                    host, title=_("Per-CPU utilisation"), busy=_("busy %"), softirq=_("softirq %")
                ),
                "distance": charts.numa_distance_matrix(host, title=_("NUMA distances")),
            }
        )
    return out


def _findings(request, session, ctx):
    lang = ctx["language"]
    found = session_findings.SessionFindings(session, language=lang)
    findings, cases = found.merged, found.similar
    for case in cases:
        case["why"] = explain(case, lang)
    serious = sum(1 for f in findings if f.severity in QUALIFYING_SEVERITIES)
    sounds = found.sounds_like if not cases and not serious else []
    for case in sounds:
        case["why"] = explain(case, lang)
    ctx.update(
        {
            "findings": [(sev, items) for sev, items in session_findings.findings_by_severity(findings)],
            "finding_count": len(findings),
            "serious_findings": serious,
            "similar": cases,
            "sounds_like": sounds,
            "founding": found.founding,
            "host_charts": _host_charts(found.snapshots),
            # the same "Not checked — missing evidence" list as the reports, each linked to its report
            "not_checked": not_checked_items(found.snapshots),
        }
    )


def _constraints(request, session, ctx):
    ctx.setdefault("constraints_form", ConstraintsForm(instance=session))
    ctx["candidates"] = planning.candidates(session, language=ctx["language"])


def _plan(request, session, ctx):
    found = session_findings.SessionFindings(session, language=ctx["language"])
    ctx["candidates"] = [
        c for c in planning.candidates(session, language=ctx["language"], findings=found) if not c.planned
    ]
    ctx["tiers"] = _tiers(session)
    ctx["guest_plans"] = planning.guest_plans(session, snapshots=found.snapshots)
    ctx["min_sessions"] = measure_effectiveness.MIN_SESSIONS


def _tiers(session):
    pms = list(session.measures.select_related("measure", "applied_by").order_by("tier", "position", "id"))
    for pm in pms:
        pm.blocked = planning.blocked_reason(session, pm.measure)
    return [
        (tier, [pm for pm in pms if pm.tier == tier])
        for tier in (1, 2, 3)
        if any(pm.tier == tier for pm in pms)
    ]


def _apply(request, session, ctx):
    errors = ctx.get("apply_errors") or {}
    rows = []
    for tier, pms in _tiers(session):
        for pm in pms:
            form = errors.get(pm.pk) or ApplyForm(
                prefix=f"pm{pm.pk}",
                initial={
                    "status": pm.status,
                    "change_made": pm.change_made,
                    "notes": pm.notes,
                    "metric_after": pm.metric_after,
                },
            )
            rows.append({"tier": tier, "pm": pm, "form": form})
    ctx["rows"] = rows
    steps = {step["number"]: step for step in apply.applied_steps(session)}
    for row in rows:
        step = steps.get(row["pm"].step)
        row["together_with"] = [s for s in step["slugs"] if s != row["pm"].measure.slug] if step else []
    ctx.setdefault("together_form", ApplyTogetherForm(session=session))
    ctx["metric_chart"] = charts.metric_bars(
        verify.metric_series(session), unit=session.metric_unit, title=_("Metric before and after")
    )


def _verify(request, session, ctx):
    _snapshot_forms(request, session, ctx, SessionSnapshot.Phase.AFTER)
    ctx["verification"] = found = verify.verification(session)
    targets = {item["snapshot"].pk: item["snapshot"] for item in found["unverified"] if item["snapshot"]}
    ctx["recheck_snapshots"] = list(targets.values())
    ctx.setdefault("paste_form", AddArtifactForm())
    ctx["language_is_zh"] = reads_chinese(ctx["language"])
    final = verify.final_metric(session)
    ctx.setdefault("verify_form", VerifyForm(initial={"metric_after": final}))
    ctx["final_metric"] = final
    gain = verify.improvement(session, final)
    ctx["gain_pct"] = round(gain * 100) if gain is not None else None
    ctx["metric_chart"] = charts.metric_bars(
        verify.metric_series(session), unit=session.metric_unit, title=_("Metric before and after")
    )
    ctx["host_charts"] = _host_charts(snapshots.snapshots_of(session, SessionSnapshot.Phase.AFTER))


def _close(request, session, ctx):
    ctx.setdefault("close_form", CloseForm(instance=session))
    ctx["final_metric"] = verify.final_metric(session)
    cases = session_findings.similar_cases(session, language=ctx["language"])
    if session.is_closed and not session.promoted_case_id:
        ctx["very_similar"] = promotion.promotion_check(session, language=ctx["language"], cases=cases)
    # The summary's "this case helped": the similar cases and the linked one.
    helpful = [{"slug": c["slug"], "title": c["title"], "url": c["url"]} for c in cases]
    linked = session.linked_case
    if linked and linked.slug not in {c["slug"] for c in helpful}:
        helpful.insert(0, {"slug": linked.slug, "title": linked.title, "url": linked.get_absolute_url()})
    marked = set(CaseReuse.objects.filter(session=session).values_list("slug", flat=True))
    for c in helpful:
        c["marked"] = c["slug"] in marked
    ctx["helpful_cases"] = helpful
    ctx["promoted_versions"] = (
        list(Case.objects.filter(slug=session.promoted_case.slug)) if session.promoted_case_id else []
    )


STEP_CONTEXT: dict[str, Callable[[HttpRequest, Session, dict], None]] = {
    Step.PROBLEM: _problem,
    Step.SNAPSHOTS: _snapshots,
    Step.FINDINGS: _findings,
    Step.CONSTRAINTS: _constraints,
    Step.PLAN: _plan,
    Step.APPLY: _apply,
    Step.VERIFY: _verify,
    Step.CLOSE: _close,
}


# --------------------------------------------------------------------------- people, tickets, exports


def _back(session: Session) -> HttpResponse:
    return redirect(reverse("troubleshoot:step", args=[session.pk, session.step]) + "#people")


@require_POST
def session_assign(request: HttpRequest, pk: int) -> HttpResponse:
    session = _session_for(request, pk)
    assignee = None
    raw = request.POST.get("assignee") or ""
    if raw:
        assignee = people.assignable_users(session).filter(pk=_posted_int(request, "assignee")).first()
        if assignee is None:
            raise BadRequest("no such assignee")
    try:
        people.assign_session(session=session, user=request.user, assignee=assignee)
    except PermissionDenied:
        raise Http404("no such session") from None
    return _back(session)


@require_POST
def session_comment(request: HttpRequest, pk: int) -> HttpResponse:
    session = _session_for(request, pk)
    try:
        people.add_comment(session=session, user=request.user, text=request.POST.get("text", ""))
    except ValueError:
        messages.error(request, _("A comment cannot be empty."))
    return _back(session)


@require_POST
def session_add_ticket(request: HttpRequest, pk: int) -> HttpResponse:
    session = _session_for(request, pk)
    form = TicketForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("A ticket is a key like OPS-123 and an optional http(s) address."))
        return _back(session)
    try:
        people.add_session_ticket(
            session=session, user=request.user, key=form.cleaned_data["key"], url=form.cleaned_data["url"]
        )
    except TicketRejected as exc:
        messages.error(request, str(exc))
    return _back(session)


@require_GET
def session_summary(request: HttpRequest, pk: int, markup: str) -> HttpResponse:
    """The session summed up for its ticket: ``summary.md`` or ``summary.jira``."""
    session = _session_for(request, pk)
    writer = MARKUPS[markup]
    text = render_summary(
        session, language=_language(), base_url=request.build_absolute_uri("/"), markup=markup
    )
    response = HttpResponse(text, content_type=writer.content_type)
    response["Content-Disposition"] = f'inline; filename="session-{session.pk}.{writer.extension}"'
    return response
