"""Case search, case pages and the measures catalogue. Thin: the work is in
``kb.search`` and ``kb.similarity``."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.utils.translation import get_language, gettext_lazy
from django.utils.translation import gettext as _
from django.views import View
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.access import SignedInRequest
from config.language import content_language
from config.pagination import paginate
from kb import authoring, history, retroscans, services
from kb.access import (
    PUBLIC_CASE_STATES,
    can_create_case,
    can_edit_case,
    can_review_case,
    case_search_filters,
    readable_cases,
)
from kb.forms import (
    CaseEditForm,
    CaseSearchForm,
    ImportCasesForm,
    NewCaseForm,
    ReviewForm,
    WriteupForm,
    parse_references,
)
from kb.models import Case, CaseReuse, Measure, RetroScan
from kb.search import searching, snippets
from kb.similarity import related_cases

# Display names of kb.search.Why.fields.
FIELD_NAMES = {
    "title": gettext_lazy("title"),
    "symptom": gettext_lazy("symptom"),
    "cause": gettext_lazy("cause"),
    "resolution": gettext_lazy("resolution"),
    "environment": gettext_lazy("environment"),
    "measures": gettext_lazy("measures"),
    "tags": gettext_lazy("tags"),
}


def reader_language() -> str:
    return content_language(get_language())


def case_list(request: HttpRequest) -> HttpResponse:
    data = request.GET.copy()
    if not data.get("state"):
        data["state"] = Case.State.PUBLISHED
    form = CaseSearchForm(data)
    filters: dict = {"state": Case.State.PUBLISHED}
    text, page = "", 1
    if form.is_valid():
        cleaned = form.cleaned_data
        text = cleaned["q"]
        page = cleaned["page"] or 1
        filters.update(
            {k: cleaned[k] for k in ("state", "platform", "database", "rule", "language") if cleaned[k]}
        )
    results = searching.search(
        text, filters=case_search_filters(request.user, filters), page=page, language=reader_language()
    )
    params: dict[str, Any] = {k: v for k, v in request.GET.items() if k != "page" and v}
    context = {
        "form": form,
        "results": results,
        "rows": [
            {
                "hit": hit,
                "title": snippets.highlight_title(hit.case.title, results.query),
                "fields": [FIELD_NAMES[f] for f in hit.why.fields] if hit.why else [],
                "reuse_count": hit.reuse_count,
            }
            for hit in results.hits
        ],
        "query_string": urlencode(params),
        "suggestion_string": urlencode({**params, "q": results.suggestion}) if results.suggestion else "",
        "q": text,
    }
    template = "kb/_results.html" if getattr(request, "htmx", False) else "kb/case_list.html"
    return render(request, template, context)


# Matching hosts per page of the case and rule pages.
HOSTS_PER_PAGE = 100


def matching_hosts_context(request: HttpRequest, *, kind: str, target: str) -> dict[str, Any]:
    """The hosts a case group or rule matches that the reader may see, paged
    (``?matches=``), and the latest retro-scan that looked for them: the
    "Matching hosts" section of the case and rule pages
    (``kb/_matching_hosts.html``)."""
    scan = retroscans.latest_scan(kind=kind, target=target)
    if scan is None:
        return {"scan": None, "kind": kind}
    hosts = retroscans.matching_hosts(request.user, kind=kind, target=target)
    return {
        "scan": scan,
        "kind": kind,
        **paginate(request, hosts, per_page=HOSTS_PER_PAGE, param="matches", newest_first=False),
    }


def _case_page(request: SignedInRequest, case: Case) -> HttpResponse:
    steps = list(case.steps.select_related("measure"))
    user = request.user
    versions = list(
        Case.objects.filter(slug=case.slug).only("slug", "language", "title", "state", "translation_pending")
    )
    from_search = _reached_from_search(request)
    context = {
        "case": case,
        "steps": steps,
        "metrics": list(case.metrics.all()),
        "references": list(case.references.all()),
        "tags": list(case.tags.all()),
        "translations": [v for v in versions if v.pk != case.pk],
        "versions": versions,
        "related": related_cases(case) if case.signature_rules else [],
        "language": case.language,
        "can_edit": can_edit_case(user, case),
        "can_review": can_review_case(user, case),
        "submission_problems": services.submission_problems({v.language: v for v in versions})
        if case.state == Case.State.DRAFT
        else [],
        "review_comments": history.review_comments(case),
        "review_form": ReviewForm(),
        "reuse_count": services.reuse_counts([case.slug]).get(case.slug, 0),
        "matching": matching_hosts_context(request, kind=RetroScan.Kind.CASE, target=case.slug)
        if case.state in PUBLIC_CASE_STATES
        else None,
        # "This case helped" is offered to a reader who came from search.
        "offer_helped": from_search
        and case.state == Case.State.PUBLISHED
        and not CaseReuse.objects.filter(slug=case.slug, user=user, source=CaseReuse.Source.SEARCH).exists(),
    }
    return render(request, "kb/case_detail.html", context)


def _reached_from_search(request: HttpRequest) -> bool:
    """Whether the reader came from the search page: its results link here and
    the browser names it in Referer (same-origin referrer policy), or a link
    says ``?from=search``."""
    if request.GET.get("from") == "search":
        return True
    referer = urlsplit(request.headers.get("Referer", ""))
    return referer.netloc == request.get_host() and referer.path == reverse("kb:case_list")


def _readable(request: HttpRequest, slug: str, language: str) -> Case:
    return get_object_or_404(readable_cases(request.user), slug=slug, language=language)


@require_GET
def case_detail(request: SignedInRequest, slug: str) -> HttpResponse:
    """The case in the reader's language when it exists, else any version."""
    versions = {c.language: c for c in readable_cases(request.user).filter(slug=slug)}
    if not versions:
        raise Http404("no such case")
    case = versions.get(reader_language()) or versions.get("en") or next(iter(versions.values()))
    return _case_page(request, case)


