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

import difflib
import functools
import math
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import rjieba
import snowballstemmer
import yaml
from django.db import connection, transaction
from django.db.models import F, Max
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from kb.models import Case, CaseRule, TermStat

DATA = Path(__file__).resolve().parent / "data"
DICTIONARY_PATH = DATA / "dictionary.txt"
GLOSSARY_PATH = DATA / "glossary.yaml"
FTS_TABLE = "kb_case_fts"
FTS_VOCAB = "kb_case_fts_vocab"  # fts5vocab: the term table of the SQLite index
PAGE_SIZE = 20

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_RUN_RE = re.compile(rf"[{_CJK}]+|[a-z0-9_]+(?:[.:/\-$][a-z0-9_]+)*")
_NON_STORAGE_RE = re.compile(rf"[^a-z0-9{_CJK}]+")
# Words that carry no meaning in a support ticket: never indexed, never
# searched, never highlighted. Negations ("no", "not") stay: "no L3 cache".
_STOP = frozenset(
    """a an and are as at be been being by can could did do does for from had has have
    how i if in into is it its my of on or our should so such than that the their them
    then there these they this those to was we were what when where which while who why
    will with would you your after before also any very
    的 了 在 是 和 与 及 或 将 把 被 对 为 也 都 而 并 就 很 等 非常 特别 比较 太 吗 呢 啊 吧
    很多 比 后 之后 以后 时 一下 怎么 如何 为什么""".split()  # noqa: SIM905 -- a word list reads better as text
)
_STEMMER = snowballstemmer.stemmer("english")


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
    return f"d{dictionary()[0]}-g{glossary()[0]}-t{TOKENIZER_VERSION}"


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


# Bump when the tokenizer itself changes (stemming, stop words, segmentation
# rules): loadcases re-indexes cases tokenized by another version.
TOKENIZER_VERSION = "2"


@functools.lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    """English Snowball stem of a plain word ("migrating", "migration" ->
    "migrat"); identifiers, numbers and mixed tokens stay as they are."""
    if len(word) > 3 and word.isascii() and word.isalpha():
        return _STEMMER.stemWord(word)
    return word


@dataclass(frozen=True)
class Unit:
    """One word of the text: its main token and the finer tokens it contains."""

    primary: str
    parts: tuple[str, ...] = ()
    surface: str = field(default="", compare=False)  # the word as written (lower case)


@functools.lru_cache(maxsize=200_000)
def _word_units(word: str) -> Unit | None:
    if word in _STOP:
        return None
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
    return Unit(primary, sub, word)


_DEGREE = ("非常", "特别", "比较", "很", "太")


def _degree_prefix(word: str) -> str:
    return next((p for p in _DEGREE if word.startswith(p) and len(word) > len(p)), "")


@functools.lru_cache(maxsize=100_000)
def _cjk_units(run: str) -> tuple[Unit, ...]:
    dictionary()
    words = [w.strip() for w in rjieba.cut(run) if w.strip()]
    # Degree adverbs glued to a word (很慢, 非常高) are fillers too.
    kept = [w[len(p) :] if (p := _degree_prefix(w)) else w for w in words if w not in _STOP]
    if kept != words and len(kept) > 1:
        # A filler word split a phrase ("启动很慢" -> 启动 / 很 / 慢): segment
        # again without it, so the domain word (启动慢) is found.
        kept = [w.strip() for w in rjieba.cut("".join(kept)) if w.strip() and w.strip() not in _STOP]
    units = []
    for word in kept:
        sub: tuple[str, ...] = ()
        if len(word) >= 3:
            # cut_for_search yields the shorter dictionary words inside a long one.
            sub = tuple(dict.fromkeys(w for w in rjieba.cut_for_search(word) if w != word and len(w) > 1))
        units.append(Unit(word, sub, word))
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
                        merged.append(Unit(word, key, word))
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


def surface_forms(text: str) -> dict[str, str]:
    """Each index token of ``text`` -> the word it was read from, as written
    (lower case; the first one): how a stem is shown to a reader
    (``"migrat"`` -> ``"migrated"``)."""
    forms: dict[str, str] = {}
    for unit in _units(text):
        forms.setdefault(unit.primary, unit.surface or unit.primary)
        for part in unit.parts:
            forms.setdefault(part, part)
    return forms


