"""Why a case matched: the fields and tags that hold the query's terms (:func:`explain`)."""

from __future__ import annotations

import re
import unicodedata

from django.db import connection

from kb.models import Case, CaseMeasure, CaseReuse, Metric, Posting, Tag
from kb.search.indexing import WHERE_BIT
from kb.search.queries import Query, synonym_phrase
from kb.search.ranking import _group_matches, _in
from kb.search.resultset import Why, _filter_sql
from kb.search.tokenizer import _phrases, _word_units, simplified

_HIT_COLUMNS = (
    "id", "slug", "language", "title", "state", "platform", "database", "database_version",
    "symptom", "cause", "resolution_summary", "environment_notes", "signature",
)  # fmt: skip


def _reuse_count(case: Case) -> int:
    """The ``reuse_count`` annotation of :func:`_versions`."""
    return int(getattr(case, "reuse_count", 0) or 0)


_TAG_SEPARATOR = "\x1f"  # between the tag names of a version (:func:`_versions`)


def _versions(
    filters: dict,
    slugs: list[str],
    matched_ids: dict[str, int],
    language: str,
    terms: list[str] | None = None,
    shown: dict[int, tuple[dict[str, int], list[str]]] | None = None,
):
    """(case, other version) per slug, in order: the reader's language when the
    case has it among the versions passing ``filters``, else the version that
    matched. One statement, written out (no ORM query to compile): each version
    is annotated ``solved`` and ``verified`` (:class:`Why`) and ``reuse_count``;
    with the query's ``terms``, ``shown`` gains for each version that can be
    shown (query term -> ``WHERE_BIT`` flags of the fields holding it, as
    :func:`_where`; its tags, for :func:`_tags_held`): what a hit shows, in
    one round trip."""
    if not slugs:
        return []
    base_sql, base_params = _filter_sql(filters)
    slugs_sql, slug_params = _in(slugs)
    columns = ", ".join(f"c.{name}" for name in _HIT_COLUMNS)
    held_sql: str = ""
    held_params: list = []
    is_pg = connection.vendor == "postgresql"
    if terms:
        terms_sql, held_params = _in(terms)
        if is_pg:
            held_agg = "string_agg(p.term || ':' || p.fields, ' ')"
            tags_agg = "string_agg(t.name, %s ORDER BY t.name)"
        else:  # the tags ordered below, as SQLite orders text (by code point)
            held_agg = "group_concat(p.term || ':' || p.fields, ' ')"
            tags_agg = "group_concat(t.name, %s)"
        # Only for the versions that can be shown: the reader's language, the one matched.
        shown_sql, shown_params = _in(list(matched_ids.values()))
        can_show = f"(c.language = %s OR c.id {shown_sql})"
        held_sql = (
            f", CASE WHEN {can_show} THEN (SELECT {held_agg} FROM {Posting._meta.db_table} p"  # noqa: S608 -- only placeholders, table and column names are interpolated
            f" WHERE p.case_id = c.id AND p.term {terms_sql}) END AS held,"
            f" CASE WHEN {can_show} THEN (SELECT {tags_agg} FROM {Case.tags.through._meta.db_table} ct"
            f" JOIN {Tag._meta.db_table} t ON t.id = ct.tag_id WHERE ct.case_id = c.id) END AS tag_list"
        )
        held_params = [language, *shown_params, *held_params, language, *shown_params, _TAG_SEPARATOR]
    sql = (
        f"SELECT {columns},"  # noqa: S608 -- only placeholders, table and column names are interpolated
        f" EXISTS (SELECT 1 FROM {CaseMeasure._meta.db_table} s"
        " WHERE s.case_id = c.id AND s.status = %s) AS solved,"
        f" EXISTS (SELECT 1 FROM {Metric._meta.db_table} m WHERE m.case_id = c.id"
        f" AND m.before IS NOT NULL AND m.after IS NOT NULL) AS verified,"
        f" (SELECT COUNT(*) FROM {CaseReuse._meta.db_table} r WHERE r.slug = c.slug) AS reuse_count{held_sql}"
        f" FROM {Case._meta.db_table} c WHERE c.slug {slugs_sql} AND {base_sql}"
    )
    by_slug: dict[str, dict[str, Case]] = {}
    for case in Case.objects.raw(sql, [CaseMeasure.Status.APPLIED, *held_params, *slug_params, *base_params]):
        if terms and shown is not None:
            held, tag_list = getattr(case, "held", None), getattr(case, "tag_list", None)
            shown[case.pk] = (
                {term: int(bits) for term, _, bits in (h.rpartition(":") for h in (held or "").split())},
                (tag_list.split(_TAG_SEPARATOR) if is_pg else sorted(tag_list.split(_TAG_SEPARATOR)))
                if tag_list
                else [],
            )
        by_slug.setdefault(case.slug, {})[case.language] = case
    out = []
    for slug in slugs:
        versions = by_slug.get(slug)
        if not versions:
            continue
        matched = next((c for c in versions.values() if c.pk == matched_ids.get(slug)), None)
        case = versions.get(language) or matched or next(iter(versions.values()))
        other = next((c for lang, c in sorted(versions.items()) if c.pk != case.pk), None)
        out.append((case, other))
    return out


