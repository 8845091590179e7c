"""Case search, case pages and the measures catalogue. Thin: the work is in
``kb.search`` and ``kb.similarity``."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils.http import urlencode
from django.utils.translation import get_language

from accounts.access import case_search_filters, readable_cases
from kb import search
from kb.forms import CaseSearchForm
from kb.models import Case, Measure
from kb.similarity import related_cases


def reader_language() -> str:
    return "zh" if (get_language() or "").lower().startswith("zh") else "en"


def case_list(request: HttpRequest) -> HttpResponse:
    data = request.GET.copy()
    if not data.get("state"):
        data["state"] = Case.State.PUBLISHED
    form = CaseSearchForm(data)
    filters: dict = {"state": Case.State.PUBLISHED}
    text, page = "", 1
    if form.is_valid():
        data = form.cleaned_data
        text = data["q"]
        page = data["page"] or 1
        filters.update({k: data[k] for k in ("state", "platform", "database", "rule", "language") if data[k]})
    results = search.search(text, filters=case_search_filters(request.user, filters), page=page)
    params = {k: v for k, v in request.GET.items() if k != "page" and v}
    context = {
        "form": form,
        "results": results,
        "rows": [
            {
                "hit": hit,
                "title": search.highlight_title(hit.case.title, results.query),
            }
            for hit in results.hits
        ],
        "query_string": urlencode(params),
        "q": text,
    }
    template = "kb/_results.html" if request.htmx else "kb/case_list.html"
    return render(request, template, context)


def _case_page(request: HttpRequest, case: Case) -> HttpResponse:
    steps = list(case.steps.select_related("measure"))
    context = {
        "case": case,
        "steps": steps,
        "metrics": list(case.metrics.all()),
        "references": list(case.references.all()),
        "tags": list(case.tags.all()),
        "translations": list(case.translations().only("slug", "language", "title")),
        "related": related_cases(case) if case.signature_rules else [],
        "language": case.language,
    }
    return render(request, "kb/case_detail.html", context)


def case_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """The case in the reader's language when it exists, else any version."""
    versions = {c.language: c for c in readable_cases(request.user).filter(slug=slug)}
    if not versions:
        raise Http404("no such case")
    case = versions.get(reader_language()) or versions.get("en") or next(iter(versions.values()))
    return _case_page(request, case)


def case_detail_lang(request: HttpRequest, slug: str, language: str) -> HttpResponse:
    return _case_page(request, get_object_or_404(readable_cases(request.user), slug=slug, language=language))


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
    return render(
        request,
        "kb/measure_detail.html",
        {"measure": measure, "cases": cases, "language": reader_language()},
    )