@require_GET
def case_detail_lang(request: SignedInRequest, slug: str, language: str) -> HttpResponse:
    return _case_page(request, _readable(request, slug, language))


@require_http_methods(["GET", "POST"])
def case_edit(request: HttpRequest, slug: str, language: str) -> HttpResponse:
    case = _readable(request, slug, language)
    if not can_edit_case(request.user, case):
        raise PermissionDenied("only drafts are edited, by their author or support staff")
    form = CaseEditForm(request.POST or None, instance=Case.objects.get(pk=case.pk))
    if request.method == "POST" and form.is_valid():
        services.edit_case(case=case, user=request.user, changes=form.cleaned_data)
        messages.success(request, _("Saved."))
        return redirect(case.get_absolute_url())
    other = case.translations().first()
    return render(request, "kb/case_edit.html", {"case": case, "form": form, "other": other})


@require_POST
def case_review(request: HttpRequest, slug: str) -> HttpResponse:
    """Submit a draft for review, or (a reviewer) approve or return it."""
    versions = list(readable_cases(request.user).filter(slug=slug))
    if not versions:
        raise Http404("no such case")
    form = ReviewForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Choose an action."))
        return redirect(versions[0].get_absolute_url())
    action, comment = form.cleaned_data["action"], form.cleaned_data["comment"]
    try:
        if action == "submit":
            services.submit_for_review(slug=slug, user=request.user, comment=comment)
            messages.success(request, _("Submitted for review."))
        else:
            services.review_case(slug=slug, user=request.user, approve=action == "approve", comment=comment)
            if action == "approve":
                messages.success(request, _("Approved: both language versions are published."))
            else:
                messages.success(request, _("Returned to the author with your comments."))
    except services.ReviewError as exc:
        messages.error(request, str(exc))
    case = next((v for v in versions if v.language == reader_language()), versions[0])
    return redirect(case.get_absolute_url())


@require_GET
def case_history(request: HttpRequest, slug: str, language: str) -> HttpResponse:
    case = _readable(request, slug, language)
    return render(request, "kb/case_history.html", {"case": case, "entries": history.history(case)})


@require_POST
def case_helped(request: HttpRequest, slug: str) -> HttpResponse:
    """ "This case helped", from the case page reached through search."""
    case = readable_cases(request.user).filter(slug=slug, state=Case.State.PUBLISHED).first()
    if case is None:
        raise Http404("no such case")
    if services.record_reuse(slug=slug, user=request.user, source=CaseReuse.Source.SEARCH):
        messages.success(request, _("Thank you: the case's reuse count went up."))
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = case.get_absolute_url()
    return redirect(back)


def measure_list(request: HttpRequest) -> HttpResponse:
    return render(
        request, "kb/measure_list.html", {"measures": Measure.objects.all(), "language": reader_language()}
    )


def measure_detail(request: HttpRequest, slug: str) -> HttpResponse:
    measure = get_object_or_404(Measure, slug=slug)
    cases = (
        Case.objects.filter(steps__measure=measure, language=reader_language(), state=Case.State.PUBLISHED)
        .distinct()
        .only("slug", "language", "title")
    )
    language = reader_language()
    return render(
        request,
        "kb/measure_detail.html",
        {
            "measure": measure,
            "cases": cases,
            "language": language,
            "title": measure.title_for(language),
            "what_why": measure.what_why_for(language),
        },
    )