def _where(case_ids: list[int], terms: list[str]) -> dict[int, dict[str, int]]:
    """case id -> query term -> the fields of the case holding it (``WHERE_BIT``
    flags), read from the postings: the terms a case does not hold are absent."""
    if not case_ids or not terms:
        return {}
    ids_sql, ids = _in(case_ids)
    terms_sql, term_params = _in(terms)
    out: dict[int, dict[str, int]] = {i: {} for i in case_ids}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT case_id, term, fields FROM kb_posting"  # noqa: S608 -- only placeholders are interpolated
            f" WHERE case_id {ids_sql} AND term {terms_sql}",
            [*ids, *term_params],
        )
        for case_id, term, bits in cursor.fetchall():
            out[case_id][term] = bits
    return out


def _tags_held(query: Query, names: list[str], where: dict[str, int]) -> list[str]:
    """The tags among ``names`` (a version's, sorted) that hold a query word,
    read only when the index says its tags hold one (``where``, :func:`_where`)."""
    bit = WHERE_BIT["tags"]
    if not any(b & bit for b in where.values()):
        return []
    return [name for name in names if any(_group_matches(g, _held_terms(name, query)) for g in query.groups)]


def _tags_naming(query: Query, case_ids: list[int], where: dict[int, dict[str, int]]) -> dict[int, list[str]]:
    """case id -> its tags that hold a query word, looked up only for the cases
    whose tags the index says hold one."""
    bit = WHERE_BIT["tags"]
    wanted = [i for i in case_ids if any(b & bit for b in where.get(i, {}).values())]
    if not wanted:
        return {}
    out: dict[int, list[str]] = {}
    through = Case.tags.through._meta.db_table
    ids_sql, ids = _in(wanted)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT ct.case_id, t.name FROM {through} ct JOIN {Tag._meta.db_table} t ON t.id = ct.tag_id"  # noqa: S608 -- only placeholders and table names are interpolated
            f" WHERE ct.case_id {ids_sql} ORDER BY t.name",
            ids,
        )
        for case_id, name in cursor.fetchall():
            if any(_group_matches(g, _held_terms(name, query)) for g in query.groups):
                out.setdefault(case_id, []).append(name)
    return out


_FIELDS = (
    ("title", "title"),
    ("symptom", "symptom"),
    ("cause", "cause"),
    ("resolution", "resolution_summary"),
    ("environment", "environment_notes"),
)


_LATIN_RUN_RE = re.compile(r"[a-z0-9_]+(?:[.:/\-$][a-z0-9_]+)*")