def index_text(text: str) -> str:
    return " ".join(tokenize(text))


# --- queries ----------------------------------------------------------------------------


@dataclass
class Query:
    """AND of groups; a group is an OR of alternatives; an alternative an AND of tokens."""

    text: str
    groups: list[list[tuple[str, ...]]] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  # each group as the reader wrote it

    @property
    def terms(self) -> list[str]:
        return list(dict.fromkeys(t for g in self.groups for alt in g for t in alt))

    def __bool__(self) -> bool:
        return bool(self.groups)


def _unit_alternatives(unit: Unit) -> list[tuple[str, ...]]:
    alts: list[tuple[str, ...]] = [(unit.primary,)]
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
                query.groups.append(list(dict.fromkeys(group)))
                query.labels.append(" ".join(u.surface for u in units[i : i + size]))
                i += size
                break
        else:
            query.groups.append(_unit_alternatives(units[i]))
            query.labels.append(units[i].surface)
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

# A search answers one hit per case (the reader's language first). When fewer
# than THIN cases hold every query word, cases holding some of them are ranked
# in too (``Results.relaxed``), by how much of the query they cover.
THIN = 3
# Partial matches are re-scored from the PARTIAL_CANDIDATES best by the backend's rank.
PARTIAL_CANDIDATES = 200
COUNT_CAP = 1000
RANK_WORK_MEM = "32MB"


@dataclass
class Why:
    """Why a case matched: shown with every hit."""

    fields: list[str]  # title, symptom, cause, resolution, environment, measures, tags
    matched: list[str]  # query words the case holds, as written
    missing: list[str]  # query words it does not hold
    rules: list[str]  # signature rules the query names
    tags: list[str]  # tags the query names
    solved: bool  # a measure was applied
    verified: bool  # a metric was measured before and after


@dataclass
class Hit:
    case: Case
    score: float
    snippet: SafeString
    why: Why | None = None
    other: Case | None = None  # the same case in the other language


@dataclass
class Results:
    query: Query
    hits: list[Hit]
    total: int  # matching cases (not language versions)
    total_capped: bool
    page: int
    pages: int
    relaxed: bool = False  # few cases had every word: cases with some of them follow
    suggestion: str = ""  # the query with unknown words respelled from the index vocabulary
    corrections: dict[str, str] = field(default_factory=dict)  # typed word -> respelled word

    @property
    def has_next(self) -> bool:
        return self.page < self.pages


def _filtered(qs, filters: dict):
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


# --- vocabulary: document frequencies and spelling --------------------------------------


def _doc_freqs(terms: list[str]) -> dict[str, int]:
    """Number of cases (language versions) holding each term."""
    terms = list(dict.fromkeys(terms))
    if not terms:
        return {}
    with connection.cursor() as cursor:
        marks = ", ".join(["%s"] * len(terms))
        if connection.vendor == "postgresql":
            cursor.execute(f"SELECT term, ndoc FROM kb_termstat WHERE term IN ({marks})", terms)  # noqa: S608 -- only placeholders are interpolated
        else:
            cursor.execute(f"SELECT term, doc FROM {FTS_VOCAB} WHERE term IN ({marks})", terms)  # noqa: S608 -- only constants and placeholders are interpolated
        return {term: int(n) for term, n in cursor.fetchall() if n and n > 0}


def _case_total() -> int:
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            # The planner's row estimate: exact enough for IDF, free at any size.
            cursor.execute("SELECT reltuples::bigint FROM pg_class WHERE oid = 'kb_case'::regclass")
            row = cursor.fetchone()
        if row and row[0] and row[0] > 0:
            return int(row[0])

    return max(Case.objects.count(), 1)


def _max_edits(term: str) -> int:
    return 0 if len(term) < 4 else (1 if len(term) < 8 else 2)


