"""A query parsed into groups of alternatives (:func:`parse_query`), expanded with the glossary."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from kb.search.tokenizer import (
    _CJK,
    _CJK_START_RE,
    _HYPHENATED_RE,
    Unit,
    _compound_stem,
    _glossary_index,
    _units,
    dictionary,
    glossary,
    phrase_token,
)

# --- queries ----------------------------------------------------------------------------


@dataclass
class Query:
    """AND of groups; a group is an OR of alternatives; an alternative an AND of tokens."""

    text: str
    groups: list[list[tuple[str, ...]]] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  # each group as the reader wrote it
    # The parts of an identifier or long Chinese word (parts -> the word): a
    # fallback for when the index does not know the word (:func:`_drop_fallbacks`).
    fallbacks: dict[tuple[str, ...], str] = field(default_factory=dict)
    # An unknown word -> the indexed term searched for it (:func:`_correct`).
    respelled: dict[str, str] = field(default_factory=dict)
    # The alternatives that are only a glossary synonym of the words typed
    # (not the word, its parts or its respelling): they weigh SYNONYM_WEIGHT.
    synonyms: set[tuple[str, ...]] = field(default_factory=set)

    @property
    def terms(self) -> list[str]:
        return list(self._term_set())

    def _term_set(self) -> dict[str, None]:
        """The query's terms in order, cached until the groups change (a
        spelling correction, a dropped fallback)."""
        key = tuple(tuple(g) for g in self.groups)
        cached = self.__dict__.get("_terms")
        if cached is None or cached[0] != key:
            cached = (key, dict.fromkeys(t for g in self.groups for alt in g for t in alt))
            self.__dict__["_terms"] = cached
        return cached[1]

    def phrase_words(self) -> frozenset[str]:
        """The words of the query's phrase terms (:func:`phrase_token`): a
        snippet marks them too."""
        terms = self._term_set()
        cached = self.__dict__.get("_phrase_words")
        if cached is None or cached[0] is not terms:
            words = frozenset(
                w
                for ws, token in self.fallbacks.items()
                if token in terms and phrase_token(ws) == token
                for w in ws
            )
            cached = (terms, words)
            self.__dict__["_phrase_words"] = cached
        return cached[1]

    def cjk_terms(self) -> list[str]:
        return [t for t in self._term_set() if _CJK_START_RE.match(t)]

    def _memo(self, name: str) -> dict:
        """A dict kept for the query until its terms change."""
        terms = self._term_set()
        memo = self.__dict__.get(name)
        if memo is None or memo[0] is not terms:
            memo = (terms, {})
            self.__dict__[name] = memo
        return memo[1]

    def word_terms(self) -> dict[str, tuple[str, ...]]:
        """Latin word (lower case) -> the query terms it stands for, filled as
        words are met (:func:`_terms_of`) and kept for the query: the hits of
        one page share most of their words."""
        return self._memo("_word_memo")

    def named_rules(self) -> dict[str, bool]:
        """Signature rule -> whether its words hold a query word group
        (:func:`explain`), filled as rules are met and kept for the query."""
        return self._memo("_rule_memo")

    def marked_words(self) -> dict[str, bool]:
        """Word as written in a text -> whether a snippet marks it
        (:func:`_marks`), filled as words are met and kept for the query."""
        return self._memo("_marked_memo")

    def __bool__(self) -> bool:
        return bool(self.groups)


def _unit_alternatives(unit: Unit, fallbacks: dict | None = None) -> list[tuple[str, ...]]:
    """The word itself, and for an identifier or a long Chinese word its parts
    (noted in ``fallbacks``: parts alternative -> the word)."""
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
            if (
                _HYPHENATED_RE.fullmatch(unit.surface)
                and (stem := _compound_stem(unit.surface.split("-"))) != unit.primary
            ):
                # The compound stemmed whole (pre-faulted -> prefault): the same word.
                alts.append((stem,))
            leaves = tuple(p for p in unit.parts if not any(p != q and q in p for q in unit.parts))
            alts.append(leaves or unit.parts)
    if fallbacks is not None and len(alts) > 1 and alts[-1] not in fallbacks:
        fallbacks[alts[-1]] = unit.primary
    return alts


def _rewords(alt: tuple[str, ...], typed: list[tuple[str, ...]]) -> bool:
    """Whether glossary alternative ``alt`` only re-words what was typed
    (``typed``: the word's own alternatives): each of its tokens is one of
    theirs or part of one (``zone reclaim`` and ``zonereclaim`` of
    ``zone_reclaim_mode``). Such an alternative is the word, not a synonym."""
    tokens = {t for a in typed for t in a}
    return all(tok in tokens or (len(tok) >= 3 and any(tok in t for t in tokens)) for tok in alt)


def _concept_alternatives(number: int, fallbacks: dict) -> list[tuple[str, ...]]:
    """The alternatives of glossary concept ``number``: each phrase's tokens."""
    group: list[tuple[str, ...]] = []
    for phrase in glossary()[1][number]:
        phrase_units = _units(phrase)
        if len(phrase_units) == 1:
            group.extend(_unit_alternatives(phrase_units[0], fallbacks))
        elif phrase_units:
            group.extend(_phrase_alternatives(tuple(u.primary for u in phrase_units), fallbacks))
    return group


@functools.cache
def _synonym_phrases() -> dict[tuple[str, ...], str]:
    """Each alternative a glossary phrase gives a query -> the phrase as the
    glossary writes it (the first phrase giving it): how a match through a
    synonym is named to the reader (``("hugepag",)`` -> ``hugepages``)."""
    phrases: dict[tuple[str, ...], str] = {}
    for concept in glossary()[1]:
        for phrase in concept:
            phrase_units = _units(phrase)
            if len(phrase_units) == 1:
                alts = _unit_alternatives(phrase_units[0])
            else:
                alts = _phrase_alternatives(tuple(u.primary for u in phrase_units), {})
            for alt in alts:
                phrases.setdefault(alt, phrase)
    return phrases


def synonym_phrase(alt: tuple[str, ...]) -> str:
    """The glossary phrase a synonym alternative of a query stands for."""
    return _synonym_phrases().get(alt, " ".join(alt))


def _phrase_alternatives(words: tuple[str, ...], fallbacks: dict) -> list[tuple[str, ...]]:
    """A glossary phrase of several words: its token (:func:`_phrases`), and
    its words anywhere in a case as a fallback for an index without it."""
    token = phrase_token(words)
    fallbacks[words] = token
    return [(token,), words]


def parse_query(text: str) -> Query:
    """The groups of ``text``: each word or glossary phrase, with its
    alternatives. A concept named twice (``MAP_POPULATE prefault``,
    ``大页 huge pages``) is one group: one thing the reader looks for."""
    units = _units(text)
    query = Query(text=text)
    index = _glossary_index()
    longest = max((len(k) for k in index), default=1)
    concept_group: dict[int, int] = {}  # concept number -> its group
    i = 0
    while i < len(units):
        for size in range(min(longest, len(units) - i), 0, -1):
            key = tuple(u.primary for u in units[i : i + size])
            if key in index:
                label = " ".join(u.surface for u in units[i : i + size])
                number = index[key]
                if number in concept_group:
                    query.labels[concept_group[number]] += f" / {label}"
                    i += size
                    break
                group: list[tuple[str, ...]] = []
                if size == 1:
                    group.extend(_unit_alternatives(units[i], query.fallbacks))
                else:
                    group.extend(_phrase_alternatives(key, query.fallbacks))
                concept = _concept_alternatives(number, query.fallbacks)
                query.synonyms.update(alt for alt in concept if not _rewords(alt, group))
                group.extend(concept)
                concept_group[number] = len(query.groups)
                query.groups.append(list(dict.fromkeys(group)))
                query.labels.append(label)
                i += size
                break
        else:
            _add_word(query, units[i], index, concept_group)
            i += 1
    return query


def _add_word(query: Query, unit: Unit, index: dict, concept_group: dict[int, int]) -> None:
    """A word that starts no glossary phrase: its own group, or, for an
    identifier naming a glossary concept (:func:`_named_concept`), that
    concept's group (joined when the concept was named before)."""
    number, words = _named_concept(unit, index)
    if number is None:
        query.groups.append(_unit_alternatives(unit, query.fallbacks))
        query.labels.append(unit.surface)
        return
    own = [*_unit_alternatives(unit, query.fallbacks), (phrase_token(words),)]
    if number in concept_group:  # the identifier joins the group of the concept named before
        named = concept_group[number]
        query.groups[named] = list(dict.fromkeys(query.groups[named] + own))
        query.synonyms.difference_update(own)
        query.labels[named] += f" / {unit.surface}"
        return
    concept = _concept_alternatives(number, query.fallbacks)
    query.synonyms.update(alt for alt in concept if not _rewords(alt, own))
    concept_group[number] = len(query.groups)
    query.groups.append(list(dict.fromkeys(own + concept)))
    query.labels.append(unit.surface)


def _named_concept(unit: Unit, index: dict[tuple[str, ...], int]) -> tuple[int | None, tuple[str, ...]]:
    """The glossary concept an identifier names by its words, and those words:
    the parts of ``transparent_hugepage`` or ``huge_pages`` are the glossary
    phrase ``transparent hugepages`` or ``huge pages`` (indexed as one token
    wherever the identifier is, :func:`~kb.search.tokenizer._phrases`). None
    for any other word."""
    if len(unit.parts) < 2 or re.match(rf"[{_CJK}]", unit.primary):
        return None, ()
    leaves = tuple(p for p in unit.parts if not any(p != q and q in p for q in unit.parts))
    return index.get(leaves), leaves
