"""Undo what pasting does to command output, before a transcript is split.

Engineers paste outputs into e-mails, tickets, chats and wikis, and each tool
mangles them its own way::

    > [root@db1 ~]# numactl -H             e-mail quoting ("> ", ">> ", "> > ")
    >     available: 2 nodes (0-1)         uniform indentation (spaces or tabs)
    2024-05-01 10:00:01 [root@db1 ~]# ...  terminal-logger timestamps (script, tmux, PuTTY)
    ESC[01;32mroot@db1ESC[0m:~#            ANSI colour codes, CRLF, carriage returns
    {code:bash} ... {code}                 Jira; ``` and ~~~ fences (Markdown) are kept
    <pre><code>available: 2 nodes ...      HTML <pre>/<code>/<br>, &lt; &gt; &amp; &#39;
    node 0 cpus: 0 2 4 ... 46              a CPU list or a Flags: line wrapped at a
    48 50 52 ...                           fixed width (joined back when unambiguous)

plus non-breaking, full-width and zero-width spaces from chat tools.

:func:`normalise` returns the cleaned lines and, for each, the span of ORIGINAL
lines it comes from, so that evidence and the reading record still point at
the uploaded text. Wrapper lines (``{code}``, ``<pre>``) become Markdown fences,
which the splitter already understands. Everything here is one linear pass of
precompiled patterns with cheap guards, so hostile pastes (a 50 MB line, a
million quote markers, an escape sequence that never ends) stay linear.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

__all__ = ["Normalised", "normalise"]

FENCE = "```"

# CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \), and two-byte escapes.
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\n]{0,4096}(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# no-break, en/em/thin, narrow no-break, ideographic (full-width) spaces -> " "
_WIDE_SPACE = re.compile("[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")
# zero-width spaces and joiners, BOM -> ""
_ZERO_WIDTH = re.compile("[\u200b-\u200d\u2060\ufeff]")
# possessive: a million nested markers must not grow the regex engine's
# backtracking stack (it would hold ~100 bytes per marker)
_QUOTE = re.compile(r"^[ \t]*+(?:>[ \t]?+)++", re.M)
_QUOTED = re.compile(r"^[ \t]*>", re.M)
# Existence checks scan the whole paste, so each has a form that starts with
# a literal newline (the regex engine then skips to newlines at C speed, ten
# times faster than trying "^" at every position); the first line is matched
# on its own (see _line_starts).
# a paragraph that starts indented (after a blank line or a fence; the top is checked apart)
_INDENTED_PARAGRAPH = re.compile(
    r"\n[ \t]*(?:(?:```|~~~|\{code|\{noformat|</?pre|</code)[^\n]*)?\n[ \t>]*[ \t]+\S",
    re.I,
)
_WRAPPABLE = re.compile(r"[ \t>]{0,64}(?:node \d+ cpus:|NUMA node\d+ CPU|Flags:)")
_WRAPPABLE_NEXT = re.compile(r"\n" + _WRAPPABLE.pattern)
_QUOTED_NEXT = re.compile(r"\n[ \t]*>")
_STAMP_NEXT = re.compile(r"\n[ \t]*(?:\[\d{4}-|\d{4}-\d\d-\d\d[ T]\d|\[\d\d:\d\d:)")
_FENCE_LINE = re.compile(r"^\s*(?:```|~~~|\{code|\{noformat|<pre|</pre|</code)", re.I)
# Terminal loggers: "2024-05-01 10:00:01 ", "[2024-05-01 10:00:01] ", "[10:00:01] ",
# tmux/ts "May 01 10:00:01 " is a syslog line shape as well, so it is not stripped.
_STAMP = re.compile(
    r"^[ \t]*(?:\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?\]"
    r"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?"
    r"|\[\d\d:\d\d:\d\d(?:[.,]\d{1,9})?\])(?: |$)",
    re.M,
)
_PUTTY_HEADER = re.compile(r"^=~=~=~=~=~=~=~=~=~=~=~= PuTTY log [^\n]*=~=~=~=~=~=~=~=~=~=~=~=[ \t]*$", re.M)
_JIRA = re.compile(r"\{(?:code|noformat)(?::[^}\n]{0,200})?\}", re.I)
_HTML_MODE = re.compile(r"<(?:pre|br|code|p|div)\b[^>\n]{0,200}>", re.I)
_HTML_OPEN = re.compile(r"^\s*+(?:<(?:pre|code)\b[^>]{0,200}>\s*+)++", re.I)
_HTML_CLOSE = re.compile(r"(?:\s*</(?:pre|code)\s*>){1,8}\s*$", re.I)
_HTML_BR = re.compile(r"<br\s*/?>", re.I)
_HTML_WRAP = re.compile(r"</?(?:p|div|span|code|b|strong|i|em|tt|font)\b[^>]{0,200}>", re.I)
_ENTITY = re.compile(r"&(?:[A-Za-z]{2,8}|#\d{1,7}|#[xX][0-9A-Fa-f]{1,6});")
_PROMPTISH = re.compile(
    r"^(?:\[[\w.\-]+@[^\]\s]+[^\]]*\]\s*[#$%]|[\w.\-]+@[\w.\-]+:\S*\s?[#$]|\$ |# |mysql>|MariaDB \[)"
)
# wrapped lines that are joined back: a CPU list, lscpu's "NUMA nodeN CPU(s):", "Flags:"
_NODE_CPUS = re.compile(r"^node \d+ cpus:")
_NUMA_CPUS = re.compile(r"^NUMA node\d+ CPU\(s\):")
_FLAGS = re.compile(r"^Flags:\s")
_INTS = re.compile(r"^\s*\d+(?: +\d+)*\s*$")
_CPULIST = re.compile(r"^\s*\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*,?\s*$")
_FLAG_WORDS = re.compile(r"^\s*[a-z0-9_]+(?: +[a-z0-9_]+)*\s*$")
# short words of English prose, never flags or table headers (also used by the splitter)
STOPWORDS = frozenset(
    {"the", "a", "an", "of", "to", "and", "or", "is", "are", "was", "be"}
    | {"in", "for", "with", "on", "that", "this", "it", "as", "by", "from"}
)
WRAP_MIN_WIDTH = 60  # a Flags: line shorter than this was not wrapped by a terminal


@dataclass
class Normalised:
    lines: list[str]  # the cleaned text, one entry per line
    first: list[int]  # 0-based original line of each cleaned line
    last: list[int]  # 0-based last original line it covers (> first after a join)
    original_lines: int
    notes: list[str] = field(default_factory=list)
    # True when line k is original line k (nothing joined or split)
    identity: bool = False

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def _line_starts(first: re.Pattern[str], following: re.Pattern[str], text: str) -> bool:
    """Does any line of ``text`` start like ``first`` (``following`` is the
    same test after a newline)?"""
    return first.match(text) is not None or following.search(text) is not None


def _redraw(line: str) -> str:
    """A terminal redraws over a line at each carriage return; the last
    non-empty write is what it showed."""
    parts = [p for p in line.split("\r") if p.strip()]
    return parts[-1] if parts else ""


def _stamped(lines: list[str]) -> bool:
    """Are the lines stamped by a terminal logger? A logger stamps every line it
    writes, prompts and empty lines included; a log file (MariaDB's error log
    starts each line with the same shape) has neither, so it keeps its times."""
    stamped = evidence = nonblank = 0
    for line in lines:
        if not line.strip():
            continue
        nonblank += 1
        m = _STAMP.match(line)
        if not m:
            continue
        stamped += 1
        rest = line[m.end() :]
        if not rest.strip() or _PROMPTISH.match(rest):
            evidence += 1
    return evidence > 0 and stamped * 2 >= nonblank


def _html_lines(line: str, in_pre: bool) -> tuple[list[str], bool]:
    """One HTML line -> cleaned lines (``<pre>`` becomes a fence)."""
    out: list[str] = []
    m = _HTML_OPEN.match(line)
    if m and re.search(r"<pre\b", m.group(0), re.I):
        out.append(FENCE)
        in_pre = True
        # The indentation before the tag stays: the lines after it carry the
        # same (an indented ticket), and dedenting must see it on all of them.
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        line = indent + line[m.end() :]
        if not line.strip():
            return out, in_pre
    close = _HTML_CLOSE.search(line) if "</" in line else None
    closing = bool(close and re.search(r"</pre", close.group(0), re.I))
    if close:
        line = line[: close.start()]
    pieces = _HTML_BR.split(line) if "<" in line else [line]
    if len(pieces) > 1 and not pieces[-1].strip():
        pieces.pop()  # "text<br>" then a newline: one line break, not two
    for piece in pieces:
        if "<" in piece:
            piece = _HTML_WRAP.sub("", piece)
        if "&" in piece:
            piece = html.unescape(piece)
        out.append(piece)
    if closing:
        if out and not out[-1].strip():
            out.pop()
        out.append(FENCE)
        in_pre = False
    return out, in_pre


def _jira_lines(line: str) -> list[str]:
    """``{code}`` / ``{noformat}`` markers -> fence lines, content kept."""
    out: list[str] = []
    pos = 0
    for m in _JIRA.finditer(line):
        before = line[pos : m.start()]
        if before.strip():
            out.append(before)
        out.append(FENCE)
        pos = m.end()
    after = line[pos:]
    if after.strip():
        out.append(after)
    return out or [FENCE]


def _boundary(line: str) -> bool:
    return not line.strip() or _FENCE_LINE.match(line) is not None


def _dedent(lines: list[str]) -> None:
    """Remove the leading whitespace shared by every line of a paragraph (in
    place). A paragraph is a run of indented lines between blank lines or
    fences: a table whose rows alone are indented (numactl's distances,
    dmidecode's tab-indented fields) keeps its shape."""
    n = len(lines)
    i = 0
    while i < n:
        line = lines[i]
        if line[:1] not in (" ", "\t") or not line.strip() or (i > 0 and not _boundary(lines[i - 1])):
            i += 1
            continue
        j = i
        prefix: str | None = None
        while j < n and lines[j][:1] in (" ", "\t") and lines[j].strip():
            cur = lines[j]
            lead = cur[: len(cur) - len(cur.lstrip(" \t"))]
            if prefix is None:
                prefix = lead
            elif not lead.startswith(prefix):
                size = 0
                for x, y in zip(prefix, lead, strict=False):
                    if x != y:
                        break
                    size += 1
                prefix = prefix[:size]
            j += 1
        if prefix and (j == n or _boundary(lines[j])):
            cut = len(prefix)
            for k in range(i, j):
                lines[k] = lines[k][cut:]
        i = max(j, i + 1)


def _joins(lines: list[str], first: list[int], last: list[int]) -> tuple[list[str], list[int], list[int]]:
    """Join lines a terminal wrapped at a fixed width, where the join is
    unambiguous: integers after ``node N cpus:``, a CPU list after lscpu's
    ``NUMA nodeN CPU(s):`` ending in a comma, flag words after a long
    ``Flags:`` line."""
    heads = ("node ", "NUMA ", "Flags")
    if not any(line[:5] in heads for line in lines):
        return lines, first, last
    drop: set[int] = set()
    n = len(lines)
    i = 0
    while i < n:
        prev = lines[i]
        head = prev[:5]
        if head not in heads:
            i += 1
            continue
        j = i + 1
        while j < n and lines[j].strip() and len(prev) < 1_000_000:
            line = lines[j]
            if head == "node " and _NODE_CPUS.match(prev) and _INTS.match(line):
                prev = f"{prev.rstrip()} {line.strip()}"
            elif (
                head == "NUMA "
                and _NUMA_CPUS.match(prev)
                and prev.rstrip().endswith(",")
                and _CPULIST.match(line)
            ):
                prev = f"{prev.rstrip()}{line.strip()}"
            elif (
                head == "Flags"
                and _FLAGS.match(prev)
                and len(lines[j - 1]) >= WRAP_MIN_WIDTH
                and _FLAG_WORDS.match(line)
                and not any(w in STOPWORDS for w in line.split())
            ):
                prev = f"{prev.rstrip()} {line.strip()}"
            else:
                break
            drop.add(j)
            last[i] = last[j]
            j += 1
        lines[i] = prev
        i = j
    if not drop:
        return lines, first, last
    keep = [k for k in range(n) if k not in drop]
    return [lines[k] for k in keep], [first[k] for k in keep], [last[k] for k in keep]


def normalise(text: str) -> Normalised:
    """Cleaned lines of a pasted ``text`` with their original line spans.

    >>> n = normalise("> node 0 cpus: 0 2\\r\\n> 4 6\\r\\n")
    >>> n.lines, n.first, n.last
    (['node 0 cpus: 0 2 4 6', ''], [0, 2], [1, 2])
    """
    count = text.count("\n") + 1
    notes: list[str] = []
    # whole-text passes first (C speed), each only when its marker is present
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        if "\r" in text:
            text = "\n".join(_redraw(line) if "\r" in line else line for line in text.split("\n"))
    if "\x1b" in text or "\x9b" in text:
        text = _ANSI.sub("", text)
    if not text.isascii():
        text = _ZERO_WIDTH.sub("", _WIDE_SPACE.sub(" ", text))
        if "\x9b" in text:
            text = _ANSI.sub("", text)
    if _CONTROL.search(text):
        text = _CONTROL.sub("", text)
    if _line_starts(_QUOTED, _QUOTED_NEXT, text):
        # e-mail quoting, line by line: replies mix quoted and unquoted lines
        text, quoted = _QUOTE.subn("", text)
        notes.append(f"{quoted} e-mail quoted lines unquoted")
    if "=~=~" in text:
        text = _PUTTY_HEADER.sub("", text)
    lines = text.split("\n")
    first = list(range(count))
    last = list(range(count))
    html_mode = _HTML_MODE.search(text) is not None
    jira = "{code" in text or "{noformat" in text or "{CODE" in text or "{NOFORMAT" in text
    if html_mode or jira:
        new_l: list[str] = []
        new_f: list[int] = []
        new_t: list[int] = []
        in_pre = False
        for i, line in enumerate(lines):
            pieces = [line]
            if jira and "{" in line and _JIRA.search(line):
                pieces = _jira_lines(line)
            elif html_mode and ("<" in line or "&" in line):
                pieces, in_pre = _html_lines(line, in_pre)
            for piece in pieces:
                new_l.append(piece)
                new_f.append(first[i])
                new_t.append(last[i])
        lines, first, last = new_l, new_f, new_t
    # after the wrappers: "<pre><code>2024-05-01 10:00:01 [root@h ~]# ..." is stamped too
    if _line_starts(_STAMP, _STAMP_NEXT, text) and _stamped(lines):
        for i, line in enumerate(lines):
            m = _STAMP.match(line)
            if m:
                lines[i] = line[m.end() :]
        notes.append("terminal-logger timestamps removed")
    if text[:1] in (" ", "\t") or _INDENTED_PARAGRAPH.search(text):
        _dedent(lines)
    if _line_starts(_WRAPPABLE, _WRAPPABLE_NEXT, text):
        lines, first, last = _joins(lines, first, last)
    identity = len(lines) == count and first[-1] == count - 1 and first == last
    return Normalised(
        lines=lines, first=first, last=last, original_lines=count, notes=notes, identity=identity
    )