def edit_distance(a: str, b: str, limit: int = 3) -> int:
    """Optimal string alignment distance (a transposition is one edit),
    ``limit + 1`` as soon as it is certain to exceed ``limit``."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


def _spelling_candidates(term: str) -> list[tuple[str, int]]:
    """(vocabulary term, document count) pairs that may be ``term`` misspelt."""
    edits = _max_edits(term)
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # pg_trgm: the trigram index on kb_termstat.term finds near terms
            # without reading the vocabulary. A short word with one edit
            # shares few trigrams ("dealy"/"delay": 0.2), hence the low bar.
            cursor.execute("SET LOCAL pg_trgm.similarity_threshold = 0.15")
            cursor.execute(
                "SELECT term, ndoc FROM kb_termstat WHERE term %% %s AND ndoc > 0"
                " AND length(term) BETWEEN %s AND %s ORDER BY similarity(term, %s) DESC LIMIT 100",
                [term, len(term) - edits, len(term) + edits, term],
            )
        else:
            cursor.execute(
                f"SELECT term, doc FROM {FTS_VOCAB} WHERE length(term) BETWEEN %s AND %s",  # noqa: S608 -- only constants and placeholders are interpolated
                [len(term) - edits, len(term) + edits],
            )
        return [(t, int(n)) for t, n in cursor.fetchall()]


def correct_term(term: str) -> str | None:
    """The indexed term closest to an unknown ``term`` (fewest edits, then the
    most cases), or None. Chinese words and short tokens are not respelled."""
    edits = _max_edits(term)
    if not edits or re.search(rf"[{_CJK}]", term) or term.isdigit():
        return None
    best: tuple[int, int, str] | None = None
    for candidate, ndoc in _spelling_candidates(term):
        if candidate == term or re.search(rf"[{_CJK}]", candidate):
            continue
        distance = edit_distance(term, candidate, edits)
        if distance <= edits and (best is None or (distance, -ndoc, candidate) < best):
            best = (distance, -ndoc, candidate)
    return best[2] if best else None


def _respell(surface: str, typed: str, corrected: str) -> str:
    """``surface`` with the edits that turn its token ``typed`` into
    ``corrected``, keeping separators and the unstemmed ending:
    ("zone_reclam_mode", "zonereclammode", "zonereclaimmode") -> "zone_reclaim_mode"."""
    positions = [i for i, ch in enumerate(surface) if storage_form(ch)]
    stored = "".join(surface[i] for i in positions)
    if not stored.startswith(typed):
        return corrected
    emit: dict[int, str] = {}  # storage index -> text that replaces the character
    before: dict[int, str] = {}  # storage index -> text inserted before it
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, typed, corrected, autojunk=False).get_opcodes():
        if op == "insert":
            before[i1] = before.get(i1, "") + corrected[j1:j2]
        elif op in ("replace", "delete"):
            for k in range(i1, i2):
                emit[k] = ""
            if op == "replace":
                emit[i1] = corrected[j1:j2]
    out, k = [], 0
    for index, ch in enumerate(surface):
        if positions and k < len(positions) and positions[k] == index:
            out.append(before.get(k, ""))
            out.append(emit.get(k, ch))
            k += 1
        else:
            out.append(ch)
    if len(typed) >= len(positions):
        out.append(before.get(len(typed), ""))
    return "".join(out)


def _correct(query: Query) -> dict[str, str]:
    """Respell unknown words: a group none of whose alternatives is in the
    index gains the nearest indexed term. Returns {typed word: respelled}."""
    known = _doc_freqs(query.terms)
    corrections: dict[str, str] = {}
    for number, group in enumerate(query.groups):
        if any(all(t in known for t in alt) for alt in group):
            continue
        typed = group[0][0]
        fixed = correct_term(typed)
        if fixed:
            group.append((fixed,))
            label = query.labels[number]
            corrections[label] = _respell(label, typed, fixed)
    return corrections


def _suggestion(text: str, corrections: dict[str, str]) -> str:
    if not corrections:
        return ""
    pattern = re.compile("|".join(re.escape(k) for k in sorted(corrections, key=len, reverse=True)), re.I)
    return pattern.sub(lambda m: corrections.get(m.group(0).lower(), m.group(0)), text)


# --- ranking ---------------------------------------------------------------------------------


@functools.cache
def _has_rum(database: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = 'kb_case_search_rum'")
        return cursor.fetchone() is not None


def _ranked_postgres(tsq: str, base_sql: str, base_params, *, limit: int, ids=None):
    """Best ``limit`` matches over all of them: the RUM index returns them in
    rank order (cover density, title weighted); without it, ts_rank_cd sorts
    every match."""
    where = f"c.search_vector @@ %s::tsquery AND {base_sql}"
    params = [tsq, *base_params]
    if ids is not None:
        where += " AND c.id = ANY(%s)"
        params.append(list(ids))
    if _has_rum(connection.settings_dict["NAME"]):
        sql = (
            f"SELECT c.id, c.slug, c.language, 1 / NULLIF(c.search_vector <=> %s::tsquery, 0) FROM kb_case c"  # noqa: S608 -- only constants and placeholders are interpolated
            f" WHERE {where} ORDER BY c.search_vector <=> %s::tsquery LIMIT %s"
        )
        params = [tsq, *params, tsq, limit]
    else:
        sql = (
            "SELECT c.id, c.slug, c.language,"  # noqa: S608 -- only constants and placeholders are interpolated
            " ts_rank_cd('{0.1, 0.2, 0.4, 1.0}', c.search_vector, %s::tsquery) AS rank"
            f" FROM kb_case c WHERE {where} ORDER BY rank DESC, c.id DESC LIMIT %s"
        )
        params = [tsq, *params, limit]
    with transaction.atomic(), connection.cursor() as cursor:
        # Ranking a common word sorts every match: keep that sort in memory.
        cursor.execute(f"SET LOCAL work_mem = '{RANK_WORK_MEM}'")
        cursor.execute(sql, params)
        return [(i, slug, lang, float(rank or 0)) for i, slug, lang, rank in cursor.fetchall()]


def _ranked_sqlite(expr: str, base_sql: str, base_params, *, limit: int, ids=None):
    where = f"{FTS_TABLE} MATCH %s AND {base_sql}"
    params = [expr, *base_params]
    if ids is not None:
        ids = list(ids)
        where += " AND c.id IN (" + ", ".join(["%s"] * len(ids)) + ")"
        params += ids
    sql = (
        f"SELECT c.id, c.slug, c.language, bm25({FTS_TABLE}, 4.0, 1.0) AS rank FROM {FTS_TABLE} f"  # noqa: S608 -- only constants and placeholders are interpolated
        f" JOIN kb_case c ON c.id = f.rowid WHERE {where} ORDER BY rank, c.id DESC LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, limit])
        # bm25 is negative, lower is better; report a positive score.
        return [(i, slug, lang, -float(rank)) for i, slug, lang, rank in cursor.fetchall()]


def _ranked(query: Query, base_sql: str, base_params, *, any_group: bool, limit: int, ids=None):
    """[(id, slug, language, rank)] best first, ranked over every match."""
    if connection.vendor == "postgresql":
        return _ranked_postgres(
            _tsquery(query, any_group=any_group), base_sql, base_params, limit=limit, ids=ids
        )
    return _ranked_sqlite(_fts5_expr(query, any_group=any_group), base_sql, base_params, limit=limit, ids=ids)


def _count_cases(query: Query, base_sql: str, base_params, *, any_group: bool) -> int:
    """Matching cases (distinct slugs), counted up to COUNT_CAP + 1."""
    if connection.vendor == "postgresql":
        inner = f"SELECT c.slug FROM kb_case c WHERE c.search_vector @@ %s::tsquery AND {base_sql}"  # noqa: S608 -- only constants and placeholders are interpolated
        params = [_tsquery(query, any_group=any_group), *base_params]
    else:
        inner = (
            f"SELECT c.slug FROM {FTS_TABLE} f JOIN kb_case c ON c.id = f.rowid"  # noqa: S608 -- only constants and placeholders are interpolated
            f" WHERE {FTS_TABLE} MATCH %s AND {base_sql}"
        )
        params = [_fts5_expr(query, any_group=any_group), *base_params]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(DISTINCT slug) FROM ({inner} LIMIT {2 * (COUNT_CAP + 1)}) AS m",  # noqa: S608 -- only constants and placeholders are interpolated
            params,
        )
        return int(cursor.fetchone()[0])


def _group_matches(group: list[tuple[str, ...]], tokens: set[str]) -> bool:
    return any(all(t in tokens for t in alt) for alt in group)


def _best_per_case(rows) -> list[tuple]:
    seen: dict[str, tuple] = {}
    for row in rows:
        if row[1] not in seen or row[3] > seen[row[1]][3]:
            seen[row[1]] = row
    return sorted(seen.values(), key=lambda r: -r[3])


def _partial(query: Query, full_rows, base_sql, base_params, *, limit: int):
    """Full and partial matches ranked together: a case scores the share of
    the query's weight (IDF of each word group) it holds, cubed, times its
    rank among the candidates for any word. A case holding every word still
    comes first unless another holds the rare words much better."""
    candidates = _ranked(query, base_sql, base_params, any_group=True, limit=max(PARTIAL_CANDIDATES, limit))
    missing = {r[0] for r in full_rows} - {r[0] for r in candidates}
    if missing:
        candidates += _ranked(query, base_sql, base_params, any_group=True, limit=len(missing), ids=missing)
    firsts = [alt[0] for g in query.groups for alt in g]
    dfs = _doc_freqs(firsts)
    n = _case_total()
    weights = [math.log(1 + n / (1 + min(n, sum(dfs.get(alt[0], 0) for alt in g)))) for g in query.groups]
    tokens = {
        i: set((title + " " + text).split())
        for i, title, text in Case.objects.filter(id__in=[r[0] for r in candidates]).values_list(
            "id", "search_title", "search_text"
        )
    }
    top = max((r[3] for r in candidates), default=1.0) or 1.0
    scored = []
    for case_id, slug, language, rank in candidates:
        held = tokens.get(case_id, set())
        share = sum(w for g, w in zip(query.groups, weights, strict=True) if _group_matches(g, held))
        coverage = share / (sum(weights) or 1.0)
        scored.append((case_id, slug, language, coverage**3 * (0.25 + 0.75 * rank / top)))
    return scored


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
    author_id (``kb.access.case_search_filters`` adds it for drafts)."""
    filters = dict(filters or {})
    query = parse_query(text)
    page = max(int(page or 1), 1)
    offset = (page - 1) * page_size
    base = _filtered(Case.objects.all(), filters)
    if not query:
        groups = base.values("slug").annotate(latest=Max("updated_at")).order_by("-latest", "slug")
        total = base.values("slug").distinct().count()
        slugs = [g["slug"] for g in groups[offset : offset + page_size]]
        hits = [
            Hit(case, 0.0, mark_safe(escape(_preview(case.symptom))), None, other)  # noqa: S308
            for case, other in _versions(base, slugs, {}, language)
        ]
        return Results(query, hits, total, False, page, max(1, math.ceil(total / page_size)))

    corrections = _correct(query)
    base_sql, base_params = _filter_sql(filters)
    wanted = 2 * (offset + page_size)
    full_rows = _ranked(query, base_sql, base_params, any_group=False, limit=max(wanted, 2 * THIN))
    full_cases = {r[1] for r in full_rows}
    relaxed = len(query.groups) > 1 and len(full_cases) < THIN
    if relaxed:
        rows = _best_per_case(_partial(query, full_rows, base_sql, base_params, limit=wanted))
        total = _count_cases(query, base_sql, base_params, any_group=True)
    else:
        rows = _best_per_case(full_rows)
        total = len(full_cases) if len(full_rows) < max(wanted, 2 * THIN) else None
        if total is None:
            total = _count_cases(query, base_sql, base_params, any_group=False)
    rows = [r for r in rows if r[3] > 0][offset : offset + page_size]
    matched = {r[1]: r for r in rows}
    hits = []
    for case, other in _versions(base, [r[1] for r in rows], {r[1]: r[0] for r in rows}, language):
        hit = Hit(case, matched[case.slug][3], highlight(case, query), explain(case, query, filters), other)
        hits.append(hit)
    capped = total > COUNT_CAP
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
    )


