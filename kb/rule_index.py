"""Every published case group's signature rules, in memory: the candidates of
similar-case ranking, exact at any number of cases.

Similar-case ranking (:mod:`kb.similarity`) scores a snapshot's rules against
the published case groups by weighted Dice: ``2 * shared weight / (snapshot
weight + case weight)``, each rule weighing ``log(1 + (G+1)/(df+1))``. In SQL
that is either exact or fast, not both, once rules are common: in the search
benchmark each of the 35 rules is held by 4-65 % of the case groups, so an
exact pre-selection reads hundreds of thousands of rule rows at 1M cases, and
the cut-down one it replaced lost the ZStack snapshot's own case at 300k
(docs/performance.md "Search"). Here a case group is one row of bits, one bit
per rule, and a ranking is a few vectorised passes over all rows (numpy)::

    >>> index = RuleIndex()
    >>> index.put("zstack-mariadb-v2v", ["kvm.vcpus_unpinned", "kvm.memory_not_bound"])
    >>> index.put("kunpeng-stream-zone-reclaim", ["memory.zone_reclaim_enabled"])
    >>> index.frequencies()
    (2, {'kvm.memory_not_bound': 1, 'kvm.vcpus_unpinned': 1, 'memory.zone_reclaim_enabled': 1})
    >>> [(slug, round(dice, 2)) for slug, dice in index.best(["kvm.vcpus_unpinned"], limit=5)]
    [('zstack-mariadb-v2v', 0.67)]

Each process keeps one index (:func:`current`) and keeps it fresh with one
indexed read per call: ``kb.services`` bumps :class:`~kb.models.RuleIndexState`
and logs the changed case group in :class:`~kb.models.RuleIndexChange` in the
transaction that writes the rule rows, so a process reads only the groups
changed since its generation, or everything when it is too far behind or the
table was emptied (its ``epoch`` changed).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import numpy as np

from kb.models import Case, CaseRule, RuleIndexChange, RuleIndexState

# More changed groups than this at once are read as a whole reload.
RELOAD_AFTER = 200
_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(float)


def idf(df: int, groups: int) -> float:
    """A rule's weight among ``groups`` case groups when ``df`` of them hold it:
    a rare finding counts more than a common one."""
    return math.log(1 + (groups + 1) / (df + 1))


class RuleIndex:
    """Case groups (slugs) by the rules their published versions hold.

    ``bits[j, row]`` holds the rules ``8j .. 8j+7`` of a group (bit ``c & 7``
    for rule column ``c``): byte position first, so each pass reads one
    contiguous array. A group's weighted sum over its rules is then one
    256-entry table lookup per byte position (:meth:`_weighted`)."""

    def __init__(self, *, epoch: str = "", generation: int = 0) -> None:
        self.epoch, self.generation = epoch, generation
        self.rules: list[str] = []
        self.column: dict[str, int] = {}
        self.slugs: list[str] = []
        self.row: dict[str, int] = {}
        self.bits = np.zeros((1, 16), dtype=np.uint8)
        self.df = np.zeros(0, dtype=np.int64)
        self.held = 0  # groups holding at least one rule
        self._totals: tuple[np.ndarray, np.ndarray] | None = None  # (weights, each group's weight)

    # --- writing ---------------------------------------------------------------------------

    def put(self, slug: str, rules: Iterable[str]) -> None:
        """Set (replace) the rules of case group ``slug``; no rules removes it."""
        rules = set(rules)
        row = self.row.get(slug)
        if row is None:
            if not rules:
                return
            row = self._add_row(slug)
        for rule in sorted(rules - self.column.keys()):
            self._add_column(rule)
        old = self._row_columns(row)
        self.df[old] -= 1
        self.bits[:, row] = 0
        for rule in rules:
            c = self.column[rule]
            self.bits[c >> 3, row] |= np.uint8(1 << (c & 7))
        self.df[self._row_columns(row)] += 1
        self.held += bool(rules) - bool(len(old))
        self._totals = None

    def _add_row(self, slug: str) -> int:
        row = len(self.slugs)
        if row == self.bits.shape[1]:
            self.bits = np.hstack([self.bits, np.zeros_like(self.bits)])
        self.slugs.append(slug)
        self.row[slug] = row
        return row

    def _add_column(self, rule: str) -> None:
        c = len(self.rules)
        if c >> 3 == len(self.bits):
            self.bits = np.vstack([self.bits, np.zeros((1, self.bits.shape[1]), dtype=np.uint8)])
        self.rules.append(rule)
        self.column[rule] = c
        self.df = np.append(self.df, 0)

    def _row_columns(self, row: int) -> np.ndarray:
        return np.flatnonzero(np.unpackbits(self.bits[:, row], bitorder="little")[: len(self.rules)])

    # --- reading ---------------------------------------------------------------------------

    def frequencies(self) -> tuple[int, dict[str, int]]:
        """(case groups holding a rule, groups per rule)."""
        return self.held, {r: int(self.df[c]) for r, c in sorted(self.column.items()) if self.df[c]}

    def weight(self, rule: str) -> float:
        return idf(int(self.df[self.column[rule]]) if rule in self.column else 0, self.held)

    def _weighted(self, weights: np.ndarray) -> np.ndarray:
        """Per group, the sum of ``weights`` (one per column) over its rules."""
        padded = np.zeros(len(self.bits) * 8)
        padded[: len(weights)] = weights
        tables = (_BYTE_BITS @ padded.reshape(-1, 8).T).T  # [byte position, byte value] -> weight
        total = np.zeros(len(self.slugs))
        for j in np.flatnonzero(padded.reshape(-1, 8).any(axis=1)):
            total += tables[j][self.bits[j, : len(self.slugs)]]
        return total

    def _group_weights(self) -> tuple[np.ndarray, np.ndarray]:
        """Every rule's weight and every group's: kept until the next :meth:`put`."""
        if self._totals is None:
            weights = np.array([idf(int(n), self.held) for n in self.df])
            self._totals = weights, self._weighted(weights)
        return self._totals

    def best(
        self,
        rules: Iterable[str],
        *,
        limit: int,
        qualifying: Iterable[str] | None = None,
        exclude: str | None = None,
    ) -> list[tuple[str, float]]:
        """The ``limit`` case groups with the highest weighted Dice with
        ``rules``, best first (ties by slug), each with its Dice. Only groups
        sharing a rule count, and with ``qualifying`` only groups sharing one
        of those."""
        rules = set(rules)
        if not rules or not self.held:
            return []
        weights, group_weight = self._group_weights()
        shared = self._weighted(np.where(self._columns_of(rules), weights, 0.0))
        dice = 2 * shared / (sum(self.weight(r) for r in rules) + group_weight)
        if qualifying is not None:
            dice[self._weighted(self._columns_of(set(qualifying)).astype(float)) == 0] = 0.0
        if exclude in self.row:
            dice[self.row[exclude]] = 0.0
        candidates = np.flatnonzero(dice > 0)
        if len(candidates) > limit:
            # Every group at least as good as the limit-th, so ties are cut by slug, not at random.
            kth = np.partition(dice[candidates], len(candidates) - limit)[len(candidates) - limit]
            candidates = candidates[dice[candidates] >= kth]
        # equal scores tie exactly whatever order their weights were summed in; then by slug
        ranked = sorted((-round(float(dice[i]), 12), self.slugs[i]) for i in candidates)[:limit]
        return [(slug, -d) for d, slug in ranked]

    def _columns_of(self, rules: set[str]) -> np.ndarray:
        return np.array([r in rules for r in self.rules], dtype=bool)


# Held while the index is brought up to date and while a caller reads it.
_lock = threading.RLock()
_index: RuleIndex | None = None


def invalidate() -> None:
    """Forget this process's index: the next call reads every group again
    (for data written around ``kb.services``: bulk loads, rolled-back tests)."""
    global _index
    with _lock:
        _index = None


@contextmanager
def reading() -> Iterator[RuleIndex]:
    """This process's index, up to date, held for the caller's reads: no
    other thread of the process changes it meanwhile."""
    with _lock:
        yield current()


def current() -> RuleIndex:
    """This process's index, brought up to the latest committed generation."""
    global _index
    with _lock:
        # The generation is read before the rows: rows changed after it are
        # read again at the next call (a put is idempotent), never missed.
        state = RuleIndexState.objects.filter(pk=1).values_list("epoch", "generation").first()
        epoch, generation = state or ("", 0)
        index = _index
        if index is None or index.epoch != epoch or generation < index.generation:
            index = _index = _load(epoch, generation)
        elif generation > index.generation:
            changed = list(
                RuleIndexChange.objects.filter(generation__gt=index.generation, generation__lte=generation)
                .order_by()
                .values_list("slug", flat=True)
            )
            if len(changed) != generation - index.generation or len(set(changed)) > RELOAD_AFTER:
                index = _index = _load(epoch, generation)
            else:
                held: dict[str, set[str]] = {slug: set() for slug in changed}
                for slug, rule in _published_rules().filter(slug__in=held):
                    held[slug].add(rule)
                for slug, rules in held.items():
                    index.put(slug, rules)
                index.generation = generation
        return index


