"""Bilingual case search.

One tokenizer serves the index and the query (:func:`tokenize`):

* text is NFKC-normalised and lower-cased, traditional Chinese characters
  read as simplified (``kb/data/traditional.txt``, from OpenCC);
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

The index is the project's own, the same on SQLite and PostgreSQL: each
term of each case version with its BM25 weight there (:class:`kb.models.Posting`,
:func:`impacts`) and each term's document frequency (:class:`kb.models.TermStat`).
A search reads the best postings of each query term first and stops as soon
as the page's hits are certain (:func:`_rank`), so its cost follows the page,
not the number of matches.
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

from kb.models import Case, CaseMeasure, CaseReuse, CaseRule, Metric, Posting, Tag, TermStat

DATA = Path(__file__).resolve().parent / "data"
DICTIONARY_PATH = DATA / "dictionary.txt"
GLOSSARY_PATH = DATA / "glossary.yaml"
TRADITIONAL_PATH = DATA / "traditional.txt"
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
    will with would you your after before also any very vs versus many much lot lots several really quite
    all each every some
    because due
    的 了 在 是 和 与 及 或 将 把 被 对 为 也 都 而 并 就 很 等 非常 特别 比较 太 吗 呢 啊 吧
    很多 比 后 之后 以后 时 一下 怎么 如何 为什么 导致 造成 引起 因为 由于 所以""".split()  # noqa: SIM905 -- a word list reads better as text
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


@functools.cache
def _simplified() -> dict[int, str]:
    """Traditional -> simplified character table (``kb/data/traditional.txt``,
    from OpenCC), as a ``str.translate`` map."""
    table: dict[int, str] = {}
    for line in TRADITIONAL_PATH.read_text(encoding="utf-8").splitlines():
        if len(line) == 2 and not line.startswith("#"):
            table[ord(line[0])] = line[1]
    return table


def simplified(text: str) -> str:
    """``text`` with traditional Chinese characters in simplified script: the
    script of the dictionary and the glossary, so 記憶體 / 啟動 / 緩衝池 meet
    记忆体 / 启动 / 缓冲池. Character by character (its length is kept); a
    Taiwan word for a mainland one (記憶體 for 内存) is the glossary's.

    >>> simplified("MySQL 啟動 很慢 緩衝池")
    'MySQL 启动 很慢 缓冲池'
    """
    return text.translate(_simplified())


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
# rules, the traditional character table): loadcases re-indexes cases tokenized
# by another version.
TOKENIZER_VERSION = "6"


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


_HYPHENATED_RE = re.compile(r"[a-z]+(?:-[a-z]+)+")