def _versions(base, slugs: list[str], matched_ids: dict[str, int], language: str):
    """(case, other version) per slug, in order: the reader's language when the
    case has it among ``base``, else the version that matched."""
    by_slug: dict[str, dict[str, Case]] = {}
    for case in base.filter(slug__in=slugs).prefetch_related("tags", "steps__measure", "metrics"):
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


_FIELDS = (
    ("title", "title"),
    ("symptom", "symptom"),
    ("cause", "cause"),
    ("resolution", "resolution_summary"),
    ("environment", "environment_notes"),
)


def _held_terms(text: str, query: Query) -> set[str]:
    """The query terms ``text`` holds, without segmenting it: each Latin word
    through the (cached) word tokenizer, Chinese terms as substrings. Cheap
    enough for every field of every hit of a page."""
    terms = set(query.terms)
    text = unicodedata.normalize("NFKC", text or "").lower()
    held = {t for t in terms if _CJK_START_RE.search(t) and t in text}
    for m in _RUN_RE.finditer(text):
        if not _CJK_START_RE.match(m.group(0)):
            unit = _word_units(m.group(0))
            if unit:
                held.update(t for t in (unit.primary, *unit.parts) if t in terms)
    return held


def explain(case, query: Query, filters: dict | None = None) -> Why:
    """Which fields, rules and tags of ``case`` hold the query words."""

    def holds(tokens: set[str]) -> bool:
        return any(_group_matches(g, tokens) for g in query.groups)

    fields = [name for name, attr in _FIELDS if holds(_held_terms(getattr(case, attr), query))]
    steps = list(case.steps.all())
    step_text = " ".join(f"{s.measure.slug} {s.measure.title_for(case.language)} {s.outcome}" for s in steps)
    if holds(_held_terms(step_text, query)):
        fields.append("measures")
    tags = [t.name for t in case.tags.all() if holds(_held_terms(t.name, query))]
    if tags:
        fields.append("tags")
    wanted_rule = (filters or {}).get("rule")
    rules = [
        rule
        for rule in case.signature_rules
        if rule == wanted_rule or holds(_held_terms(rule.partition(".")[2] or rule, query))
    ]
    held = set((case.search_title + " " + case.search_text).split())
    labelled = list(zip(query.groups, query.labels, strict=True))
    return Why(
        fields=fields,
        matched=[label for g, label in labelled if _group_matches(g, held)],
        missing=[label for g, label in labelled if not _group_matches(g, held)],
        rules=rules,
        tags=tags,
        solved=any(s.status == "applied" for s in steps),
        verified=any(m.before is not None and m.after is not None for m in case.metrics.all()),
    )