def _require_author(request: HttpRequest) -> None:
    if not can_create_case(request.user):
        raise PermissionDenied("only team members and support staff write cases")


def _measure_choices(language: str) -> list[tuple[str, str]]:
    return [(m.slug, m.title_for(language)) for m in Measure.objects.all()]


class CaseNewView(View):
    """Write a case: a draft in one language (the other pre-filled), with an
    optional snapshot for its environment and signature: a file uploaded
    here, or an existing snapshot, which lives in an app above the knowledge
    base: ``triage.views.CaseNewView`` serves this page and adds them."""

    def snapshot_choices(self, user) -> list[tuple[int, str]]:
        """Existing snapshots a user may base a case on, as (id, label); none here."""
        return []

    def snapshot_analysis(self, user, snapshot_id: int) -> authoring.SnapshotAnalysis:
        """The signature and environment of an existing snapshot; none here."""
        raise authoring.snapshot_unusable()

    def dispatch(self, request, *args, **kwargs):
        _require_author(request)
        return super().dispatch(request, *args, **kwargs)

    def get(self, request: HttpRequest) -> HttpResponse:
        return render(request, "kb/case_new.html", {"form": self._form(request)})

    def _form(self, request: HttpRequest) -> NewCaseForm:
        return NewCaseForm(
            request.POST or None,
            request.FILES or None,
            snapshots=self.snapshot_choices(request.user),
            measures=_measure_choices(reader_language()),
            initial={"language": reader_language()},
        )

    def post(self, request: HttpRequest) -> HttpResponse:
        form = self._form(request)
        if not form.is_valid():
            return render(request, "kb/case_new.html", {"form": form})
        data = form.cleaned_data
        doc = authoring.CaseDocument(
            language=data["language"],
            **{name: data[name] for name in services.TEXT_FIELDS},
            **{name: data[name] for name in authoring.ENV_FIELDS},
            tags=[t.strip() for t in data["tags"].split(",") if t.strip()],
            references=parse_references(data["references"]),
            steps=[{"measure": slug, "status": "applied", "outcome": ""} for slug in data["measures"]],
            applies_to={
                kind: data[f"{kind}_versions"].strip()
                for kind in ("kernel", "database", "hypervisor")
                if data[f"{kind}_versions"].strip()
            },
        )
        try:
            analysis = None
            if data["snapshot"]:
                analysis = self.snapshot_analysis(request.user, data["snapshot"])
            elif data["snapshot_file"]:
                upload = data["snapshot_file"]
                analysis = authoring.analyse_text(name=upload.name, data=upload.read())
            created = authoring.do_create_case(user=request.user, documents=[doc], analysis=analysis)
        except authoring.CaseInputError as exc:
            form.add_error(None, str(exc))
            return render(request, "kb/case_new.html", {"form": form})
        messages.success(
            request, _("Draft saved. Translate the other language version, then submit it for review.")
        )
        return redirect(created[doc.language].get_absolute_url())


@require_http_methods(["GET", "POST"])
def case_import(request: HttpRequest) -> HttpResponse:
    """Import Markdown or YAML case files, or a pasted write-up, as drafts."""
    _require_author(request)
    which = request.POST.get("form") if request.method == "POST" else None
    files_form = (
        ImportCasesForm(request.POST or None, request.FILES or None)
        if which == "files"
        else ImportCasesForm()
    )
    writeup_form = (
        WriteupForm(request.POST or None, initial={"language": reader_language()})
        if which == "writeup"
        else WriteupForm(initial={"language": reader_language()})
    )
    try:
        if which == "files" and files_form.is_valid():
            groups = authoring.do_import_files(
                user=request.user, files=[(f.name, f.read()) for f in files_form.cleaned_data["documents"]]
            )
            messages.success(request, _("%(count)d draft cases imported.") % {"count": len(groups)})
            first = groups[0]
            return redirect((first.get(reader_language()) or next(iter(first.values()))).get_absolute_url())
        if which == "writeup" and writeup_form.is_valid():
            data = writeup_form.cleaned_data
            created = authoring.do_create_from_writeup(
                user=request.user,
                language=data["language"],
                title=data["title"],
                text=data["text"],
                cause=data["cause"],
                resolution_summary=data["resolution_summary"],
            )
            messages.success(request, _("Draft saved from the write-up: add the cause and the resolution."))
            return redirect(created[data["language"]].get_absolute_url())
    except authoring.CaseInputError as exc:
        (files_form if which == "files" else writeup_form).add_error(None, str(exc))
    return render(request, "kb/case_import.html", {"files_form": files_form, "writeup_form": writeup_form})
