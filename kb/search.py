"""Bilingual case search.

One tokenizer serves the index and the query (:func:`tokenize`):

* text is NFKC-normalised and lower-cased;
* Chinese runs are segmented with rjieba, primed with the versioned domain
  dictionary ``kb/data/dictionary.txt`` (大页, 绑核, 内存交织 ...), and indexed
  with ``cut_for_search`` so a two-character word inside a longer one is found;
* identifiers such as ``vm.zone_reclaim_mode`` or ``host-passthrough`` are kept
  whole *and* split into their parts (``zone_reclaim_mode``, ``zone``,
  ``reclaim``, ``mode``);
* every token is reduced to letters, digits and CJK characters (its storage
  form), so neither SQLite's unicode61 nor PostgreSQL's parser splits it again.

Queries are expanded with the glossary ``kb/data/glossary.yaml`` (大页 <->
huge pages ...): a query is an AND of groups, a group an OR of alternatives, an
alternative an AND of tokens.

Backends: PostgreSQL matches ``search_vector`` (``to_tsvector('simple', ...)``
of the segmented text, GIN index) and ranks by the inverse document frequency of
the matched terms (rare terms first) from :class:`kb.models.TermStat`; SQLite
uses an FTS5 ``unicode61`` table over the same segmented text ranked by bm25.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import rjieba
import yaml
from django.db import connection, transaction
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

DATA = Path(__file__).resolve().parent / "data"
DICTIONARY_PATH = DATA / "dictionary.txt"
GLOSSARY_PATH = DATA / "glossary.yaml"
FTS_TABLE = "kb_case_fts"
PAGE_SIZE = 20
# On PostgreSQL, queries whose every term is this common are ranked within the
# most recent matches only: scoring 100k rows for "numa" costs more than the
# ranking is worth (see docs/performance.md, "Search").
CANDIDATE_CAP = 100
COUNT_CAP = 1000

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_RUN_RE = re.compile(rf"[{_CJK}]+|[a-z0-9_]+(?:[.:/\-$][a-z0-9_]+)*")
_NON_STORAGE_RE = re.compile(rf"[^a-z0-9{_CJK}]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "in",
        "is",
        "it",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "with",
        "的",
        "了",
        "在",
        "是",
        "和",
        "与",
        "及",
        "或",
        "将",
        "把",
        "被",
        "对",
        "为",
        "也",
        "都",
        "而",
        "并",
        "就",
        "很",
        "等",
    ]
)


# --- dictionary and glossary ---------------------------------------------------------


def _read_versioned(path: Path) -> tuple[str, str]:
    text = path.read_text(encoding="utf-8")
    match = re.search(r"^#\s*version:\s*(\S+)", text, re.MULTILINE)
    return (match.group(1) if match else "0"), text


@functools.cache
def dictionary() -> tuple[str, tuple[str, ...]]:
    """(version, words) of the domain dictionary; primes rjieba once."""
    version, text = _read_versioned(DICTIONARY_PATH)
    words = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, _, freq = line.partition(" ")
        word = unicodedata.normalize("NFKC", word).lower()
        words.append(word)
        rjieba.add_word(word, int(freq) if freq.strip().isdigit() else None, None)
    return version, tuple(words)


def dictionary_version() -> str:
    """Version of the segmentation: cases indexed with another one are re-indexed."""
    return f"d{dictionary()[0]}-g{glossary()[0]}"


@functools.cache
def glossary() -> tuple[str, tuple[tuple[str, ...], ...]]:
    version, text = _read_versioned(GLOSSARY_PATH)
    concepts = tuple(tuple(str(p) for p in entry) for entry in yaml.safe_load(text) or [])
    return version, concepts


@functools.cache
def _glossary_index() -> dict[tuple[str, ...], int]:
    """Token sequence of each glossary phrase -> concept number."""
    index: dict[tuple[str, ...], int] = {}
    for number, concept in enumerate(glossary()[1]):
        for phrase in concept:
            key = tuple(unit.primary for unit in _units(phrase))
            if key:
                index.setdefault(key, number)
    return index


@functools.cache
def _mixed_words() -> dict[tuple[str, ...], str]:
    """Dictionary words mixing Chinese and Latin (跨numa) as token sequences."""
    mixed = {}
    for word in dictionary()[1]:
        if re.search(rf"[{_CJK}]", word) and re.search(r"[a-z0-9]", word):
            parts = tuple(storage_form(m.group(0)) for m in _RUN_RE.finditer(word))
            mixed[parts] = storage_form(word)
    return mixed


# --- tokenizer ------------------------------------------------------------------------


def storage_form(token: str) -> str:
    return _NON_STORAGE_RE.sub("", token)


def _stem(word: str) -> str:
    # Plural folding only: enough for "pages"/"page", "softirqs"/"softirq"
    # without a language-specific stemmer that would mangle identifiers.
    if len(word) > 3 and word.isalpha() and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@dataclass(frozen=True)
class Unit:
    """One word of the text: its main token and the finer tokens it contains."""

    primary: str
    parts: tuple[str, ...] = ()


@functools.lru_cache(maxsize=200_000)
def _word_units(word: str) -> Unit | None:
    segments = [s for s in re.split(r"[.:/\-$]+", word) if s]
    parts: list[str] = []
    for seg in segments:
        pieces = [p for p in seg.split("_") if p]
        if len(segments) > 1 and len(pieces) > 1:
            parts.append(storage_form(seg))
        parts.extend(_stem(p) for p in pieces)
    primary = storage_form(word) if (len(segments) > 1 or "_" in word) else _stem(word)
    if not primary or primary in _STOP:
        return None
    sub = tuple(dict.fromkeys(p for p in parts if p and p != primary and p not in _STOP))
    return Unit(primary, sub)


@functools.lru_cache(maxsize=100_000)
def _cjk_units(run: str) -> tuple[Unit, ...]:
    dictionary()
    units = []
    for word in rjieba.cut(run):
        word = word.strip()
        if not word or word in _STOP:
            continue
        sub: tuple[str, ...] = ()
        if len(word) >= 3:
            # cut_for_search yields the shorter dictionary words inside a long one.
            sub = tuple(dict.fromkeys(w for w in rjieba.cut_for_search(word) if w != word and len(w) > 1))
        units.append(Unit(word, sub))
    return tuple(units)


_CJK_START_RE = re.compile(rf"[{_CJK}]")


def _units(text: str) -> list[Unit]:
    text = unicodedata.normalize("NFKC", text or "").lower()
    units: list[Unit] = []
    for match in _RUN_RE.finditer(text):
        run = match.group(0)
        if _CJK_START_RE.match(run):
            units.extend(_cjk_units(run))
        else:
            unit = _word_units(run)
            if unit:
                units.append(unit)
    mixed = _mixed_words()
    firsts = {key[0] for key in mixed}
    if mixed and any(u.primary in firsts for u in units):
        primaries = [u.primary for u in units]
        merged: list[Unit] = []
        i = 0
        while i < len(units):
            if primaries[i] in firsts:
                for key, word in mixed.items():
                    if tuple(primaries[i : i + len(key)]) == key:
                        merged.append(Unit(word, key))
                        i += len(key)
                        break
                else:
                    merged.append(units[i])
                    i += 1
            else:
                merged.append(units[i])
                i += 1
        units = merged
    return units


def tokenize(text: str) -> list[str]:
    """Index tokens of ``text`` (storage forms, in order, parts after their word).

    >>> tokenize("开启大页, vm.zone_reclaim_mode=1")
    ['开启', '大页', 'vmzonereclaimmode', 'vm', 'zonereclaimmode', 'zone', 'reclaim', 'mode', '1']
    """
    tokens: list[str] = []
    for unit in _units(text):
        tokens.append(unit.primary)
        tokens.extend(unit.parts)
    return tokens


def index_text(text: str) -> str:
    return " ".join(tokenize(text))


# --- queries ----------------------------------------------------------------------------


@dataclass
class Query:
    """AND of groups; a group is an OR of alternatives; an alternative an AND of tokens."""

    text: str
    groups: list[list[tuple[str, ...]]] = field(default_factory=list)
    surfaces: list[str] = field(default_factory=list)  # what to highlight

    @property
    def terms(self) -> list[str]:
        return list(dict.fromkeys(t for g in self.groups for alt in g for t in alt))

    def __bool__(self) -> bool:
        return bool(self.groups)


def _unit_alternatives(unit: Unit) -> list[tuple[str, ...]]:
    alts = [(unit.primary,)]
    # For an identifier, its parts together also match (vm.zone_reclaim_mode
    # vs zone_reclaim_mode); for Chinese, the shorter words of a long one.
    if unit.parts:
        if re.match(rf"[{_CJK}]", unit.primary):
            # A domain word is indexed whole wherever it occurs; its pieces
            # (中断 in 软中断) would only add noise.
            if unit.primary not in dictionary()[1]:
                alts.append(unit.parts)
        else:
            leaves = tuple(p for p in unit.parts if not any(p != q and q in p for q in unit.parts))
            alts.append(leaves or unit.parts)
    return alts


def parse_query(text: str) -> Query:
    units = _units(text)
    query = Query(text=text)
    query.surfaces = [w for w in re.split(r"\s+", unicodedata.normalize("NFKC", text or "").strip()) if w]
    index = _glossary_index()
    concepts = glossary()[1]
    longest = max((len(k) for k in index), default=1)
    i = 0
    while i < len(units):
        for size in range(min(longest, len(units) - i), 0, -1):
            key = tuple(u.primary for u in units[i : i + size])
            if key in index:
                concept = concepts[index[key]]
                group: list[tuple[str, ...]] = []
                if size == 1:
                    group.extend(_unit_alternatives(units[i]))
                else:
                    group.append(key)
                for phrase in concept:
                    phrase_units = _units(phrase)
                    if len(phrase_units) == 1:
                        group.extend(_unit_alternatives(phrase_units[0]))
                    elif phrase_units:
                        group.append(tuple(u.primary for u in phrase_units))
                    query.surfaces.append(phrase)
                query.groups.append(list(dict.fromkeys(group)))
                i += size
                break
        else:
            query.groups.append(_unit_alternatives(units[i]))
            i += 1
    return query


def _fts5_expr(query: Query, *, any_group: bool = False) -> str:
    def alt(tokens):
        return "(" + " AND ".join(f'"{t}"' for t in tokens) + ")"

    groups = ["(" + " OR ".join(alt(a) for a in g) + ")" for g in query.groups]
    return (" OR " if any_group else " AND ").join(groups)


def _tsquery(query: Query, *, any_group: bool = False) -> str:
    def lexeme(t):
        return "'" + t.replace("'", "''").replace("\\", "\\\\") + "'"

    def alt(tokens):
        return "(" + " & ".join(lexeme(t) for t in tokens) + ")"

    groups = ["(" + " | ".join(alt(a) for a in g) + ")" for g in query.groups]
    return (" | " if any_group else " & ").join(groups)


# --- index maintenance ----------------------------------------------------------------


def case_index_fields(case) -> tuple[str, str]:
    """(title tokens, body tokens) of a case, as stored in the index."""
    tags = " ".join(t.name for t in case.tags.all()) if case.pk else ""
    body = "\n".join(
        [
            case.symptom,
            case.cause,
            case.resolution_summary,
            case.environment_notes,
            case.hypervisor,
            case.cpu_model,
            case.database,
            case.database_version,
            case.get_platform_display(),
            tags,
            " ".join(case.signature_rules),
        ]
    )
    steps = []
    if case.pk:
        for step in case.steps.select_related("measure"):
            steps.append(f"{step.measure.slug} {step.measure.title_for(case.language)} {step.outcome}")
        for ref in case.references.all():
            steps.append(f"{ref.key} {ref.title}")
    return index_text(case.title), index_text(body + "\n" + "\n".join(steps))


def write_index(case_id: int, title_tokens: str, body_tokens: str) -> None:
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "UPDATE kb_case SET search_vector = setweight(to_tsvector('simple', %s), 'A')"
                " || setweight(to_tsvector('simple', %s), 'D') WHERE id = %s",
                [title_tokens, body_tokens, case_id],
            )
        elif connection.vendor == "sqlite":
            cursor.execute(f"DELETE FROM {FTS_TABLE} WHERE rowid = %s", [case_id])  # noqa: S608 -- only constants and placeholders are interpolated
            cursor.execute(
                f"INSERT INTO {FTS_TABLE}(rowid, title, body) VALUES (%s, %s, %s)",  # noqa: S608 -- only constants and placeholders are interpolated
                [case_id, title_tokens, body_tokens],
            )


def delete_index(case_id: int) -> None:
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {FTS_TABLE} WHERE rowid = %s", [case_id])  # noqa: S608 -- only constants and placeholders are interpolated


def update_term_stats(old_tokens: set[str], new_tokens: set[str]) -> None:
    """Keep per-term document counts (PostgreSQL ranking) in step with one case."""
    if connection.vendor != "postgresql":
        return
    from django.db.models import F

    from kb.models import TermStat

    for term in old_tokens - new_tokens:
        TermStat.objects.filter(term=term).update(ndoc=F("ndoc") - 1)
    added = new_tokens - old_tokens
    if added:
        existing = set(TermStat.objects.filter(term__in=added).values_list("term", flat=True))
        TermStat.objects.filter(term__in=existing).update(ndoc=F("ndoc") + 1)
        TermStat.objects.bulk_create(
            [TermStat(term=t, ndoc=1) for t in added - existing], ignore_conflicts=True
        )


def rebuild_term_stats() -> None:
    """Recount every term from the stored vectors (PostgreSQL only)."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE kb_termstat")
        cursor.execute(
            "INSERT INTO kb_termstat(term, ndoc) SELECT word, ndoc FROM ts_stat("
            "'SELECT search_vector FROM kb_case WHERE search_vector IS NOT NULL')"
        )