# --- snippets -------------------------------------------------------------------------------


def _preview(text: str, size: int = 220) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= size else text[:size].rstrip() + "…"


_WORD_RE = re.compile(rf"[{_CJK}]+|[A-Za-z0-9_]+(?:[.:/\-$][A-Za-z0-9_]+)*")


def _marks(text: str, query: Query) -> list[tuple[int, int]]:
    """Spans of ``text`` that hold a query term: Latin words whose token (stem,
    identifier or part) is a term, Chinese terms where they occur. Stop words
    are never terms, so never marked."""
    terms = set(query.terms)
    cjk_terms = sorted((t for t in terms if re.match(rf"[{_CJK}]", t)), key=len, reverse=True)
    cjk_re = re.compile("|".join(re.escape(t) for t in cjk_terms)) if cjk_terms else None
    spans: list[tuple[int, int]] = []
    for m in _WORD_RE.finditer(text):
        word = m.group(0)
        if _CJK_START_RE.match(word):
            if cjk_re:
                spans.extend((m.start() + c.start(), m.start() + c.end()) for c in cjk_re.finditer(word))
            continue
        unit = _word_units(unicodedata.normalize("NFKC", word).lower())
        if unit and (unit.primary in terms or any(p in terms for p in unit.parts)):
            spans.append((m.start(), m.end()))
    return spans


