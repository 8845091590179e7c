"""The vocabulary of the index (document frequencies) and spelling corrections of query terms."""

from __future__ import annotations

import difflib
import functools
import re

from django.db import connection, transaction

from kb.models import Case
from kb.search.queries import Query, _concept_alternatives, _rewords
from kb.search.resultset import _filter_sql
from kb.search.tokenizer import _CJK, _glossary_index, storage_form

# --- vocabulary: document frequencies and spelling --------------------------------------


def _doc_freqs(terms: list[str]) -> dict[str, int]:
    """Number of cases (language versions) holding each term."""
    terms = list(dict.fromkeys(terms))
    if not terms:
        return {}
    with connection.cursor() as cursor:
        marks = ", ".join(["%s"] * len(terms))
        cursor.execute(f"SELECT term, ndoc FROM kb_termstat WHERE term IN ({marks})", terms)  # noqa: S608 -- only placeholders are interpolated
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


# What a slip of the fingers does to a word: a letter dropped, doubled or
# swapped with its neighbour, a key next to the right one, one vowel for
# another (emulater), one sound-alike for another (zstak). Any other
# substitution changes the word (prevent -> present, cpu1 -> cpu2): two edits.
_KEY_ROWS = ("1234567890", "qwertyuiop", "asdfghjkl", "zxcvbnm")
_KEY_AT = {ch: (row, col) for row, keys in enumerate(_KEY_ROWS) for col, ch in enumerate(keys)}
_VOWELS = frozenset("aeiouy")
_SOUND_ALIKE = frozenset(frozenset(pair) for pair in ("ck", "cs", "sz", "kq", "fv"))


@functools.lru_cache(maxsize=4096)
def _substitution_cost(a: str, b: str) -> int:
    """1 for a likely typo (neighbouring keys, vowels, sound-alikes), else 2."""
    if a.isdigit() or b.isdigit():
        return 2
    if (a in _VOWELS and b in _VOWELS) or frozenset((a, b)) in _SOUND_ALIKE:
        return 1
    ra, ca = _KEY_AT.get(a, (-9, -9))
    rb, cb = _KEY_AT.get(b, (9, 9))
    # Rows are staggered: a key touches its row neighbours, the two keys
    # above it (same column and one to the right) and the two below.
    near = (
        (ra == rb and abs(ca - cb) == 1)
        or (rb == ra + 1 and cb in (ca - 1, ca))
        or (rb == ra - 1 and cb in (ca, ca + 1))
    )
    return 1 if near else 2


def edit_distance(a: str, b: str, limit: int = 3, *, prefix: bool = False) -> int:
    """Typing distance of ``a`` from ``b``: optimal string alignment where a
    dropped or added letter, a transposition and a likely substitution
    (:func:`_substitution_cost`) are one edit, any other substitution two;
    ``limit + 1`` as soon as it is certain to exceed ``limit``. ``prefix``:
    the distance of ``a`` from the closest beginning of ``b`` (``a`` typed
    short: ``passthru`` for ``passthrough``)."""
    if abs(len(a) - len(b)) > limit and not (prefix and len(b) > len(a)):
        return limit + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cost = 0 if ca == cb else _substitution_cost(ca, cb)
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return min(min(prev) if prefix else prev[-1], limit + 1)


def _spelling_candidates(term: str) -> list[tuple[str, int]]:
    """(vocabulary term, document count) pairs that may be ``term`` misspelt."""
    edits = _max_edits(term)
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # pg_trgm: the trigram index on lower(kb_termstat.term) finds near
            # terms without reading the vocabulary (on the expression, so that
            # look-ups by term keep the primary key: kb/migrations/0012). A
            # short word with one edit shares few trigrams ("dealy"/"delay":
            # 0.2), hence the low bar.
            cursor.execute("SET LOCAL pg_trgm.similarity_threshold = 0.15")
            cursor.execute(
                "SELECT term, ndoc FROM kb_termstat WHERE lower(term) %% %s AND ndoc > 0"
                " AND length(term) BETWEEN %s AND %s ORDER BY similarity(term, %s) DESC LIMIT 100",
                [term, len(term) - edits, len(term) + edits, term],
            )
        else:
            cursor.execute(
                "SELECT term, ndoc FROM kb_termstat WHERE ndoc > 0 AND length(term) BETWEEN %s AND %s",
                [len(term) - edits, len(term) + edits],
            )
        return [(t, int(n)) for t, n in cursor.fetchall()]


