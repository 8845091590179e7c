"""A search: parse, correct, rank and page the hits of one query (:func:`search`)."""

from __future__ import annotations

import math

from django.db.models import Max
from django.utils.html import escape
from django.utils.safestring import mark_safe

from kb.models import Case
from kb.search.explaining import _reuse_count, _tags_held, _versions, explain
from kb.search.lexicon import PAGE_SIZE
from kb.search.queries import parse_query
from kb.search.ranking import _count, _first_depth, _rank, _states, _vocabulary
from kb.search.resultset import COUNT_CAP, THIN, Hit, Results, _filtered
from kb.search.snippets import _preview, highlight
from kb.search.spelling import _correct, _drop_fallbacks, _suggestion


def search(
    text: str,
    *,
    filters: dict | None = None,
    page: int = 1,
    page_size: int = PAGE_SIZE,
    language: str = "en",
) -> Results:
    """Search cases: one hit per case, in ``language`` (the reader's) when the
    case has it. ``filters``: state, platform, database, language, rule,
    author_id (``accounts.access.case_search_filters`` adds it for drafts)."""

    filters = dict(filters or {})
    query = parse_query(text)
    page = max(int(page or 1), 1)
    offset = (page - 1) * page_size
    if not query:
        base = _filtered(Case.objects.all(), filters)
        groups = base.values("slug").annotate(latest=Max("updated_at")).order_by("-latest", "slug")
        total = base.values("slug").distinct().count()
        slugs = [g["slug"] for g in groups[offset : offset + page_size]]
        hits = [
            Hit(case, 0.0, mark_safe(escape(_preview(case.symptom))), None, other, _reuse_count(case))  # noqa: S308
            for case, other in _versions(filters, slugs, {}, language)
        ]
        return Results(query, hits, total, False, page, max(1, math.ceil(total / page_size)))

    df, versions, heads = _vocabulary(query.terms, _states(filters), _first_depth(offset + page_size))
    corrections = _correct(query, df, filters)
    _drop_fallbacks(query, df)
    ranking = _rank(query, filters, offset + page_size, df, versions, heads)
    candidates: dict = {}  # read by the first count, for the second
    total, exact_count = _count(query, filters, df, versions, any_group=False, read=candidates)
    relaxed = len(query.groups) > 1 and total < THIN
    if relaxed:
        total, exact_count = _count(
            query, filters, df, versions, any_group=True, found=len(ranking.rows), read=candidates
        )
    rows = ranking.rows[offset : offset + page_size]
    matched = {r[1]: r for r in rows}
    matched_ids = {r[1]: r[0] for r in rows}
    shown: dict[int, tuple[dict[str, int], list[str]]] = {}
    versions = _versions(filters, [r[1] for r in rows], matched_ids, language, query.terms, shown)
    hits = []
    for case, other in versions:
        why, source = _explained(case, other, query, filters, shown)
        if not why.matched:  # never listed: a case holding none of the query words
            continue
        snippet = highlight(source, query, fields=why.fields, title=source is not case)
        hits.append(Hit(case, matched[case.slug][3], snippet, why, other, _reuse_count(case)))
    capped = total > COUNT_CAP or not exact_count
    total = min(total, COUNT_CAP)
    return Results(
        query,
        hits,
        total,
        capped,
        page,
        max(1, math.ceil(total / page_size)),
        relaxed,
        _suggestion(text, corrections),
        corrections,
        ranking.exact,
    )


def best_cases(text: str, *, filters: dict, limit: int, language: str = "en") -> list[Case]:
    """The ``limit`` best cases for ``text``, as :func:`search` ranks them (one
    version per case, the reader's language first), without what a results
    page adds: no counts, no why, no snippets, no other version. For a box
    that lists titles (the desk's global search)."""
    query = parse_query(text)
    if not query:
        return []
    df, versions, heads = _vocabulary(query.terms, _states(filters), _first_depth(limit))
    _correct(query, df, filters)
    _drop_fallbacks(query, df)
    rows = _rank(query, filters, limit, df, versions, heads).rows[:limit]
    slugs = [r[1] for r in rows]
    by_slug: dict[str, dict[str, Case]] = {}
    shown = _filtered(Case.objects.filter(slug__in=slugs), filters).only("id", "slug", "language", "title")
    for case in shown:
        by_slug.setdefault(case.slug, {})[case.language] = case
    matched = {r[1]: r[0] for r in rows}
    out = []
    for slug in slugs:
        found = by_slug.get(slug, {})
        case = found.get(language) or next((c for c in found.values() if c.pk == matched[slug]), None)
        if case is not None:
            out.append(case)
    return out


def _explained(case, other, query, filters: dict, shown: dict) -> tuple:
    """(why, version explained) of a hit shown as ``case``: the version shown
    when it holds the most query words (the reader's language first), else its
    ``other`` version when that is the one that matched (a Chinese query in the
    English UI: the Chinese version holds its words). ``Why.language`` names it."""
    best = None
    for version in (case, other):
        if version is None or version.pk not in shown:
            continue
        where, tag_names = shown[version.pk]
        why = explain(version, query, filters, where=where, tags=_tags_held(query, tag_names, where))
        if best is None or len(why.matched) > len(best[0].matched):
            best = (why, version)
    if best is None:  # not foreseen as shown by _versions: looked up
        best = (explain(case, query, filters), case)
    return best