# --- searching ----------------------------------------------------------------------------


@dataclass
class Hit:
    case: object
    score: float
    snippet: SafeString


@dataclass
class Results:
    query: Query
    hits: list[Hit]
    total: int
    total_capped: bool
    page: int
    pages: int
    relaxed: bool = False  # no case had every term: any term matched

    @property
    def has_next(self) -> bool:
        return self.page < self.pages


def _filtered(qs, filters: dict):
    from kb.models import CaseRule

    if filters.get("state"):
        qs = qs.filter(state=filters["state"])
    if filters.get("platform"):
        qs = qs.filter(platform=filters["platform"])
    if filters.get("database"):
        qs = qs.filter(database=filters["database"])
    if filters.get("language"):
        qs = qs.filter(language=filters["language"])
    if filters.get("rule"):
        qs = qs.filter(id__in=CaseRule.objects.filter(rule=filters["rule"]).values("case_id"))
    if filters.get("author_id"):
        qs = qs.filter(author_id=filters["author_id"])
    return qs


def _filter_sql(filters: dict) -> tuple[str, list]:
    """Filters as conditions on ``kb_case c``. Inline conditions (not an
    ``id IN (subquery)``) let PostgreSQL start from the text index."""
    clauses, params = ["TRUE" if connection.vendor == "postgresql" else "1"], []
    for column in ("state", "platform", "database", "language", "author_id"):
        if filters.get(column):
            clauses.append(f"c.{column} = %s")
            params.append(filters[column])
    if filters.get("rule"):
        clauses.append("EXISTS (SELECT 1 FROM kb_caserule r WHERE r.case_id = c.id AND r.rule = %s)")
        params.append(filters["rule"])
    return " AND ".join(clauses), params