def _prefix_candidates(term: str) -> list[tuple[str, int]]:
    """(vocabulary term, document count) pairs longer than ``term`` that begin
    with its first half: what ``term`` may be the beginning of."""
    head = term[: max(4, len(term) // 2)]
    # A range of the term's primary key (any backend, any collation of ASCII).
    after = head[:-1] + chr(ord(head[-1]) + 1)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT term, ndoc FROM kb_termstat WHERE term >= %s AND term < %s AND ndoc > 0"
            " AND length(term) > %s ORDER BY ndoc DESC LIMIT 200",
            [head, after, len(term)],
        )
        return [(t, int(n)) for t, n in cursor.fetchall()]


PREFIX_MIN = 6  # an identifier typed short is completed from this length on


# Candidates checked against what the reader may read, nearest first.
READABLE_CHECKS = 20


def _readable_term(term: str, filters: dict) -> bool:
    """Whether ``term`` occurs in a case the search's ``filters`` let the
    reader see (state, author for drafts, ...): the vocabulary (``kb_termstat``)
    counts every case, drafts of other teams included."""
    where, params = _filter_sql(filters)
    # only placeholders and fixed conditions are interpolated
    sql = (
        f"SELECT 1 FROM kb_posting p JOIN kb_case c ON c.id = p.case_id WHERE p.term = %s AND {where} LIMIT 1"  # noqa: S608
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [term, *params])
        return cursor.fetchone() is not None


# A word holding this many digits names one thing by its number (a ticket key
# ZSTACK-40001, a host db-00017, a version): a number is typed as meant, and
# another number is another thing. Not respelled; its trigrams (400, 000, 001)
# are also the commonest of a large vocabulary (90 ms of index at 100k cases).
NUMBER_DIGITS = 3


def _numbered(term: str) -> bool:
    return sum(ch.isdigit() for ch in term) >= NUMBER_DIGITS


def correct_term(term: str, *, identifier: bool = False, filters: dict | None = None) -> str | None:
    """The indexed term closest to an unknown ``term`` (fewest typing edits,
    :func:`edit_distance`, then the most cases), or None. Chinese words and
    short tokens are not respelled, nor a word holding a number
    (:data:`NUMBER_DIGITS`). An ``identifier`` (``host-passthru``)
    nothing is near may be typed short: the most common term it begins,
    give or take the same typos, completes it. With ``filters`` (those of the
    search, narrowed to what the reader may read) only a term found in a case
    they match is offered: "Did you mean" never spells out a word of a case
    the reader may not see."""
    edits = _max_edits(term)
    if not edits or re.search(rf"[{_CJK}]", term) or _numbered(term):
        return None
    near: list[tuple[int, int, str]] = []
    for candidate, ndoc in _spelling_candidates(term):
        if candidate == term or re.search(rf"[{_CJK}]", candidate):
            continue
        distance = edit_distance(term, candidate, edits)
        if distance <= edits:
            near.append((distance, -ndoc, candidate))
    best = _first_readable(near, filters)
    if best is None and identifier and len(term) >= PREFIX_MIN and term.isascii():
        completions = []
        for candidate, ndoc in _prefix_candidates(term):
            distance = edit_distance(term, candidate, edits, prefix=True)
            if distance <= edits:
                completions.append((distance, -ndoc, candidate))
        best = _first_readable(completions, filters)
    return best


def _first_readable(ranked: list[tuple[int, int, str]], filters: dict | None) -> str | None:
    for _distance, _ndoc, candidate in sorted(ranked)[:READABLE_CHECKS]:
        if filters is None or _readable_term(candidate, filters):
            return candidate
    return None


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


_IDENTIFIER_MARK_RE = re.compile(r"[a-z0-9][._:/$-][a-z0-9]|_")


def _correct(
    query: Query, known: dict[str, int] | None = None, filters: dict | None = None
) -> dict[str, str]:
    """Respell unknown words: a group none of whose alternatives is in the
    index gains the nearest indexed term (one found in a case ``filters``
    match, when given). Returns {typed word: respelled}; ``known`` (the
    document frequencies of the query's terms) gains those of the respelled
    terms."""
    if known is None:
        known = _doc_freqs(query.terms)
    corrections: dict[str, str] = {}
    for number, group in enumerate(query.groups):
        # An identifier's parts are a fallback: known parts of an unknown
        # identifier (zone, reclaim, mod) do not stop its respelling.
        if any(all(t in known for t in alt) for alt in group if alt not in query.fallbacks):
            continue
        typed = group[0][0]
        label = query.labels[number]
        if " " in label:
            continue  # a phrase: its words are known, or respelled one by one when typed alone
        fixed = correct_term(typed, identifier=bool(_IDENTIFIER_MARK_RE.search(label)), filters=filters)
        if fixed:
            # The respelled word is searched as if typed: first, with its
            # glossary concept (zone_reclam_mode -> zone_reclaim_mode, zone reclaim ...).
            concept = _glossary_index().get((fixed,))
            extra = _concept_alternatives(concept, query.fallbacks) if concept is not None else []
            query.synonyms.update(alt for alt in extra if not _rewords(alt, [(fixed,)]))
            group[:] = list(dict.fromkeys([(fixed,), *extra, *group]))
            query.respelled[typed] = fixed
            corrections[label] = _respell(label, typed, fixed)
    if corrections:
        known.update(_doc_freqs([t for t in query.terms if t not in known]))
    return corrections


def _drop_fallbacks(query: Query, df: dict[str, int]) -> None:
    """An identifier or long word the index knows means itself: its parts
    scattered over a case (``net``, ``thread``, ``count`` for
    ``net_thread_count``) are no match for it then, only when no case holds
    the word whole (or its respelling)."""

    def known(word: str) -> bool:
        return bool(df.get(word) or df.get(query.respelled.get(word, "")))

    for group in query.groups:
        kept = [alt for alt in group if alt not in query.fallbacks or not known(query.fallbacks[alt])]
        group[:] = kept or group


def _suggestion(text: str, corrections: dict[str, str]) -> str:
    if not corrections:
        return ""
    pattern = re.compile("|".join(re.escape(k) for k in sorted(corrections, key=len, reverse=True)), re.I)
    return pattern.sub(lambda m: corrections.get(m.group(0).lower(), m.group(0)), text)