def _published_rules():
    return CaseRule.objects.filter(state=Case.State.PUBLISHED).order_by().values_list("slug", "rule")


def _load(epoch: str, generation: int) -> RuleIndex:
    """Every published group, in bulk: one pass over the rule rows, then the
    bit rows and frequencies built by numpy, not group by group."""
    index = RuleIndex(epoch=epoch, generation=generation)
    rows: list[int] = []
    columns: list[int] = []
    for slug, rule in _published_rules().iterator(chunk_size=10_000):
        row = index.row.get(slug)
        if row is None:
            row = index.row[slug] = len(index.slugs)
            index.slugs.append(slug)
        column = index.column.get(rule)
        if column is None:
            column = index.column[rule] = len(index.rules)
            index.rules.append(rule)
        rows.append(row)
        columns.append(column)
    r, c = np.array(rows, dtype=np.int64), np.array(columns, dtype=np.int64)
    index.bits = np.zeros((len(index.rules) // 8 + 1, max(16, len(index.slugs))), dtype=np.uint8)
    # Both language versions hold a group's rules: OR, so a pair counts once.
    np.bitwise_or.at(index.bits, (c >> 3, r), (1 << (c & 7)).astype(np.uint8))
    held = np.unpackbits(index.bits, axis=0, bitorder="little")[: len(index.rules)]
    index.df = held.sum(axis=1, dtype=np.int64)
    index.held = len(index.slugs)
    return index
