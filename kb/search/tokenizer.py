"""The versioned dictionary and glossary, and the one tokenizer of the index and
the query (:func:`tokenize`), with its phrases and storage forms."""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import rjieba
import snowballstemmer
import yaml

from kb.search.lexicon import DICTIONARY_PATH, GLOSSARY_PATH, TRADITIONAL_PATH

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
TOKENIZER_VERSION = "7"


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
    tokens.extend(glued_tokens(text))
    return tokens


# A name and its number (CentOS 6, Kunpeng 920, MariaDB 10.4) or a number and
# its unit (7 GB, 100 ms) written apart: also indexed as the one word a reader
# types for them (centos6, kunpeng920, mariadb104, 7gb, 100ms). Only two words
# standing next to each other: "7 racks ... GB" holds no 7gb.
_NAME_NUMBER_RE = re.compile(
    r"(?<![a-z0-9_.:/$-])([a-z]{2,})[ \t]+([0-9]+(?:\.[0-9]+)*)(?![a-z0-9_]|\.[0-9])"
)
_NUMBER_UNIT_RE = re.compile(
    r"(?<![a-z0-9_.:/$-])([0-9]+(?:\.[0-9]+)?)[ \t]+([a-z]{1,3})(?![a-z0-9_]|[.:/$-][a-z0-9])"
)


def glued_tokens(text: str) -> list[str]:
    """The glued forms of the names and numbers, numbers and units written
    apart in ``text`` (storage forms).

    >>> glued_tokens("Kunpeng 920 hosts, 7 GB of page tables on CentOS 6.5, 2 of 8")
    ['kunpeng920', 'centos65', '7gb']
    """
    text = simplified(unicodedata.normalize("NFKC", text or "")).lower()
    found = [storage_form(a + b) for a, b in _NAME_NUMBER_RE.findall(text) if a not in _STOP]
    found += [storage_form(a + b) for a, b in _NUMBER_UNIT_RE.findall(text) if b not in _STOP]
    return found


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
