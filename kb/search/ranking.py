"""Ranking: reading the best postings of each query term until the page is certain (:func:`search`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.db import connection

from kb.models import Case
from kb.search.queries import Query
from kb.search.resultset import THIN, _filter_sql
from kb.search.spelling import _case_total
from kb.search.tokenizer import _CJK_START_RE

# --- ranking ---------------------------------------------------------------------------------

# Top-k retrieval over the postings (the threshold algorithm: Fagin, Lotem and
# Naor 2003). Each query term's list is read from its best case down, FIRST_DEPTH
# rows at first; what is read is exact, what is not is bounded by the last weight
# read (or is absent, once a list is read to its end). A case's missing weights
# are looked up by key for the most promising cases only; the search stops as
# soon as no case left unread or unscored could beat the last of the page, and
# reads deeper (x4) otherwise, up to MAX_DEPTH rows per term and COMPLETE_LIMIT
# versions looked up (then the best order found is answered, ``Results.exact``
# false): the bounds keep a page's cost to a few milliseconds of SQL.
FIRST_DEPTH = 64
MAX_DEPTH = 256
COMPLETE_BATCH = 100  # versions whose missing weights are looked up in one statement
COMPLETE_LIMIT = 100  # versions looked up at most per search (then the order is the best found)
COUNT_EXACT_LIMIT = 1000  # versions of the rarest word group: up to this many, the count is exact


def _idf(df: int, total: int) -> float:
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def _group_matches(group: list[tuple[str, ...]], tokens: set[str]) -> bool:
    return any(all(t in tokens for t in alt) for alt in group)


def _states(filters: dict) -> list[str]:

    return [filters["state"]] if filters.get("state") else list(Case.State.values)


def _in(values) -> tuple[str, list]:
    """A membership test and its parameters: ``= ANY(%s)`` with one array on
    PostgreSQL (one placeholder, whatever the number of values: nothing for
    the driver to parse), ``IN (%s, ...)`` on SQLite (no arrays)."""
    values = list(values)
    if connection.vendor == "postgresql":
        return "= ANY(%s)", [_pg_array(values)]
    return "IN (" + ", ".join(["%s"] * len(values)) + ")", values


def _pg_array(values) -> str:
    """The text form of a PostgreSQL array of ints or strings, passed as one
    string: the driver dumps a list element by element (0.4 ms of CPU for the
    700 pairs of a lookup)."""
    return (
        "{"
        + ",".join(
            str(v) if isinstance(v, int) else '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"'
            for v in values
        )
        + "}"
    )


def _head_parts(terms: list[str], states: list[str], depth: int) -> tuple[list[str], list]:
    """One ``SELECT term, state, case_id, impact`` per term and state: the
    ``depth`` best postings, best first (to be joined by UNION ALL)."""
    parts: list[str] = []
    params: list[str | int] = []
    for term in terms:
        for state in states:
            parts.append(
                "SELECT * FROM (SELECT term, state, case_id, impact FROM kb_posting"  # noqa: S608 -- only placeholders and a counter are interpolated
                f" WHERE term = %s AND state = %s ORDER BY impact DESC, case_id LIMIT %s) AS h{len(parts)}"
            )
            params += [term, state, depth]
    return parts, params


def _heads(
    terms: list[str], states: list[str], depth: int, read: dict[str, list[tuple]] | None = None
) -> tuple[dict, dict[str, float]]:
    """The ``depth`` best (case id, weight) of each term in each state, best
    first, and per term the most an unread posting can weigh (0: none left).
    ``read``: term -> its (state, case id, weight) rows at this depth, already
    read (:func:`_vocabulary`); the other terms are read here."""
    read = read or {}
    fetched: dict[str, list[tuple]] = {}
    parts, params = _head_parts([t for t in terms if t not in read], states, depth)
    if parts:
        with connection.cursor() as cursor:
            cursor.execute(" UNION ALL ".join(parts), params)
            for term, state, case_id, impact in cursor.fetchall():
                fetched.setdefault(term, []).append((state, case_id, impact))
    rows: dict[str, list[tuple[int, float]]] = {}
    bounds: dict[str, float] = {}
    for term in terms:
        term_rows = read[term] if term in read else fetched.get(term, [])
        rows[term] = [(case_id, impact) for _, case_id, impact in term_rows]
        per_state: dict[str, list[float]] = {}
        for state, _, impact in term_rows:
            per_state.setdefault(state, []).append(impact)
        bounds[term] = max((min(ws) for ws in per_state.values() if len(ws) >= depth), default=0.0)
    return rows, bounds


def _vocabulary(terms: list[str], states: list[str], depth: int) -> tuple[dict[str, int], int, dict]:
    """What a search reads first, in one statement: the document frequency of
    each term (:func:`_doc_freqs`), the number of versions (:func:`_case_total`)
    and each term's ``depth`` best postings in ``states`` (for :func:`_heads`:
    term -> (state, case id, weight) rows, best first)."""
    terms = list(dict.fromkeys(terms))
    if not terms:
        return {}, _case_total(), {}
    marks = ", ".join(["%s"] * len(terms))
    parts = [
        "SELECT term, NULL AS state, ndoc AS case_id, CAST(NULL AS REAL) AS impact"  # noqa: S608 -- only placeholders are interpolated
        f" FROM kb_termstat WHERE term IN ({marks})"
    ]
    if connection.vendor == "postgresql":
        # The planner's row estimate: exact enough for IDF, free at any size.
        parts.append(
            "SELECT NULL, NULL, reltuples::bigint, CAST(NULL AS REAL)"
            " FROM pg_class WHERE oid = 'kb_case'::regclass"
        )
    head_parts, head_params = _head_parts(terms, states, depth)
    df: dict[str, int] = {}
    total = 0
    heads: dict[str, list[tuple]] = {t: [] for t in terms}
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts + head_parts), [*terms, *head_params])
        for term, state, number, impact in cursor.fetchall():
            if state is not None:
                heads[term].append((state, number, impact))
            elif term is None:
                total = int(number or 0)
            elif number and number > 0:
                df[term] = int(number)
    # A table never analyzed has no estimate yet: counted.
    return df, (total if total > 0 else max(Case.objects.count(), 1)), heads


def _lookup(
    pairs: set[tuple[int, str]], ids=(), filters: dict | None = None
) -> tuple[dict[tuple[int, str], float], dict[int, tuple[str, str]]]:
    """The weights of (case id, term) pairs, by key (absent pairs are left
    out), and in the same round trip what :func:`_case_rows` answers for ``ids``."""
    weights: dict[tuple[int, str], float] = {}
    rows: dict[int, tuple[str, str]] = {}
    if not pairs:
        return weights, _case_rows(ids, filters or {})
    if connection.vendor == "postgresql":
        # The pairs themselves, each found by the primary key. With
        # ``case_id = ANY(..) AND term = ANY(..)`` the planner reads the
        # common terms' whole lists from the term index instead (100,000
        # entries for ``memory`` at 100k cases: 20-35 ms, against 2).
        ordered = sorted(pairs)
        sql = (
            "SELECT p.case_id, p.term, p.impact, NULL AS language"
            " FROM unnest(%s::integer[], %s::text[]) AS k(case_id, term)"
            " JOIN kb_posting p ON p.case_id = k.case_id AND p.term = k.term"
        )
        params: list = [_pg_array([i for i, _ in ordered]), _pg_array([t for _, t in ordered])]
    else:
        ids_sql, pair_ids = _in(sorted({p[0] for p in pairs}))
        terms_sql, terms = _in(sorted({p[1] for p in pairs}))
        sql = (
            "SELECT case_id, term, impact, NULL AS language FROM kb_posting"  # noqa: S608 -- only placeholders are interpolated
            f" WHERE case_id {ids_sql} AND term {terms_sql}"
        )
        params = [*pair_ids, *terms]
    ids = list(ids)
    if ids:
        rows_sql, rows_params = _case_rows_sql(ids, filters or {})
        sql = f"{sql} UNION ALL {rows_sql}"
        params += rows_params
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for case_id, term, impact, language in cursor.fetchall():
            if language is not None:
                rows[case_id] = (term, language)
            elif (case_id, term) in pairs:
                weights[(case_id, term)] = impact
    return weights, rows


def _case_rows_sql(ids: list, filters: dict) -> tuple[str, list]:
    base_sql, base_params = _filter_sql(filters)
    ids_sql, ids = _in(ids)
    return (
        "SELECT c.id, c.slug, CAST(NULL AS REAL), c.language FROM kb_case c"  # noqa: S608 -- only placeholders and constants are interpolated
        f" WHERE c.id {ids_sql} AND {base_sql}",
        [*ids, *base_params],
    )


def _case_rows(ids, filters: dict) -> dict[int, tuple[str, str]]:
    """id -> (slug, language) of the versions among ``ids`` that pass ``filters``."""
    ids = list(ids)
    if not ids:
        return {}
    sql, params = _case_rows_sql(ids, filters)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {i: (slug, lang) for i, slug, _, lang in cursor.fetchall()}


@dataclass
class _Ranking:
    rows: list[tuple[int, str, str, float]]  # (id, slug, language, score), one per case, best first
    exact: bool  # the order is exact (the search was not cut at MAX_DEPTH or COMPLETE_LIMIT)


# A one-character Chinese word (高, 长, 慢) is seldom a word of its own in a
# text: the segmenter glues it to its neighbours (很高, 较长), so the few
# versions holding it alone make it look rare. It counts at most as a word
# held by WEAK_SHARE of the versions.
WEAK_SHARE = 0.1
# A glossary synonym of the word typed counts this much of the word itself: a
# case holding the word the reader chose (numa_miss) comes before one holding
# only its concept's other words (remote memory), other things equal.
SYNONYM_WEIGHT = 0.8


def _is_weak(alt: tuple[str, ...]) -> bool:
    return len(alt) == 1 and len(alt[0]) == 1 and bool(_CJK_START_RE.match(alt[0]))


_NO_GROUPS: frozenset[int] = frozenset()


class _Scorer:
    """Scores of case versions for a query from the weights read so far.

    A word group is one concept (a word, an identifier and its parts, a
    glossary entry in both languages). Each alternative counts with its own
    IDF, but at most the IDF of the word typed: a synonym is never more
    telling than the word the reader chose (a rare Chinese synonym of a common
    English word does not outrank it), while a common synonym of a rare word
    typed counts as common. A version's score for the group is that of its best
    alternative (the mean weight of an alternative's tokens: an identifier's
    parts or a phrase are one word); its score for the query the sum over
    groups times the cube of the share of the query's IDF it holds: a case
    lacking one common word of the query can still come first, one lacking
    the rare word cannot."""

    def __init__(self, query: Query, df: dict[str, int], total: int):
        self.groups = []
        self.idf = []  # per group, its weight in the query: the IDF of the word typed
        weak = _idf(int(total * WEAK_SHARE), total)
        for group in query.groups:
            alt_idf = [_idf(min(df.get(t, 0) for t in alt), total) for alt in group]
            typed = min(alt_idf[0], weak) if _is_weak(group[0]) else alt_idf[0]
            self.idf.append(max(min(i, typed) for i in alt_idf))
            self.groups.append(
                [
                    (tuple(alt), min(i, typed) * (SYNONYM_WEIGHT if alt in query.synonyms else 1.0))
                    for alt, i in zip(group, alt_idf, strict=True)
                ]
            )
        self.whole = sum(self.idf) or 1.0
        # Per group, (alternative, IDF / its length): an alternative's tokens average.
        self._factors = [[(alt, idf / len(alt)) for alt, idf in group] for group in self.groups]
        self.terms = query.terms
        self.known: dict[int, dict[str, float]] = {}  # case id -> term -> weight (0: absent)
        # term -> the (word group, alternative) pairs holding it: an
        # alternative none of whose terms a version is known by scores its
        # bound (``_alt_bounds``), a group none of whose terms it is known by
        # its best bound (``_bound_best``).
        self._alts_of: dict[str, list[tuple[int, int]]] = {}
        for number, factors in enumerate(self._factors):
            for index, (alt, _) in enumerate(factors):
                for term in dict.fromkeys(alt):
                    self._alts_of.setdefault(term, []).append((number, index))
        self.bound = {}

    @property
    def bound(self) -> dict[str, float]:
        """term -> most an unread posting weighs (0: none left)."""
        return self._bound

    @bound.setter
    def bound(self, bound: dict[str, float]) -> None:
        self._bound = bound
        # Per group, its alternatives' bounds, best first.
        self._alt_bounds = [
            sorted(
                ((self._value(alt, factor, {}), index) for index, (alt, factor) in enumerate(group)),
                reverse=True,
            )
            for group in self._factors
        ]
        self._bound_best = [max([0.0, *(value for value, _ in alts)]) for alts in self._alt_bounds]

    def upper(self, known: dict[str, float]) -> float:
        """The most a case can score whose known weights are ``known`` (term ->
        weight, 0: absent; {} for a case not read at all): unknown weights at
        their bound. Per word group, its best alternative (an alternative of
        several tokens scores their mean weight, 0 when one is absent) times
        its IDF; the sum over groups times the cube of the share of the query's
        IDF held (:class:`_Scorer`). Exact once every weight that matters is known."""
        touched: dict[int, set[int]] = {}  # group -> its alternatives holding a known term
        for term in known:
            for number, index in self._alts_of.get(term, ()):
                touched.setdefault(number, set()).add(index)
        total = 0.0
        held = 0.0
        for number, idf in enumerate(self.idf):
            alts = touched.get(number)
            if alts is None:
                best = self._bound_best[number]
            else:
                best = 0.0
                for value, index in self._alt_bounds[number]:
                    if index not in alts:  # the best of the others
                        best = max(best, value)
                        break
                group = self._factors[number]
                for index in alts:
                    alt, factor = group[index]
                    value = self._value(alt, factor, known)
                    if value > best:
                        best = value
            total += best
            if best:
                held += idf
        return total * (held / self.whole) ** 3

    def _value(self, alt: tuple[str, ...], factor: float, known: dict[str, float]) -> float:
        """A version's score for one alternative: its known weights, the
        others at their bound (an alternative of several tokens: their mean)."""
        bound = self._bound
        if len(alt) == 1:
            w = known.get(alt[0])
            if w is None:
                w = bound.get(alt[0], 0.0)
            return w * factor
        sum_w = 0.0
        for term in alt:
            w = known.get(term)
            if w is None:
                w = bound.get(term, 0.0)
            if not w:
                return 0.0 * factor
            sum_w += w
        return sum_w * factor

    def missing(self, case_id: int) -> list[str]:
        """Terms whose weight in the case could still change its score: the
        unknown tokens of alternatives that could beat the group's best known one."""
        known = self.known.get(case_id, {})
        bound = self.bound
        out: dict[str, None] = {}
        for group in self._factors:
            floor = 0.0
            open_alts = []
            for alt, factor in group:
                unknown = [t for t in alt if t not in known]
                weights = [known[t] if t in known else bound.get(t, 0.0) for t in alt]
                if not all(weights):
                    continue
                value = factor * sum(weights)
                if not unknown:
                    floor = max(floor, value)
                else:
                    open_alts.append((value, unknown))
            for upper, unknown in open_alts:
                if upper > floor:
                    out.update(dict.fromkeys(unknown))
        return list(out)

    def learn(self, pairs: set[tuple[int, str]], found: dict[tuple[int, str], float]) -> None:
        for case_id, term in pairs:
            self.known.setdefault(case_id, {})[term] = found.get((case_id, term), 0.0)