def _held_terms(text: str, query: Query) -> set[str]:
    """The query terms ``text`` holds, without segmenting it: each distinct
    Latin word through the (cached) word tokenizer, Chinese terms as
    substrings. Cheap enough for every field of every hit of a page."""
    if not text:
        return set()
    text = (text if text.isascii() else simplified(unicodedata.normalize("NFKC", text))).lower()
    held = {t for t in query.cjk_terms() if t in text}
    memo = query.word_terms()
    terms = query._term_set()
    for word in set(_LATIN_RUN_RE.findall(text)):
        got = memo.get(word)
        if got is None:
            got = _terms_of(word, query, memo, terms)
        held.update(got)
    return held


def _terms_of(
    word: str, query: Query, memo: dict[str, tuple[str, ...]], terms: dict[str, None] | None = None
) -> tuple[str, ...]:
    """The query terms ``word`` holds (an identifier: the phrases of its parts
    too); ``terms``: the query's (``Query._term_set``), when at hand."""
    if terms is None:
        terms = query._term_set()
    unit = _word_units(word)
    tokens = (unit.primary, *unit.parts, *_phrases(unit.parts)) if unit else ()
    got = tuple(t for t in tokens if t in terms)
    memo[word] = got
    return got


_WHY_FIELDS = ("title", "symptom", "cause", "resolution", "environment", "measures", "tags")


def explain(
    case, query: Query, filters: dict | None = None, *, where: dict[str, int] | None = None, tags=None
) -> Why:
    """Which fields, rules and tags of ``case`` hold the query words, read off
    the index: ``where`` (query term -> ``WHERE_BIT`` flags of the fields
    holding it, :func:`_where`), ``tags`` (its tags naming a query word,
    :func:`_tags_naming`); both looked up when not given. ``solved`` and
    ``verified`` come from the annotations of :func:`_versions` when present."""
    if where is None:
        where = _where([case.pk], query.terms).get(case.pk, {})
    if tags is None:
        tags = _tags_naming(query, [case.pk], {case.pk: where}).get(case.pk, [])

    # The fields holding each group: those holding every token of one of
    # its alternatives.
    in_fields = 0
    for group in query.groups:
        for alt in group:
            bits = -1
            for term in alt:
                bits &= where.get(term, 0)
            in_fields |= bits if bits != -1 else 0
    fields = [name for name in _WHY_FIELDS if in_fields & WHERE_BIT[name]]
    wanted_rule = (filters or {}).get("rule")
    in_rules = bool(in_fields & WHERE_BIT["rules"])

    named = query.named_rules()

    def names(rule: str) -> bool:
        found = named.get(rule)
        if found is None:
            held = _held_terms(rule.partition(".")[2] or rule, query)
            found = named[rule] = any(_group_matches(g, held) for g in query.groups)
        return found

    rules = [rule for rule in case.signature_rules if rule == wanted_rule or (in_rules and names(rule))]
    held = set(where)
    labelled = list(zip(query.groups, query.labels, strict=True))
    synonyms = [
        (label, synonym_phrase(alts[0]))
        for g, label in labelled
        if (alts := [alt for alt in g if all(t in held for t in alt)])
        and all(alt in query.synonyms for alt in alts)
    ]
    solved, verified = getattr(case, "solved", None), getattr(case, "verified", None)
    if solved is None or verified is None:
        solved = case.steps.filter(status=CaseMeasure.Status.APPLIED).exists()
        verified = case.metrics.filter(before__isnull=False, after__isnull=False).exists()
    return Why(
        fields=fields,
        matched=[label for g, label in labelled if _group_matches(g, held)],
        missing=[label for g, label in labelled if not _group_matches(g, held)],
        rules=rules,
        tags=list(tags),
        solved=bool(solved),
        verified=bool(verified),
        language=case.language,
        synonyms=synonyms,
    )