def _match_ids_sqlite(query: Query, base_sql: str, base_params, *, any_group: bool, offset: int, limit: int):
    expr = _fts5_expr(query, any_group=any_group)
    sql = (
        f"SELECT f.rowid, bm25({FTS_TABLE}, 4.0, 1.0) AS rank FROM {FTS_TABLE} f"  # noqa: S608 -- only constants and placeholders are interpolated
        f" JOIN kb_case c ON c.id = f.rowid WHERE {FTS_TABLE} MATCH %s AND {base_sql}"
    )
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM ({sql} LIMIT {COUNT_CAP + 1})", [expr, *base_params])  # noqa: S608 -- only constants and placeholders are interpolated
        total = cursor.fetchone()[0]
        cursor.execute(
            sql + " ORDER BY rank, f.rowid LIMIT %s OFFSET %s", [expr, *base_params, limit, offset]
        )
        # bm25 is negative, lower is better; report a positive score.
        return [(row[0], -float(row[1])) for row in cursor.fetchall()], total


def _case_count_estimate() -> int:
    """The planner's row estimate: exact enough for IDF, free at any size."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT reltuples::bigint FROM pg_class WHERE oid = 'kb_case'::regclass")
        row = cursor.fetchone()
    return int(row[0]) if row and row[0] and row[0] > 0 else 0


def _group_weights(query: Query) -> tuple[list[float], list[int], int]:
    """(IDF, document frequency) of each query group, from kb_termstat. A
    group's frequency is the sum over its alternatives (an upper bound)."""
    from kb.models import Case, TermStat

    firsts = [alt[0] for g in query.groups for alt in g]
    stats = dict(TermStat.objects.filter(term__in=firsts).values_list("term", "ndoc"))
    n = _case_count_estimate() or Case.objects.count()
    n = max(n, 1)
    dfs = [min(n, sum(stats.get(alt[0], 0) for alt in g)) for g in query.groups]
    return [math.log(1 + n / (df + 1)) for df in dfs], dfs, n