def _first_depth(wanted: int) -> int:
    return max(FIRST_DEPTH, 2 * wanted)


def _rank(
    query: Query, filters: dict, wanted: int, df: dict[str, int], total: int, read: dict | None = None
) -> _Ranking:
    """The ``wanted`` best cases (one row per case, its best version) for
    ``query``; ``df``: document frequencies of its terms, ``total``: versions;
    ``read``: the terms' first postings, already read (:func:`_vocabulary`)."""
    terms = query.terms
    scorer = _Scorer(query, df, total)
    states = _states(filters)
    live_terms = [t for t in terms if df.get(t)]
    depth = _first_depth(wanted)
    passing: dict[int, tuple[str, str] | None] = {}  # case id -> (slug, language), None when filtered out
    completed = 0
    while True:
        heads, scorer.bound = _heads(live_terms, states, depth, read)
        read = None
        for term, rows in heads.items():
            for case_id, w in rows:
                scorer.known.setdefault(case_id, {})[term] = w
        final = depth >= MAX_DEPTH
        ranked, exact, capped = _settle(scorer, filters, passing, wanted, final=final, completed=completed)
        completed = COMPLETE_LIMIT if capped else completed
        if exact or final or capped:
            break
        depth *= 4
    return _Ranking(ranked, exact)