def _compound_stem(segments: list[str]) -> str:
    """A hyphenated compound as one word with its last part stemmed
    (pre-faulted -> prefault, zone-reclaim-mode -> zonereclaimmode)."""
    return "".join(segments[:-1]) + _stem(segments[-1])


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
    if _HYPHENATED_RE.fullmatch(word):
        # A compound of words (pre-faulted, multi-threaded) is also one word,
        # its ending stemmed: it meets its spelling without the hyphen (prefault).
        parts.insert(0, _compound_stem(segments))
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
    text = simplified(unicodedata.normalize("NFKC", text or "").lower())
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

    >>> tokenize("开启大页, vm.zone_reclaim_mode=1")  # doctest: +NORMALIZE_WHITESPACE
    ['开启', '大页', 'vmzonereclaimmode', 'vm', 'zonereclaimmode', 'zone', 'reclaim', 'mode',
     'zonereclaim', '1']
    """
    units = _units(text)
    tokens: list[str] = []
    for unit in units:
        tokens.append(unit.primary)
        tokens.extend(unit.parts)
        if len(unit.parts) > 1:
            tokens.extend(_phrases(unit.parts))  # innodb_buffer_pool_size: buffer pool
    tokens.extend(_phrases([u.primary for u in units]))
    return tokens


@functools.cache
def _phrase_keys() -> dict[str, frozenset[tuple[str, ...]]]:
    """First word -> the glossary phrases of several words starting with it."""
    keys: dict[str, set[tuple[str, ...]]] = {}
    for key in _glossary_index():
        if len(key) > 1:
            keys.setdefault(key[0], set()).add(key)
    return {first: frozenset(group) for first, group in keys.items()}


def phrase_token(words: tuple[str, ...]) -> str:
    """The one token of a glossary phrase of several words (buffer pool ->
    ``bufferpool``, the token of ``buffer-pool`` and ``buffer_pool`` too)."""
    return "".join(words)


def _phrases(words) -> list[str]:
    """The tokens of the glossary phrases of several words found, words
    adjacent, in ``words``: a phrase in a text is indexed as one term as well,
    so a query phrase matches the phrase, not its words scattered over a case."""
    keys = _phrase_keys()
    found = []
    for i, word in enumerate(words):
        for key in keys.get(word, ()):
            if tuple(words[i : i + len(key)]) == key:
                found.append(phrase_token(key))
    return found


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
    glued = _glued_pieces(unit.surface)
    if glued and glued not in alts:
        # A name glued to its number (kunpeng920): the name and the number.
        alts.append(glued)
        if fallbacks is not None:
            fallbacks[glued] = unit.primary
    if fallbacks is not None and len(alts) > 1 and alts[-1] not in fallbacks:
        fallbacks[alts[-1]] = unit.primary
    return alts


_GLUED_RE = re.compile(r"[a-z]{2,}|[0-9]+")
_GLUED_WORD_RE = re.compile(r"[a-z][0-9]|[0-9][a-z]")


def _glued_pieces(word: str) -> tuple[str, ...]:
    """A name glued to a number (``kunpeng920``, ``mariadb10.4``, ``432gb``)
    as its words and numbers (``kunpeng 920``), each word stemmed: how the
    cases write them. Only a query's fallback (:func:`_drop_fallbacks`): a
    word the index knows whole (``cpu0``, ``l3``) means itself. Empty for a
    word without one; single letters are left out (``l3`` is no ``l`` and ``3``)."""
    if not _GLUED_WORD_RE.search(word):
        return ()
    pieces = tuple(_stem(p) for p in _GLUED_RE.findall(word) if p not in _STOP)
    return pieces if len(pieces) > 1 else ()


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
            query.groups.append(_unit_alternatives(units[i], query.fallbacks))
            query.labels.append(units[i].surface)
            i += 1
    return query


# --- index maintenance ----------------------------------------------------------------

# BM25 with field weights. A term's frequency in a case version is the sum of
# its occurrences weighted by field (a word of the title counts as three of
# the rest, one of the symptom or cause as one and a half), saturated by K1
# and normalised by the version's length: a short case that names a term
# twice outranks a long one that names it twice in passing. The pivot of the
# length normalisation is a constant, a typical case write-up, not the
# collection's average: then a version's weights never change when other
# cases are saved, and each is computed once, at save time.
K1 = 1.2
B = 0.75
PIVOT_LENGTH = 400  # tokens
FIELD_WEIGHTS = (3.0, 1.5, 1.0)  # title, symptom + cause, the rest


# Where a term occurs in a case version: a bit per field, kept with its
# posting (``Posting.fields``), so a hit's :class:`Why` is read off the index
# instead of re-reading and re-tokenising its texts. "measures" are the
# resolution steps and the metrics measured; "other" the environment columns
# (hypervisor, CPU, database, platform) and the references.
WHERE = ("title", "symptom", "cause", "resolution", "environment", "measures", "tags", "rules", "other")
WHERE_BIT = {name: 1 << n for n, name in enumerate(WHERE)}
_MAIN = ("symptom", "cause")  # ranked with their own field weight (FIELD_WEIGHTS)


@dataclass(frozen=True)
class IndexFields:
    """The tokens of a case version by ranking field (space-separated), and
    where each term occurs (``WHERE_BIT`` flags)."""

    title: str
    main: str  # symptom and cause
    rest: str  # resolution, environment, tags, rules, measures, references
    where: dict[str, int] = field(default_factory=dict, compare=False)

    @property
    def body(self) -> str:
        return f"{self.main} {self.rest}".strip()


def index_fields(texts: dict[str, str]) -> IndexFields:
    """Tokenise the texts of a case version by field (names of ``WHERE``)."""
    tokens = {name: tokenize(texts.get(name, "")) for name in WHERE}
    where: dict[str, int] = {}
    for name, terms in tokens.items():
        bit = WHERE_BIT[name]
        for term in terms:
            where[term] = where.get(term, 0) | bit
    rest = [t for name in WHERE if name != "title" and name not in _MAIN for t in tokens[name]]
    return IndexFields(
        " ".join(tokens["title"]), " ".join(t for name in _MAIN for t in tokens[name]), " ".join(rest), where
    )


def case_index_fields(case) -> IndexFields:
    """The tokens of a case version, as stored in the index."""
    texts = {
        "title": case.title,
        "symptom": case.symptom,
        "cause": case.cause,
        "resolution": case.resolution_summary,
        "environment": case.environment_notes,
        "rules": " ".join(case.signature_rules),
    }
    other = [case.hypervisor, case.cpu_model, case.database, case.database_version]
    other.append(case.get_platform_display())
    if case.pk:
        texts["tags"] = " ".join(t.name for t in case.tags.all())
        measures = [
            f"{step.measure.slug} {step.measure.title_for(case.language)} {step.outcome}"
            for step in case.steps.select_related("measure")
        ]
        measures += [f"{metric.name} {metric.note}" for metric in case.metrics.all()]
        texts["measures"] = "\n".join(measures)
        other += [f"{ref.key} {ref.title}" for ref in case.references.all()]
    texts["other"] = "\n".join(other)
    return index_fields(texts)


def impacts(fields: IndexFields) -> dict[str, float]:
    """Each term of a case version -> its BM25 weight there (without the IDF,
    which is the query's): ``tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / PIVOT_LENGTH))``."""
    tf: dict[str, float] = {}
    length = 0
    for weight, text in zip(FIELD_WEIGHTS, (fields.title, fields.main, fields.rest), strict=True):
        tokens = text.split()
        length += len(tokens)
        for token in tokens:
            tf[token] = tf.get(token, 0.0) + weight
    norm = K1 * (1 - B + B * length / PIVOT_LENGTH)
    return {t: round(f * (K1 + 1) / (f + norm), 5) for t, f in tf.items()}


def write_index(case_id: int, state: str, fields: IndexFields) -> None:
    """Replace the postings of one case version."""

    delete_index(case_id)
    Posting.objects.bulk_create(
        Posting(case_id=case_id, term=term, state=state, impact=impact, fields=fields.where.get(term, 0))
        for term, impact in impacts(fields).items()
    )


def delete_index(case_id: int) -> None:

    Posting.objects.filter(case_id=case_id).delete()


def update_term_stats(old_tokens: set[str], new_tokens: set[str]) -> None:
    """Keep per-term document counts in step with one case version."""

    removed = old_tokens - new_tokens
    if removed:
        TermStat.objects.filter(term__in=removed).update(ndoc=F("ndoc") - 1)
    added = new_tokens - old_tokens
    if added:
        existing = set(TermStat.objects.filter(term__in=added).values_list("term", flat=True))
        TermStat.objects.filter(term__in=existing).update(ndoc=F("ndoc") + 1)
        TermStat.objects.bulk_create(
            [TermStat(term=t, ndoc=1) for t in added - existing], ignore_conflicts=True
        )


def rebuild_term_stats() -> None:
    """Recount every term from the postings."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM kb_termstat")
        cursor.execute(
            "INSERT INTO kb_termstat(term, ndoc) SELECT term, count(*) FROM kb_posting GROUP BY term"
        )


# --- searching ----------------------------------------------------------------------------

# A search answers one hit per case (the reader's language first). Cases
# holding only some of the query words are ranked too, by how much of the
# query they cover (``_Scorer``); when fewer than THIN cases hold every word,
# the result says so (``Results.relaxed``) and counts the cases holding any.
THIN = 3
COUNT_CAP = 1000


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
    reuse_count: int = 0  # "this case helped" marks of the case (``kb.services.reuse_counts``)


@dataclass
class Results:
    query: Query
    hits: list[Hit]
    total: int  # matching cases (not language versions)
    total_capped: bool
    page: int
    pages: int
    relaxed: bool = False  # fewer than THIN cases have every word: ``total`` counts those with any
    suggestion: str = ""  # the query with unknown words respelled from the index vocabulary
    corrections: dict[str, str] = field(default_factory=dict)  # typed word -> respelled word
    exact: bool = True  # the order is exact (False: the search stopped at MAX_DEPTH or COMPLETE_LIMIT)

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


def correct_term(term: str, *, identifier: bool = False, filters: dict | None = None) -> str | None:
    """The indexed term closest to an unknown ``term`` (fewest typing edits,
    :func:`edit_distance`, then the most cases), or None. Chinese words and
    short tokens are not respelled. An ``identifier`` (``host-passthru``)
    nothing is near may be typed short: the most common term it begins,
    give or take the same typos, completes it. With ``filters`` (those of the
    search, narrowed to what the reader may read) only a term found in a case
    they match is offered: "Did you mean" never spells out a word of a case
    the reader may not see."""
    edits = _max_edits(term)
    if not edits or re.search(rf"[{_CJK}]", term) or term.isdigit():
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
        if case.pk in shown:
            where, tag_names = shown[case.pk]
            why = explain(case, query, filters, where=where, tags=_tags_held(query, tag_names, where))
        else:  # not foreseen as shown by _versions: looked up
            why = explain(case, query, filters)
        snippet = highlight(case, query, fields=why.fields)
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


# The columns a hit reads (the API, the results page, explain and the
# snippet); the others are deferred (loaded on first use).
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
    )


# --- snippets -------------------------------------------------------------------------------


def _preview(text: str, size: int = 220) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= size else text[:size].rstrip() + "…"


_WORD_RE = re.compile(rf"[{_CJK}]+|[A-Za-z0-9_]+(?:[.:/\-$][A-Za-z0-9_]+)*")


def _marks(text: str, query: Query, *, within: int | None = None) -> list[tuple[int, int]]:
    """Spans of ``text`` that hold a query term: Latin words whose token (stem,
    identifier or part) is a term, Chinese terms where they occur. Stop words
    are never terms, so never marked. ``within``: only the spans that start
    less than this many characters after the first one."""
    memo = query.word_terms()
    terms = query._term_set()
    phrase_words = query.phrase_words()
    cjk_terms = sorted(query.cjk_terms(), key=len, reverse=True)
    cjk_re = re.compile("|".join(re.escape(t) for t in cjk_terms)) if cjk_terms else None
    # Words in order, each distinct one looked at once in a query, until the
    # window (``within``) after the first mark is full: the rest is never looked at.
    seen = query.marked_words()
    spans: list[tuple[int, int]] = []
    for m in _WORD_RE.finditer(text):
        if within is not None and spans and m.start() >= spans[0][0] + within:
            break
        word = m.group(0)
        hit = seen.get(word)
        if hit is None:
            if _CJK_START_RE.match(word):
                hit = bool(cjk_re and cjk_re.search(simplified(word)))
            else:
                key = (word if word.isascii() else unicodedata.normalize("NFKC", word)).lower()
                unit = _word_units(key)
                if unit is None:
                    hit = False
                elif unit.primary in terms or unit.primary in phrase_words:
                    hit = True
                elif not unit.parts:
                    hit = False  # a plain word: its one token is not a term
                else:
                    got = memo.get(key)
                    hit = bool(got if got is not None else _terms_of(key, query, memo, terms))
            seen[word] = hit
        if not hit:
            continue
        if cjk_re and _CJK_START_RE.match(word):
            # simplified() keeps the length: the spans are the written word's.
            found = cjk_re.finditer(simplified(word))
            spans.extend((m.start() + c.start(), m.start() + c.end()) for c in found)
        else:
            spans.append((m.start(), m.end()))
    return spans


def _marked(text: str, spans: list[tuple[int, int]]) -> str:
    out: list[str] = []
    pos = 0
    for start, end in spans:
        out.append(escape(text[pos:start]))
        out.append(f"<mark>{escape(text[start:end])}</mark>")
        pos = end
    out.append(escape(text[pos:]))
    return "".join(out)


_SNIPPET_FIELDS = ("symptom", "cause", "resolution", "environment")


def highlight(case, query: Query, *, size: int = 240, fields: list[str] | None = None) -> SafeString:
    """An HTML snippet of the case around the first match, matches in <mark>.
    ``fields``: the fields known to hold query words (``Why.fields``), so the
    others are not read.

    Text is escaped piece by piece and only our own <mark> tags are added, so
    case text can never inject markup."""
    attrs = dict(_FIELDS)
    names = [f for f in _SNIPPET_FIELDS if fields is None or f in fields]
    for candidate in (getattr(case, attrs[name]) for name in names):
        text = " ".join((candidate or "").split())
        spans = _marks(text, query, within=size)
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
