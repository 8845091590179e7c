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
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]{0,4096}(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]"
)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f\x1b]")
_SPACES = {
    0x00A0: " ",  # no-break space
    0x1680: " ",
    0x2000: " ",
    0x2001: " ",
    0x2002: " ",
    0x2003: " ",
    0x2004: " ",
    0x2005: " ",
    0x2006: " ",
    0x2007: " ",
    0x2008: " ",
    0x2009: " ",
    0x200A: " ",
    0x202F: " ",  # narrow no-break space
    0x205F: " ",
    0x3000: " ",  # ideographic (full-width) space
    0x200B: "",  # zero-width space
    0x200C: "",
    0x200D: "",
    0x2060: "",
    0xFEFF: "",  # BOM / zero-width no-break space
}
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+")
# Terminal loggers: "2024-05-01 10:00:01 ", "[2024-05-01 10:00:01] ", "[10:00:01] ",
# tmux/ts "May 01 10:00:01 " is a syslog line shape as well, so it is not stripped.
_STAMP = re.compile(
    r"^(?:\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?\]"
    r"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?"
    r"|\[\d\d:\d\d:\d\d(?:[.,]\d{1,9})?\])(?: |$)"
)
_PUTTY_HEADER = re.compile(r"^=~=~=~=~=~=~=~=~=~=~=~= PuTTY log .*=~=~=~=~=~=~=~=~=~=~=~=\s*$")
_JIRA = re.compile(r"\{(?:code|noformat)(?::[^}\n]{0,200})?\}", re.I)
_HTML_MODE = re.compile(r"<(?:pre|br|code|p|div)\b[^>\n]{0,200}>", re.I)
_HTML_OPEN = re.compile(r"^\s*(?:<(?:pre|code)\b[^>]{0,200}>\s*)+", re.I)
_HTML_CLOSE = re.compile(r"(?:\s*</(?:pre|code)\s*>)+\s*$", re.I)
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

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def _clean_line(line: str) -> str:
    if line.endswith("\r"):
        line = line.rstrip("\r")
    if "\r" in line:
        # a terminal redraws over the line; the last non-empty write is what it shows
        parts = [p for p in line.split("\r") if p.strip()]
        line = parts[-1] if parts else ""
    if "\x1b" in line or "\x9b" in line:
        line = _ANSI.sub("", line)
    if not line.isascii():
        line = line.translate(_SPACES)
        if "\x9b" in line:
            line = _ANSI.sub("", line)
    if "\x1b" in line or "\x7f" in line or "\x08" in line:
        line = _CONTROL.sub("", line)
    return line


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
        line = line[m.end() :]
        if not line.strip():
            return out, in_pre
    close = _HTML_CLOSE.search(line) if "</" in line else None
    closing = bool(close and re.search(r"</pre", close.group(0), re.I))
    if close:
        line = line[: close.start()]
    pieces = _HTML_BR.split(line) if "<" in line else [line]
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


def _dedent(lines: list[str]) -> None:
    """Remove the leading whitespace shared by every line of a paragraph (in place)."""
    n = len(lines)
    i = 0
    while i < n:
        if not lines[i].strip():
            i += 1
            continue
        j = i
        indented = True
        while j < n and lines[j].strip():
            if indented and lines[j][:1] not in (" ", "\t"):
                indented = False
            j += 1
        if indented:
            prefix = None
            for k in range(i, j):
                line = lines[k]
                lead = line[: len(line) - len(line.lstrip(" \t"))]
                if prefix is None:
                    prefix = lead
                elif not lead.startswith(prefix):
                    size = 0
                    for a, b in zip(prefix, lead, strict=False):
                        if a != b:
                            break
                        size += 1
                    prefix = prefix[:size]
                if not prefix:
                    break
            if prefix:
                cut = len(prefix)
                for k in range(i, j):
                    lines[k] = lines[k][cut:]
        i = j


def _joins(lines: list[str], first: list[int], last: list[int]) -> tuple[list[str], list[int], list[int]]:
    """Join lines a terminal wrapped at a fixed width, where the join is
    unambiguous: integers after ``node N cpus:``, a CPU list after lscpu's
    ``NUMA nodeN CPU(s):``, flag words after a long ``Flags:`` line."""
    out_l: list[str] = []
    out_f: list[int] = []
    out_t: list[int] = []
    for line, a, b in zip(lines, first, last, strict=True):
        if out_l and line.strip():
            prev = out_l[-1]
            head = prev[:5]
            joined = None
            if head == "node " and _NODE_CPUS.match(prev) and _INTS.match(line):
                joined = f"{prev.rstrip()} {line.strip()}"
            elif (
                head == "NUMA "
                and _NUMA_CPUS.match(prev)
                and prev.rstrip().endswith(",")
                and _CPULIST.match(line)
            ):
                joined = f"{prev.rstrip()}{line.strip()}"
            elif (
                head == "Flags"
                and _FLAGS.match(prev)
                and len(prev) >= WRAP_MIN_WIDTH
                and _FLAG_WORDS.match(line)
                and not any(w in STOPWORDS for w in line.split())
            ):
                joined = f"{prev.rstrip()} {line.strip()}"
            if joined is not None and len(joined) < 1_000_000:
                out_l[-1] = joined
                out_t[-1] = b
                continue
        out_l.append(line)
        out_f.append(a)
        out_t.append(b)
    return out_l, out_f, out_t


def normalise(text: str) -> Normalised:
    """Cleaned lines of a pasted ``text`` with their original line spans.

    >>> n = normalise("> node 0 cpus: 0 2\\r\\n> 4 6\\r\\n")
    >>> n.lines, n.first, n.last
    (['node 0 cpus: 0 2 4 6', ''], [0, 2], [1, 2])
    """
    raw = text.split("\n")
    count = len(raw)
    lines = [_clean_line(line) for line in raw]
    del raw
    notes: list[str] = []
    # e-mail quoting, line by line: replies mix quoted and unquoted lines
    quoted = 0
    for i, line in enumerate(lines):
        if line[:1] in (">", " ", "\t") and (line[:1] == ">" or line.lstrip(" \t")[:1] == ">"):
            m = _QUOTE.match(line)
            if m:
                lines[i] = line[m.end() :]
                quoted += 1
    if quoted:
        notes.append(f"{quoted} e-mail quoted lines unquoted")
    if _stamped(lines):
        for i, line in enumerate(lines):
            m = _STAMP.match(line)
            if m:
                lines[i] = line[m.end() :]
        notes.append("terminal-logger timestamps removed")
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
            if _PUTTY_HEADER.match(line):
                pieces = [""]
            if jira and "{" in line and _JIRA.search(line):
                pieces = _jira_lines(line)
            elif html_mode and ("<" in line or "&" in line):
                pieces, in_pre = _html_lines(line, in_pre)
            for piece in pieces:
                new_l.append(piece)
                new_f.append(first[i])
                new_t.append(last[i])
        lines, first, last = new_l, new_f, new_t
    else:
        for i, line in enumerate(lines):
            if line[:4] == "=~=~" and _PUTTY_HEADER.match(line):
                lines[i] = ""
    _dedent(lines)
    lines, first, last = _joins(lines, first, last)
    return Normalised(lines=lines, first=first, last=last, original_lines=count, notes=notes)