def _settle(scorer: _Scorer, filters: dict, passing: dict, wanted: int, *, final: bool, completed: int):
    """Score the versions read, looking their missing weights up best-first,
    at most COMPLETE_LIMIT in a search (``completed`` so far); returns
    (ranked cases, exact, limit reached)."""
    exact_scores: dict[int, float] = {}
    pending: list[tuple[float, int]] = []
    open_terms = [t for t in scorer.terms if scorer.bound.get(t, 0.0) > 0]

    def classify(case_id: int) -> None:
        known = scorer.known[case_id]
        upper = scorer.upper(known)
        if not upper:
            return
        if any(t not in known for t in open_terms):
            pending.append((upper, case_id))
        else:
            exact_scores[case_id] = upper

    for case_id in scorer.known:
        if passing.get(case_id, ()) is not None:
            classify(case_id)
    bound_unseen = scorer.upper({})
    # id -> (slug, language) or None, read with the missing weights of a batch:
    # the versions looked up are those scored next.
    read_ahead: dict[int, tuple[str, str] | None] = {}
    while True:
        # Filters (platform, language, rule, author ...) on the versions scored.
        unknown = [i for i in exact_scores if i not in passing]
        if unknown:
            unread = [i for i in unknown if i not in read_ahead]
            rows = _case_rows(unread, filters) if unread else {}
            for i in unknown:
                passing[i] = read_ahead[i] if i in read_ahead else rows.get(i)
        best: dict[str, tuple[int, str, str, float]] = {}
        for case_id, score in exact_scores.items():
            meta = passing.get(case_id)
            if meta is None or score <= 0:
                continue
            slug, language = meta
            if slug not in best or score > best[slug][3]:
                best[slug] = (case_id, slug, language, score)
        ranked = sorted(best.values(), key=lambda r: (-r[3], r[1]))
        kth = ranked[wanted - 1][3] if len(ranked) >= wanted else 0.0
        pending.sort(reverse=True)
        bound_pending = pending[0][0] if pending else 0.0
        capped = completed >= COMPLETE_LIMIT
        if bound_pending and bound_pending > kth and (final or bound_pending >= bound_unseen) and not capped:
            batch = [i for _, i in pending[:COMPLETE_BATCH]]
            del pending[:COMPLETE_BATCH]
            completed += len(batch)
            pairs = {(i, t) for i in batch for t in scorer.missing(i)}
            ahead = [i for i in batch if i not in passing]
            found, rows = _lookup(pairs, ahead, filters)
            read_ahead.update((i, rows.get(i)) for i in ahead)
            scorer.learn(pairs, found)
            for i in batch:
                # The other unknown terms cannot change the score (missing()).
                known = scorer.known[i]
                for t in open_terms:
                    known.setdefault(t, 0.0)
                classify(i)
            continue
        exact = max(bound_unseen, bound_pending) <= kth if kth else (bound_unseen == 0 and not pending)
        return ranked, exact, capped