def _match_ids_postgres(
    query: Query, base_sql: str, base_params, *, any_group: bool, offset: int, limit: int
):
    tsq = _tsquery(query, any_group=any_group)
    idf, dfs, n = _group_weights(query)
    where = "c.search_vector @@ %s::tsquery AND " + base_sql
    params = [tsq, *base_params]
    # Rare terms first. With every group required (AND) each candidate holds
    # every group, so the IDF sum is the same for all and ts_rank (title
    # weighted 'A') orders them; when any group may match (the relaxed query)
    # a case scores the IDF of each group it holds.
    score_sql = "(1 + ts_rank('{0.1, 0.2, 0.4, 1.0}', c.search_vector, %s::tsquery))"
    score_params: list = [tsq]
    if any_group and len(query.groups) > 1:
        parts = []
        for group, weight in zip(query.groups, idf, strict=True):
            parts.append(f"(CASE WHEN c.search_vector @@ %s::tsquery THEN {weight:.6f} ELSE 0 END)")
            score_params.append(_tsquery(Query(text="", groups=[group])))
        score_sql = "(" + " + ".join(parts) + ") * " + score_sql
        score_params = [*score_params[1:], tsq]
    # Expected matches, from the term statistics (groups taken as independent).
    expected = min(n, sum(dfs)) if any_group else n * math.prod(df / n for df in dfs)
    capped = expected > CANDIDATE_CAP
    # A common query is ranked in windows of CANDIDATE_CAP matches, newest
    # window first, so every page is cut from the same order; deeper pages
    # read further back.
    fetch = CANDIDATE_CAP * math.ceil((offset + limit) / CANDIDATE_CAP) if capped else COUNT_CAP + 1
    with transaction.atomic(), connection.cursor() as cursor:
        # Every heap row read costs a page fetch and, to check the tsvector,
        # a decompression (~20 us); the planner underrates the latter. Walking
        # the primary key backwards reads about CAP / density rows, a bitmap
        # scan on the GIN index reads every match: pick the smaller.
        density = expected / n
        if not capped or density * density < CANDIDATE_CAP / n:
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute("SET LOCAL enable_indexscan = off")
        # One pass: the newest matches with their scores. Common words rank
        # only the CANDIDATE_CAP most recent matches; the count is then the
        # estimate from the term statistics.
        cursor.execute(
            f"SELECT c.id, {score_sql} AS score FROM kb_case c WHERE {where}"  # noqa: S608 -- only constants and placeholders are interpolated
            f" ORDER BY c.id DESC LIMIT {fetch}",
            [*score_params, *params],
        )
        rows = [(row[0], float(row[1])) for row in cursor.fetchall()]
    total = len(rows) if len(rows) < fetch else max(len(rows), min(int(expected), COUNT_CAP + 1))
    window = CANDIDATE_CAP if capped else len(rows) + 1
    ranked = sorted(enumerate(rows), key=lambda item: (item[0] // window, -item[1][1], -item[1][0]))
    return [row for _, row in ranked][offset : offset + limit], total


def search(text: str, *, filters: dict | None = None, page: int = 1, page_size: int = PAGE_SIZE) -> Results:
    """Search cases. ``filters``: state, platform, database, language, rule,
    author_id (``accounts.access.case_search_filters`` adds it for drafts)."""
    from kb.models import Case

    filters = dict(filters or {})
    query = parse_query(text)
    page = max(int(page or 1), 1)
    offset = (page - 1) * page_size
    base = _filtered(Case.objects.all(), filters)
    relaxed = False
    if not query:
        total = base.count()
        cases = list(
            base.order_by("-updated_at", "-id")[offset : offset + page_size].prefetch_related("tags")
        )
        hits = [Hit(c, 0.0, mark_safe(escape(_preview(c.symptom)))) for c in cases]  # noqa: S308
        return Results(query, hits, total, False, page, max(1, math.ceil(total / page_size)))

    base_sql, base_params = _filter_sql(filters)
    matcher = _match_ids_postgres if connection.vendor == "postgresql" else _match_ids_sqlite
    rows, total = matcher(query, base_sql, base_params, any_group=False, offset=offset, limit=page_size)
    if total == 0 and len(query.groups) > 1:
        relaxed = True
        rows, total = matcher(query, base_sql, base_params, any_group=True, offset=offset, limit=page_size)
    by_id = Case.objects.in_bulk([r[0] for r in rows])
    hits = [Hit(by_id[i], score, highlight(by_id[i], query)) for i, score in rows if i in by_id]
    capped = total > COUNT_CAP
    total = min(total, COUNT_CAP)
    return Results(query, hits, total, capped, page, max(1, math.ceil(total / page_size)), relaxed)


# --- snippets -------------------------------------------------------------------------------


def _preview(text: str, size: int = 220) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= size else text[:size].rstrip() + "…"


def _highlight_regex(query: Query) -> re.Pattern | None:
    if "_pattern" not in query.__dict__:
        query.__dict__["_pattern"] = _build_highlight_regex(query)
    return query.__dict__["_pattern"]


def _build_highlight_regex(query: Query) -> re.Pattern | None:
    surfaces = {s.strip() for s in query.surfaces if len(s.strip()) >= 2 or re.match(rf"[{_CJK}]", s)}
    # Chinese terms are highlighted as they are; Latin ones only as typed (or as
    # a glossary phrase), never as a fragment such as "net" inside "netem".
    surfaces.update(t for t in query.terms if re.match(rf"[{_CJK}]", t))
    if not surfaces:
        return None
    pieces = []
    for s in sorted(surfaces, key=len, reverse=True):
        escaped = re.escape(s)
        if re.match(r"[A-Za-z0-9]", s):
            escaped = r"(?<![A-Za-z0-9])" + escaped
        if re.search(r"[A-Za-z0-9]$", s):
            escaped += r"(?:e?s)?(?![A-Za-z0-9])"
        pieces.append(escaped)
    return re.compile("|".join(pieces), re.IGNORECASE)


def highlight(case, query: Query, *, size: int = 240) -> SafeString:
    """An HTML snippet of the case around the first match, matches in <mark>.

    Text is escaped piece by piece and only our own <mark> tags are added, so
    case text can never inject markup."""
    pattern = _highlight_regex(query)
    fields = [case.symptom, case.cause, case.resolution_summary, case.environment_notes]
    text = ""
    match = None
    for candidate in fields:
        candidate = " ".join((candidate or "").split())
        m = pattern.search(candidate) if pattern else None
        if m:
            text, match = candidate, m
            break
    if not match:
        return mark_safe(escape(_preview(case.symptom, size)))  # noqa: S308
    start = max(0, match.start() - size // 3)
    end = min(len(text), start + size)
    window = text[start:end]
    out = ["…" if start > 0 else ""]
    pos = 0
    for m in pattern.finditer(window):
        out.append(escape(window[pos : m.start()]))
        out.append(f"<mark>{escape(m.group(0))}</mark>")
        pos = m.end()
    out.append(escape(window[pos:]))
    out.append("…" if end < len(text) else "")
    return mark_safe("".join(out))  # noqa: S308


def highlight_title(title: str, query: Query) -> SafeString:
    pattern = _highlight_regex(query) if query else None
    if not pattern:
        return mark_safe(escape(title))  # noqa: S308
    out, pos = [], 0
    for m in pattern.finditer(title):
        out.append(escape(title[pos : m.start()]))
        out.append(f"<mark>{escape(m.group(0))}</mark>")
        pos = m.end()
    out.append(escape(title[pos:]))
    return mark_safe("".join(out))  # noqa: S308
