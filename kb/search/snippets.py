"""Snippets: previews and highlighted excerpts of a hit (:func:`highlight`)."""

from __future__ import annotations

import re
import unicodedata

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from kb.search.explaining import _FIELDS, _terms_of
from kb.search.queries import Query
from kb.search.tokenizer import _CJK, _CJK_START_RE, _word_units, simplified

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


def highlight(
    case, query: Query, *, size: int = 240, fields: list[str] | None = None, title: bool = False
) -> SafeString:
    """An HTML snippet of the case around the first match, matches in <mark>.
    ``fields``: the fields known to hold query words (``Why.fields``), so the
    others are not read. ``title``: the title is a field of the snippet too
    (the version the snippet is read from is not the one whose title is shown).

    Text is escaped piece by piece and only our own <mark> tags are added, so
    case text can never inject markup."""
    attrs = dict(_FIELDS)
    names = [f for f in (("title",) if title else ()) + _SNIPPET_FIELDS if fields is None or f in fields]
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