# A posting looked up by key costs about as much as this many read from a
# term's list (PostgreSQL, 100k cases: 4 index pages against 1/100 of one).
KEY_LOOKUP_COST = 16


def _count_candidates(
    lead: list[str], others: list[str], filters: dict, df: dict[str, int]
) -> tuple[dict[int, str], dict[int, set[str]]]:
    """The versions passing ``filters`` that hold a ``lead`` term: id -> slug,
    and id -> the terms among ``lead`` and ``others`` each holds. The lead
    terms held come with the candidates (one statement); ``others`` are read
    by a second one, over the candidates' postings: a condition per word in SQL
    makes PostgreSQL's planner explode on a long pasted text (minutes for a
    60-word symptom). On PostgreSQL, when the terms' lists (``df``) are longer
    than the candidates' keys, each (candidate, term) is looked up by key: the
    planner, which does not know the lists' lengths, reads the common terms'
    whole lists (24,000 postings for ``page cache ... bandwidth``)."""
    lead_sql, lead_params = _in(lead)
    states_sql, states = _in(_states(filters))
    base_sql, base_params = _filter_sql(filters)
    slugs: dict[int, str] = {}
    held: dict[int, set[str]] = {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.id, c.slug, p.term FROM kb_posting p JOIN kb_case c ON c.id = p.case_id"  # noqa: S608 -- only placeholders and constants are interpolated
            f" WHERE p.term {lead_sql} AND p.state {states_sql} AND {base_sql}",
            [*lead_params, *states, *base_params],
        )
        for pk, slug, term in cursor.fetchall():
            slugs[pk] = slug
            held.setdefault(pk, set()).add(term)
        if not (slugs and others):
            return slugs, held
        if connection.vendor == "postgresql" and len(slugs) * len(others) * KEY_LOOKUP_COST < sum(
            df.get(t, 0) for t in others
        ):
            cursor.execute(
                "SELECT p.case_id, p.term FROM unnest(%s::integer[], %s::text[]) AS k(case_id, term)"
                " JOIN kb_posting p ON p.case_id = k.case_id AND p.term = k.term",
                [
                    _pg_array([pk for pk in slugs for _ in others]),
                    _pg_array([term for _ in slugs for term in others]),
                ],
            )
        else:
            ids_sql, ids = _in(slugs)
            terms_sql, terms = _in(others)
            cursor.execute(
                "SELECT case_id, term FROM kb_posting"  # noqa: S608 -- only placeholders are interpolated
                f" WHERE case_id {ids_sql} AND term {terms_sql}",
                [*ids, *terms],
            )
        for pk, term in cursor.fetchall():
            held[pk].add(term)
    return slugs, held