def _marked(text: str, spans: list[tuple[int, int]]) -> str:
    out: list[str]
    out, pos = [], 0
    for start, end in spans:
        out.append(escape(text[pos:start]))
        out.append(f"<mark>{escape(text[start:end])}</mark>")
        pos = end
    out.append(escape(text[pos:]))
    return "".join(out)


def highlight(case, query: Query, *, size: int = 240) -> SafeString:
    """An HTML snippet of the case around the first match, matches in <mark>.

    Text is escaped piece by piece and only our own <mark> tags are added, so
    case text can never inject markup."""
    fields = [case.symptom, case.cause, case.resolution_summary, case.environment_notes]
    for candidate in fields:
        text = " ".join((candidate or "").split())
        spans = _marks(text, query)
        if spans:
            break
    else:
        return mark_safe(escape(_preview(case.symptom, size)))  # noqa: S308
    start = max(0, spans[0][0] - size // 3)
    end = min(len(text), start + size)
    window = text[start:end]
    inside = [(a - start, b - start) for a, b in spans if a >= start and b <= end]
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(text) else ""
    return mark_safe(prefix + _marked(window, inside) + suffix)  # noqa: S308


def highlight_title(title: str, query: Query) -> SafeString:
    spans = _marks(title, query) if query else []
    return mark_safe(_marked(title, spans))  # noqa: S308