def _count(
    query: Query,
    filters: dict,
    df: dict[str, int],
    total: int,
    *,
    any_group: bool,
    found: int = 0,
    read: dict | None = None,
) -> tuple[int, bool]:
    """(cases holding every word group, or any with ``any_group``; exact):
    counted in SQL when the rarest group's lists are short, else estimated
    from the document frequencies, at least ``found``. ``read``: the
    candidates read by an earlier count of the same search (for the count of
    the cases holding any group after the one of those holding every group)."""

    def group_df(group) -> int:
        return sum(min(df.get(t, 0) for t in alt) for alt in group)

    sizes = [group_df(g) for g in query.groups]
    if not sizes:
        return found, True
    driving = min(range(len(sizes)), key=sizes.__getitem__)
    versions = sum(sizes) if any_group else sizes[driving]
    # Independent words: the share of versions holding all of them (or any).
    shares = [min(1.0, s / max(total, 1)) for s in sizes]
    if versions <= COUNT_EXACT_LIMIT:
        # The candidates are the versions holding the rarest word of each
        # alternative of the driving group (or of any group): at most
        # COUNT_EXACT_LIMIT. When few versions are expected to hold every group
        # (the count of those holding any follows) and the candidates of any
        # group are few too, those are read at once, for both counts.
        wide = any_group or (
            read is not None
            and len(sizes) > 1
            and sum(sizes) <= COUNT_EXACT_LIMIT
            and total * math.prod(shares) < THIN
        )
        groups = query.groups if wide else [query.groups[driving]]
        lead = list(dict.fromkeys(min(alt, key=lambda t: df.get(t, 0)) for g in groups for alt in g))
        key = tuple(lead)
        if read is not None and key in read:
            slugs, held = read[key]
        else:
            # The lead terms a candidate holds are known: only the others are read.
            others = [t for t in query.terms if t not in set(lead)]
            slugs, held = _count_candidates(lead, others, filters, df)
            if read is not None:
                read[key] = (slugs, held)
        # Per term the candidates holding it; per group those holding one of
        # its alternatives whole; then every group (or any): sets, not a test
        # per candidate and group.
        holding: dict[str, set[int]] = {}
        for pk, tokens in held.items():
            for term in tokens:
                holding.setdefault(term, set()).add(pk)
        per_group = [
            set().union(*(set.intersection(*(holding.get(t, set()) for t in alt)) for alt in g))
            for g in query.groups
        ]
        chosen = set().union(*per_group) if any_group else set.intersection(*per_group)
        return len({slugs[pk] for pk in chosen}), True
    share = 1 - math.prod(1 - s for s in shares) if any_group else math.prod(shares)
    estimate = total * share
    return max(int(estimate), found), False
