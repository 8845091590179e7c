"""Undo what pasting does to command output, before a transcript is split.

Engineers paste outputs into e-mails, tickets, chats and wikis, and each tool
mangles them its own way::

    > [root@db1 ~]# numactl -H             e-mail quoting ("> ", ">> ", "> > ")
    >     available: 2 nodes (0-1)         uniform indentation (spaces or tabs)
    2024-05-01 10:00:01 [root@db1 ~]# ...  terminal-logger timestamps (script, tmux, PuTTY)
    ESC[01;32mroot@db1ESC[0m:~#            ANSI colour codes, CRLF, carriage returns
    {code:bash} ... {code}                 Jira; ``` and ~~~ fences (Markdown) are kept
    db_1         | 2016-12-29T15:17:43Z    docker compose logs' "<service> | " prefixes
    <pre><code>available: 2 nodes ...      HTML <pre>/<code>/<br>, &lt; &gt; &amp; &#39;
    **HugePages_Total:   53342         Markdown bold around unfenced output lines
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

import bisect
import html
import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from collectors import unflatten

__all__ = [
    "LOG_PREFIXES",
    "UNBOLDED",
    "Normalised",
    "line_indexes",
    "lines_holding",
    "normalise",
    "strip_log_prefixes",
]

FENCE = "```"
# the note normalise() leaves when it took Markdown bold markers off output lines
UNBOLDED = "Markdown bold markers removed"
# the note strip_log_prefixes() leaves (with a count before it)
LOG_PREFIXES = "log-prefixed lines unprefixed"
FLATTENED = "outputs flattened onto one line split back into lines"
# what a web page's e-mail protection (Cloudflare's) leaves of "root@db1" in a
# prompt it copied ("[[email protected] ~]#"; its no-break space is plain by then):
# read as "user@host", so the prompt is a prompt again
HIDDEN_ADDRESS = "[email protected]"

# CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \), and two-byte escapes.
_ESCAPES = r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]{0,4096}(?:\x07|\x1b\\)?|[@-Z\\-_])"
_ANSI = re.compile(_ESCAPES + r"|\x9b[0-?]*[ -/]*[@-~]")
# the same without the 8-bit CSI: a pattern that starts with one literal is
# searched for at C speed, ten times faster than an alternation
_ANSI_ESC = re.compile(_ESCAPES)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# no-break, en/em/thin, narrow no-break, ideographic (full-width) spaces -> " "
_WIDE_SPACES = "\u00a0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u202f\u205f\u3000"
# zero-width spaces and joiners, BOM -> ""
_ZERO_WIDTHS = "\u200b\u200c\u200d\u2060\ufeff"
# possessive: a million nested markers must not grow the regex engine's
# backtracking stack (it would hold ~100 bytes per marker)
_QUOTE = re.compile(r"[ \t]*+(?:>[ \t]?+)++")
_QUOTE_NEXT = re.compile(r"\n" + _QUOTE.pattern)
_QUOTED = re.compile(r"^[ \t]*>", re.M)
# a quote marker a web page left mid-line when it joined a wrapped quoted line
# back ("somaxconn >is set to"): words follow it, not a path or a file name
_JOINED_QUOTE = re.compile(r"(?<=[^\s>] )>(?=[a-z]{2,20} [a-z])")
# the same marker found by its literal part first (a search skips to " >" at C
# speed; a pattern that opens with a look-behind is tried at every position)
_JOINED_QUOTE_AT = re.compile(r" >(?=[a-z]{2,20} [a-z])")
_QUOTED_REST_NEXT = re.compile(_QUOTE_NEXT.pattern + r"([^\n]*+)")
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
# a line after a blank or a fence line, indented (where _dedent may start)
_AFTER_BOUNDARY = re.compile(
    r"\n(?:[^\S\n]*|[^\S\n]*(?:```|~~~|\{code|\{noformat|<pre|</pre|</code)[^\n]*)(?=\n[ \t][^\n]*?\S)", re.I
)
# consecutive indented lines that are not blank
_INDENTED_RUN = re.compile(r"(?:[ \t][^\n]*?\S[^\n]*(?:\n|\Z))*")
_BLANK_NEXT = re.compile(r"\n[^\S\n]*(?![^\n])")
_REDRAWN = re.compile(r"^[^\n\r]*\r[^\n]*", re.M)
# Terminal loggers: "2024-05-01 10:00:01 ", "[2024-05-01 10:00:01] ", "[10:00:01] ",
# tmux/ts "May 01 10:00:01 " is a syslog line shape as well, so it is not stripped.
_STAMP = re.compile(
    r"[ \t]*(?:\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?\]"
    r"|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?"
    r"|\[\d\d:\d\d:\d\d(?:[.,]\d{1,9})?\])(?: |$)",
    re.M,  # "$": the end of the line
)
_STAMP_LINE = re.compile(r"\n" + _STAMP.pattern, re.M)
# docker compose logs: "db_1         | " (v1), "db-1  | " (v2) before every line
# possessive: a name never ends in a blank, so backing off its characters finds no
# other match (and costs 64 steps a line on a paste without a compose log)
_COMPOSE = re.compile(r"[A-Za-z0-9][\w.-]{0,63}+[ \t]++\|[ \t]?")
_COMPOSE_NEXT = re.compile(r"\n" + _COMPOSE.pattern)
_COMPOSE_MAX_SERVICES = 16
# Markdown bold opened at a line's start or closed at its end, as GitHub shows an
# unfenced paste whose author bolded a few lines ("**HugePages_Total:   53342",
# "HugePages_Free:    11904**"); the line must hold no other "**"
_BOLD_EDGE = re.compile(r"^[ \t]*\*\*(?=[\w(])|(?<=[\w)%.])\*\*[ \t]*$", re.M)
_MD_FENCE = re.compile(r"^[ \t>]*(?:```|~~~)", re.M)
# Markdown inline code opened at a prompt on a line of its own and never closed, or
# closed at the line's end, as an unfenced paste shows it ("`root@xxx:~# lstopo ...",
# "`$ numactl -H`"): the rest of the line is a prompt (_PROMPTISH)
_CODE_TICK = re.compile(r"^[ \t]*`(?!`)", re.M)
_PUTTY_HEADER = re.compile(r"^=~=~=~=~=~=~=~=~=~=~=~= PuTTY log [^\n]*=~=~=~=~=~=~=~=~=~=~=~=[ \t]*$", re.M)
_JIRA = re.compile(r"\{(?:code|noformat)(?::[^}\n]{0,200})?\}", re.I)
_JIRA_MARKERS = ("{code", "{noformat", "{CODE", "{NOFORMAT")  # (the cheap test before _JIRA)
_HTML_MODE = re.compile(r"<(?:pre|br|code|p|div)\b[^>\n]{0,200}>", re.I)
# every tag _html_lines acts on starts like this (a necessary condition only)
_HTML_TAG = re.compile(r"</?(?:pre|code|br|p|div|span|b|strong|i|em|tt|font)\b", re.I)
_AMPERSAND = re.compile("&")
# <pre> and <code> with the blocks a page's theme puts around them ("<div><div><pre><code>")
_HTML_OPEN = re.compile(r"^\s*+(?:<(?:pre|code|div|figure)\b[^>]{0,200}>\s*+)++", re.I)
_HTML_CLOSE = re.compile(r"(?:\s*</(?:pre|code|div|figure)\s*>){1,8}\s*$", re.I)
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
_JOIN_HEAD = re.compile("node |NUMA |Flags")
_JOIN_HEAD_NEXT = re.compile(r"\n(?:node |NUMA |Flags)")
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
    # "\n".join(lines) when normalise had it at hand (the lines must not change)
    joined: str | None = field(default=None, repr=False, compare=False)

    @property
    def text(self) -> str:
        if self.joined is None:
            self.joined = "\n".join(self.lines)
        return self.joined


# Whole-text line finders. A test per line costs a Python call on every line
# of a 5 MB paste; a search of the whole text runs at C speed and leaves only
# the lines it finds (candidates, tested exactly afterwards) to Python.


def _line_starts(first: re.Pattern[str], following: re.Pattern[str], text: str) -> bool:
    """Does any line of ``text`` start like ``first`` (``following`` is the
    same test after a newline)?"""
    return first.match(text) is not None or following.search(text) is not None


def line_indexes(
    first: re.Pattern[str], following: re.Pattern[str], text: str, first_line: str | None = None
) -> list[int]:
    """Indexes of the lines of ``text`` that start like ``first``. ``following``
    is the same pattern after a literal newline (the regex engine skips to
    newlines at C speed); it must not consume the newline that ends its line.
    ``first`` is matched against the first line alone (``first_line`` when
    given: a line of a list may hold a newline of its own).

    >>> line_indexes(re.compile("b"), re.compile(r"\\nb"), "b1\\na\\nb2\\nb3")
    [0, 2, 3]
    """
    if first_line is None:
        end = text.find("\n")
        first_line = text[: end if end >= 0 else len(text)]
    out = [0] if first.match(first_line) else []
    newlines = pos = 0
    count = text.count
    for m in following.finditer(text):
        start = m.start()
        newlines += count("\n", pos, start)
        out.append(newlines + 1)
        pos = start
    return out


def lines_holding(rx: re.Pattern[str], text: str, hint: str | None = None) -> list[int]:
    r"""Indexes of the lines of ``text`` in which ``rx`` finds a match (one
    search per such line; ``rx`` must not match a newline first).

    ``hint`` is a literal that every match contains: only the lines holding it
    are searched. A pattern that opens with a class (``^[ \t]*\*\*``) makes
    the regex engine try every position of the text; ``str.find`` skips to the
    literal at C speed.

    >>> rx = re.compile(r"^[ \t]*\*\*(?=\w)", re.M)
    >>> text = "a ** b\n  **bold\nplain\n**x"
    >>> lines_holding(rx, text), lines_holding(rx, text, hint="**")
    ([1, 3], [1, 3])
    """
    out: list[int] = []
    search, count, find, size = rx.search, text.count, text.find, len(text)
    line = pos = 0  # pos: the start of line number ``line``
    while True:
        if hint is None:
            m = search(text, pos)
            at = m.start() if m is not None else -1
        else:
            at = find(hint, pos)
        if at < 0:
            break
        start = text.rfind("\n", pos, at) + 1 or pos
        line += count("\n", pos, start)
        end = find("\n", at)
        if hint is None or search(text, start, size if end < 0 else end) is not None:
            out.append(line)
        if end < 0:
            break
        pos, line = end + 1, line + 1
    return out


def fence_lines(text: str) -> list[int]:
    r"""Indexes of the lines of ``text`` that open or close a Markdown fence
    (quoted fences included).

    >>> fence_lines("a\n```\nb\n> ~~~\n```")
    [1, 3, 4]
    """
    return sorted({*lines_holding(_MD_FENCE, text, "```"), *lines_holding(_MD_FENCE, text, "~~~")})


def _redraw(line: str) -> str:
    """A terminal redraws over a line at each carriage return; the last
    non-empty write is what it showed."""
    parts = [p for p in line.split("\r") if p.strip()]
    return parts[-1] if parts else ""


def _stamped(lines: list[str], body: str | None) -> list[tuple[int, int]]:
    """``(line, end of the stamp)`` of each line stamped by a terminal logger,
    or ``[]`` when the lines are not a logger's. A logger stamps every line it
    writes, prompts and empty lines included; a log file (MariaDB's error log
    starts each line with the same shape) has neither, so it keeps its times.
    ``body`` is ``"\\n".join(lines)`` (None: not known, every line is tested)."""
    stamps = _stamps_of_lines(lines) if body is None else _stamps_of_body(body)
    if not any(not (rest := lines[i][end:]).strip() or _PROMPTISH.match(rest) for i, end in stamps):
        return []
    return stamps if len(stamps) * 2 >= _nonblank_count(lines, body) else []


def _stamps_of_lines(lines: list[str]) -> list[tuple[int, int]]:
    """``(line, end of the stamp)`` of each of ``lines`` that starts with a logger's stamp."""
    return [(i, m.end()) for i, line in enumerate(lines) if (m := _STAMP.match(line))]


def _stamps_of_body(body: str) -> list[tuple[int, int]]:
    """The same as :func:`_stamps_of_lines`, found by one search of ``body``."""
    stamps: list[tuple[int, int]] = []
    end = body.find("\n")
    if m := _STAMP.match(body, 0, end if end >= 0 else len(body)):
        stamps.append((0, m.end()))
    newlines = pos = 0
    for m in _STAMP_LINE.finditer(body):
        start = m.start()
        newlines += body.count("\n", pos, start)
        pos = start
        stamps.append((newlines + 1, m.end() - start - 1))
    return stamps


def _nonblank_count(lines: list[str], body: str | None) -> int:
    """How many of ``lines`` are not blank (counted in ``body`` at C speed when known)."""
    if body is None:
        return sum(1 for line in lines if line.strip())
    blank = (not lines[0].strip()) + len(_BLANK_NEXT.findall(body))
    return len(lines) - blank


def _compose_prefixed(lines: list[str]) -> list[tuple[int, int]]:
    """``(line, end of the prefix)`` of each line of ``docker compose logs``, or
    ``[]``: at least 3 prefixed lines, at least half of the non-blank ones, from
    a few services (a Markdown table's rows start with different words)."""
    prefixed = [(i, m.end()) for i, line in enumerate(lines) if (m := _COMPOSE.match(line))]
    services = Counter(lines[i][:end].split()[0] for i, end in prefixed)
    if len(prefixed) < 3 or len(prefixed) * 2 < _nonblank_count(lines, None):
        return []
    return prefixed if _services_logging(services) else []


def _services_logging(services: Counter[str]) -> bool:
    """Whether the names before ``|`` (counted) are a few services' logging:
    one-off "word | ..." lines are prose or a table, not a service's log."""
    if len(services) > _COMPOSE_MAX_SERVICES:
        return False
    return len(services) == 1 or min(services.values()) >= 2


def _outside_fences(rx: re.Pattern[str], hint: str, lines: list[str], text: str) -> list[int]:
    """Indexes of the ``lines`` (``text`` joined) in which ``rx`` finds a match,
    but for those inside a Markdown fence (there a marker is what the command printed)."""
    found = lines_holding(rx, text, hint=hint)
    fences = fence_lines(text) if found else []  # (no line to look at: no fence to find)
    # inside a fence: an odd number of fence lines before it
    return [i for i in found if i < len(lines) and not bisect.bisect_right(fences, i) % 2]


def _unbolded(lines: list[str], text: str) -> list[tuple[int, str]]:
    """``(line, line without its Markdown bold markers)`` of each line outside a
    fence that bold opens at its start and/or closes at its end. Inside a fence
    ``**`` is what the command printed, but for a whole line wrapped in it: an
    author marking the line that matters (GitHub shows the markers as typed)::

        vm.overcommit_kbytes = 0
        **vm.overcommit_memory = 1**
    """
    found = lines_holding(_BOLD_EDGE, text, hint="**")
    fences = fence_lines(text) if found else []  # (no line to look at: no fence to find)
    out: list[tuple[int, str]] = []
    for i in (i for i in found if i < len(lines)):
        fenced = bisect.bisect_right(fences, i) % 2  # an odd number of fence lines before it
        body = (_wholly_bold if fenced else _without_bold_edges)(lines[i].strip())
        if body is not None:
            out.append((i, _indent(lines[i]) + body))
    return out


def _wholly_bold(body: str) -> str | None:
    """The stripped line ``body`` inside the one pair of bold markers around all
    of it, or None.

    >>> _wholly_bold("**vm.overcommit_memory = 1**"), _wholly_bold("**a** and **b**")
    ('vm.overcommit_memory = 1', None)
    """
    whole = _without_bold_edges(body)
    return whole if whole is not None and body.startswith("**") and body.endswith("**") else None


def _without_bold_edges(body: str) -> str | None:
    """The stripped line ``body`` without the bold markers that open it and/or
    close it, or None when it holds other ``**`` (or none at its edges).

    >>> _without_bold_edges("**HugePages_Total:   53342"), _without_bold_edges("a ** b")
    ('HugePages_Total:   53342', None)
    """
    count = body.count("**")
    opens = body.startswith("**") and _bold_around(body[2:3], "_(")
    closes = body.endswith("**") and _bold_around(body[-3:-2], "_)%.")
    if count == 1 and (opens or closes):
        return body[2:] if opens else body[:-2]
    if count == 2 and opens and closes and len(body) > 4:
        return body[2:-2]
    return None


def _bold_around(char: str, marks: str) -> bool:
    """Can bold markers stand next to ``char`` (the character inside them, ``""``
    if none): a letter, a digit or one of ``marks``?"""
    return char != "" and (char.isalnum() or char in marks)


def _indent(line: str) -> str:
    """The blanks (spaces and tabs) ``line`` starts with."""
    return line[: len(line) - len(line.lstrip(" \t"))]


def _untick(lines: list[str], text: str) -> list[tuple[int, str]]:
    """``(line, line without its inline-code backticks)`` of each line outside a
    fence that opens inline code at a prompt, with no other backtick but one
    that closes it at the line's end (inside a fence a backtick is what the
    command printed).

    >>> _untick(["`root@xxx:~# lstopo --no-caches", "Machine (220GB total)"], "`root@xxx")
    [(0, 'root@xxx:~# lstopo --no-caches')]
    """
    out: list[tuple[int, str]] = []
    for i in _outside_fences(_CODE_TICK, "`", lines, text):
        body = lines[i].strip()[1:]
        ticks = body.count("`")
        if ticks == 1 and body.endswith("`"):
            body = body[:-1].rstrip()
        elif ticks:
            continue
        if _PROMPTISH.match(body):
            out.append((i, body))
    return out


def _html_lines(line: str) -> list[str]:
    """One HTML line -> cleaned lines (``<pre>`` becomes a fence)."""
    opening, line = _after_pre_open(line)
    if opening and not line.strip():
        return [FENCE]
    closing, line = _before_pre_close(line)
    out = [FENCE] if opening else []
    out += _html_text_lines(line)
    if closing:
        if out and not out[-1].strip():
            out.pop()
        out.append(FENCE)
    return out


def _after_pre_open(line: str) -> tuple[bool, str]:
    """Whether ``line`` opens a ``<pre>`` block, and the line after its opening tags."""
    m = _HTML_OPEN.match(line)
    if not (m and re.search(r"<pre\b", m.group(0), re.I)):
        return False, line
    # The indentation before the tag stays: the lines after it carry the
    # same (an indented ticket), and dedenting must see it on all of them.
    return True, _indent(line) + line[m.end() :]


def _before_pre_close(line: str) -> tuple[bool, str]:
    """Whether ``line`` closes a ``<pre>`` block, and the line before its closing tags."""
    close = _HTML_CLOSE.search(line) if "</" in line else None
    if close is None:
        return False, line
    return re.search(r"</pre", close.group(0), re.I) is not None, line[: close.start()]


def _html_text_lines(line: str) -> list[str]:
    """The lines of an HTML ``line`` cut at its ``<br>``, tags dropped and entities decoded."""
    pieces = _HTML_BR.split(line) if "<" in line else [line]
    if len(pieces) > 1 and not pieces[-1].strip():
        pieces.pop()  # "text<br>" then a newline: one line break, not two
    out: list[str] = []
    for piece in pieces:
        if "<" in piece:
            piece = _HTML_WRAP.sub("", piece)
        out += _unescaped_lines(piece) if "&" in piece else [piece]
    return out


def _unescaped_lines(piece: str) -> list[str]:
    """``piece`` with its HTML entities decoded: a line, or several when it held
    a line break written as an entity (``&#10;``)."""
    piece = html.unescape(piece)
    if "\n" in piece or "\r" in piece:
        return piece.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return [piece]


def _pre_balanced(line: str, pieces: list[str], inside: bool) -> tuple[list[str], bool]:
    """``pieces`` of an HTML ``line`` (:func:`_html_lines`) without the fence of
    a ``</pre>`` that no ``<pre>`` opened (a page or an excerpt cut inside a
    code block: its closing tags are markup, and a fence there would pair with
    the next ``<pre>`` and fence the prose between them); whether a ``<pre>``
    is open after the line.

    >>> _pre_balanced("</code></pre></div></div>", ["```"], False)
    ([''], False)
    >>> _pre_balanced("<pre><code>available: 2 nodes (0-1)", ["```", "available: 2 nodes (0-1)"], False)
    (['```', 'available: 2 nodes (0-1)'], True)
    """
    if FENCE not in pieces:
        return pieces, inside
    opens = bool(_HTML_OPEN.match(line)) and pieces[0] == FENCE
    out = list(pieces)
    for k, piece in enumerate(pieces):
        if piece != FENCE:
            continue
        if k == 0 and opens:
            inside = True
        elif inside:
            inside = False
        else:
            out[k] = ""
    return out, inside


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


def _unwrap(
    lines: list[str], first: list[int], last: list[int], text: str, *, jira: bool, html_mode: bool
) -> tuple[list[str], list[int], list[int], bool]:
    """Jira and HTML wrappers -> fences and plain lines (``text`` is
    ``"\\n".join(lines)``). A line without a marker or an ``&`` stays as it is,
    so only the lines the whole-text searches find are looked at. The last
    value is False when a line now holds a newline (an ``&#10;``)."""
    marked = _wrapper_lines(text, jira=jira, html_mode=html_mode)
    replaced = list(_unwrapped(lines, marked, jira=jira, html_mode=html_mode))
    if not replaced:
        return lines, first, last, True
    clean = not any("\n" in piece for _, pieces in replaced for piece in pieces)
    return (*_spliced(replaced, lines, first, last), clean)


def _wrapper_lines(text: str, *, jira: bool, html_mode: bool) -> list[int]:
    """Indexes of the lines of ``text`` that may hold a Jira or an HTML wrapper (or an entity)."""
    found: set[int] = set()
    if jira:
        found.update(lines_holding(_JIRA, text))
    if html_mode:
        found.update(lines_holding(_HTML_TAG, text))
        found.update(lines_holding(_AMPERSAND, text))
    return sorted(found)


def _unwrapped(
    lines: list[str], marked: list[int], *, jira: bool, html_mode: bool
) -> Iterable[tuple[int, list[str]]]:
    """``(line, the lines it becomes)`` of each of the ``marked`` lines that a
    wrapper's markers change (in order: a ``<pre>`` stays open across lines)."""
    inside_pre = False
    for i in marked:
        line = lines[i]
        if jira and "{" in line and _JIRA.search(line):
            pieces = _jira_lines(line)
        elif html_mode and ("<" in line or "&" in line):
            pieces, inside_pre = _pre_balanced(line, _html_lines(line), inside_pre)
        else:
            continue
        if len(pieces) != 1 or pieces[0] != line:
            yield i, pieces


def _spliced(
    replaced: list[tuple[int, list[str]]], lines: list[str], first: list[int], last: list[int]
) -> tuple[list[str], list[int], list[int]]:
    """``lines`` and their spans with each ``(line, pieces)`` of ``replaced``
    (in order) put in its line's place, every piece spanning that line's span."""
    new_l: list[str] = []
    new_f: list[int] = []
    new_t: list[int] = []
    done = 0
    for i, pieces in replaced:
        new_l += lines[done:i] + pieces
        new_f += first[done:i] + [first[i]] * len(pieces)
        new_t += last[done:i] + [last[i]] * len(pieces)
        done = i + 1
    return new_l + lines[done:], new_f + first[done:], new_t + last[done:]


def _boundary(line: str) -> bool:
    return not line.strip() or _FENCE_LINE.match(line) is not None


def _paragraph(lines: list[str], i: int, body: str | None, pos: int) -> tuple[int, str | None, str | None]:
    """``(end, prefix, text)`` of the paragraph of indented lines from line
    ``i``: the leading whitespace every line shares, and the lines joined when
    ``body`` (``"\\n".join(lines)``, line ``i`` at ``pos``) gave them at C speed
    because they all start like the first."""
    if body is not None and (run := _run_led_alike(lines[i], body, pos)) is not None:
        return i + run.count("\n") + 1, _indent(lines[i]), run
    j = i
    while j < len(lines) and _indented(lines[j]):
        j += 1
    leads = [_indent(line) for line in lines[i:j]]
    return j, (_shared_start(leads) if leads else None), None


def _shared_start(texts: list[str]) -> str:
    """The longest start that all ``texts`` share, character by character.

    >>> _shared_start(["\\t  ", "\\t ", "\\t   "])
    '\\t '
    """
    low, high = min(texts), max(texts)  # those two differ first where any two do
    size = next((k for k, (x, y) in enumerate(zip(low, high, strict=False)) if x != y), len(low))
    return low[:size]


def _run_led_alike(first: str, body: str, pos: int) -> str | None:
    """The indented lines of ``body`` from ``pos`` (where line ``first`` starts),
    joined, when they all start with ``first``'s indentation; else None."""
    match = _INDENTED_RUN.match(body, pos)
    run = match.group().removesuffix("\n") if match else ""
    return run if run.count("\n" + _indent(first)) == run.count("\n") else None


def _dedent(lines: list[str], body: str | None) -> bool:
    """Remove the leading whitespace shared by every line of a paragraph (in
    place). A paragraph is a run of indented lines between blank lines or
    fences: a table whose rows alone are indented (numactl's distances,
    dmidecode's tab-indented fields) keeps its shape. ``body`` is
    ``"\\n".join(lines)`` (None: every line is a candidate start). True when a
    line changed."""
    n = len(lines)
    changed = False
    done = 0
    for i, pos in _paragraph_starts(n, body):
        if i < done or not _opens_paragraph(lines, i):
            continue
        j, prefix, run = _paragraph(lines, i, body, pos)
        if prefix and (j == n or _boundary(lines[j])):
            _cut_prefix(lines, i, j, prefix, run)
            changed = True
        done = max(j, i + 1)
    return changed


def _paragraph_starts(n: int, body: str | None) -> Iterable[tuple[int, int]]:
    """``(line, its offset in body)`` of the lines where :func:`_dedent` may find
    a paragraph: the top two lines, then each indented line after a blank or
    fence line (every one of the ``n`` lines when ``body`` is None)."""
    if body is None:
        return ((i, 0) for i in range(n))
    second = body.find("\n") + 1
    starts = [(0, 0), *([(1, second)] if second else [])]
    newlines = pos = 0
    for m in _AFTER_BOUNDARY.finditer(body):
        newlines += body.count("\n", pos, m.start())
        pos = m.start()
        starts.append((newlines + 2, m.end() + 1))
    return starts


def _opens_paragraph(lines: list[str], i: int) -> bool:
    """Is line ``i`` indented, not blank, and after a boundary (or the first)?"""
    if i >= len(lines):
        return False
    return _indented(lines[i]) and (i == 0 or _boundary(lines[i - 1]))


def _indented(line: str) -> bool:
    """Is ``line`` indented (a space or a tab first) and not blank?"""
    return line[:1] in (" ", "\t") and bool(line.strip())


def _cut_prefix(lines: list[str], i: int, j: int, prefix: str, run: str | None) -> None:
    """Cut ``prefix`` off lines ``i`` to ``j - 1`` in place (from ``run``, those
    lines joined, when known)."""
    cut = len(prefix)
    if run is not None:
        lines[i:j] = run[cut:].replace("\n" + prefix, "\n").split("\n")
    else:
        for k in range(i, j):
            lines[k] = lines[k][cut:]


def _join_node_cpus(prev: str, line: str, above: str) -> str | None:
    """Integers continuing ``node N cpus:``."""
    if _NODE_CPUS.match(prev) and _INTS.match(line):
        return f"{prev.rstrip()} {line.strip()}"
    return None


def _join_numa_cpus(prev: str, line: str, above: str) -> str | None:
    """A CPU list continuing lscpu's ``NUMA nodeN CPU(s):`` ending in a comma."""
    if _NUMA_CPUS.match(prev) and prev.rstrip().endswith(",") and _CPULIST.match(line):
        return f"{prev.rstrip()}{line.strip()}"
    return None


def _join_flags(prev: str, line: str, above: str) -> str | None:
    """Flag words continuing a ``Flags:`` line whose last piece (``above``) was long."""
    if (
        _FLAGS.match(prev)
        and len(above) >= WRAP_MIN_WIDTH
        and _FLAG_WORDS.match(line)
        and not any(w in STOPWORDS for w in line.split())
    ):
        return f"{prev.rstrip()} {line.strip()}"
    return None


# the first five characters of a line a terminal may have wrapped -> what joins
# the next line to it (the joined line, or None: it does not continue)
_JOINERS: dict[str, Callable[[str, str, str], str | None]] = {
    "node ": _join_node_cpus,
    "NUMA ": _join_numa_cpus,
    "Flags": _join_flags,
}


def _joins(
    lines: list[str], first: list[int], last: list[int], body: str | None
) -> tuple[list[str], list[int], list[int]]:
    """Join lines a terminal wrapped at a fixed width, where the join is
    unambiguous: integers after ``node N cpus:``, a CPU list after lscpu's
    ``NUMA nodeN CPU(s):`` ending in a comma, flag words after a long
    ``Flags:`` line. ``body`` is ``"\\n".join(lines)`` (None: every line is
    looked at)."""
    starts = range(len(lines)) if body is None else line_indexes(_JOIN_HEAD, _JOIN_HEAD_NEXT, body)
    dropped: list[tuple[int, int]] = []  # [start, end) of the lines joined into the one before
    done = 0
    for i in starts:
        join = _JOINERS.get(lines[i][:5])
        if i < done or join is None:
            continue
        done = _join_into(lines, last, i, join)
        if done > i + 1:
            dropped.append((i + 1, done))
    return _without(dropped, lines, first, last)


def _join_into(lines: list[str], last: list[int], i: int, join: Callable[[str, str, str], str | None]) -> int:
    """Join into line ``i`` the lines after it that ``join`` continues it with
    (their last original line becomes its); the index after the last joined."""
    prev = lines[i]
    j = i + 1
    while j < len(lines) and lines[j].strip() and len(prev) < 1_000_000:
        joined = join(prev, lines[j], lines[j - 1])
        if joined is None:
            break
        prev = joined
        last[i] = last[j]
        j += 1
    lines[i] = prev
    return j


def _without(
    dropped: list[tuple[int, int]], lines: list[str], first: list[int], last: list[int]
) -> tuple[list[str], list[int], list[int]]:
    """``lines`` and their spans without the ``[start, end)`` ranges ``dropped``."""
    if not dropped:
        return lines, first, last
    out_l: list[str] = []
    out_f: list[int] = []
    out_t: list[int] = []
    pos = 0
    for a, b in dropped:
        out_l += lines[pos:a]
        out_f += first[pos:a]
        out_t += last[pos:a]
        pos = b
    return out_l + lines[pos:], out_f + first[pos:], out_t + last[pos:]


def _clean(text: str, notes: list[str]) -> str:
    """The whole-text passes (C speed), each only when its marker is present;
    none of them adds or removes a newline."""
    if "\r" in text:
        text = _uncarriage(text)
    if "\x1b" in text or "\x9b" in text:
        text = (_ANSI if "\x9b" in text else _ANSI_ESC).sub("", text)
    if not text.isascii():
        text = _plain_spaces(text)
    if _CONTROL.search(text):
        text = _CONTROL.sub("", text)
    if _line_starts(_QUOTED, _QUOTED_NEXT, text):
        text = _unquote(text, notes)
    if "=~=~" in text:
        text = _PUTTY_HEADER.sub("", text)
    if HIDDEN_ADDRESS in text:
        text = text.replace(HIDDEN_ADDRESS, "user@host")
    return text


def _uncarriage(text: str) -> str:
    """CRLF line ends made LF; a line a carriage return redrew, as it was shown."""
    text = text.replace("\r\n", "\n")
    if "\r" in text:
        text = _REDRAWN.sub(lambda m: _redraw(m.group()), text)
    return text


def _plain_spaces(text: str) -> str:
    """Wide spaces made plain spaces, zero-width ones dropped (and an 8-bit
    escape sequence behind them)."""
    for space in _WIDE_SPACES:
        if space in text:
            text = text.replace(space, " ")
    for space in _ZERO_WIDTHS:
        if space in text:
            text = text.replace(space, "")
    if "\x9b" in text:
        text = _ANSI.sub("", text)
    return text


def _has_joined_quote(text: str) -> bool:
    """Does ``_JOINED_QUOTE`` find a marker in ``text``?

    >>> _has_joined_quote("somaxconn >is set to"), _has_joined_quote("cat a >out 2>&1")
    (True, False)
    """
    for m in _JOINED_QUOTE_AT.finditer(text):
        before = text[m.start() - 1] if m.start() else " "
        if not before.isspace() and before != ">":
            return True
    return False


def _unquote(text: str, notes: list[str]) -> str:
    r"""E-mail quoting removed, line by line: replies mix quoted and unquoted lines.
    A quoted line that a mail client wrapped and a web page joined back keeps
    the wrapped part's marker in its middle (``... somaxconn >is set to ...``):
    on quoted lines it goes too when words follow it (a redirection such as
    ``> /path``, ``>file.log`` or ``>out 2>&1`` is kept).

    >>> _unquote("># WARNING: ... /proc/sys/net/core/somaxconn >is set to the lower value of 128.", [])
    '# WARNING: ... /proc/sys/net/core/somaxconn is set to the lower value of 128.'
    >>> _unquote("text\n> echo never > /sys/kernel/mm/transparent_hugepage/enabled", [])
    'text\necho never > /sys/kernel/mm/transparent_hugepage/enabled'
    """
    m = _QUOTE.match(text)
    if m:
        text = text[m.end() :]
    if not _has_joined_quote(text):
        text, quoted = _QUOTE_NEXT.subn("\n", text)
    else:  # a callable per quoted line: only when a joined marker is there
        if m:
            end = text.find("\n")
            end = len(text) if end < 0 else end
            text = _JOINED_QUOTE.sub("", text[:end]) + text[end:]
        text, quoted = _QUOTED_REST_NEXT.subn(lambda q: "\n" + _JOINED_QUOTE.sub("", q[1]), text)
    notes.append(f"{quoted + (m is not None)} e-mail quoted lines unquoted")
    return text


# What a logger, a CI runner, a script or a web page puts before each line of a
# command's output: timestamps in common formats, levels, [stdout] marks, syslog's
# "host prog[pid]:", "|" gutters and "#" comment marks, a code listing's line
# numbers ("  1. ", "12 | ") and "> " marks, in any order and number; and the
# "- " an author put before each line of a paste made a Markdown list.
_TS = r"\[?\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)?)?\]?"
_TIME = r"\[?\d\d:\d\d:\d\d(?:[.,]\d{1,9})?\]?"
_SYSLOG = r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?: [\w.-]{1,64} [\w./-]{1,64}(?:\[\d{1,10}\])?:)?"
_LEVEL = r"[\[<]?(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL)[\]>]?:?"
_STREAM = r"\[(?:stdout|stderr|STDOUT|STDERR|out|err)\]:?"
# the kernel console's "[   28.812567]" and its caller id "[  T127]" (kernel test robot logs)
_CONSOLE = r"\[[ \t]{0,12}\d{1,8}\.\d{1,9}\](?:\[[ \t]{0,6}[TC]\d{1,7}\])?"
# a web page's code listing: "  1. ", "12) ", "12 | ", "12 │ " (nl, bat, pastebins)
_LISTING = r"\d{1,6}(?:[.)]|[ \t]{0,4}[|│])(?=[ \t]|$)"
_PREFIX_ELEMENT = (
    rf"(?:{_TS}|{_TIME}|{_SYSLOG}|{_LEVEL}|{_STREAM}|{_CONSOLE}|{_LISTING}"
    r"|\||#(?=[ \t]|$)|>(?=[ \t]|$)|-(?=[ \t]))"
)
_LOG_PREFIX = re.compile(rf"[ \t]{{0,8}}(?:{_PREFIX_ELEMENT}[ \t]{{0,4}}){{1,8}}")
# the start of a prefix holding at least one element that is not a gutter
_PREFIX_LEAD = (
    r"[ \t]{0,8}(?:\|[ \t]{0,4})?(?:\[?\d{4}-\d\d-\d\d|\[?\d\d:\d\d:\d\d|[A-Z][a-z]{2} [ \d]\d \d\d:"
    r"|#(?:[ \t]|$)|\[(?:stdout|stderr|STDOUT|STDERR|out|err)\]|\[[ \t]{0,12}\d{1,8}\.\d"
    r"|[\[<]?(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL)\b"
    r"|\d{1,6}(?:[.)]|[ \t]{0,4}[|│])(?:[ \t]|$)|>(?:[ \t]|$)|-[ \t])"
)
_PREFIX_FIRST = re.compile(_PREFIX_LEAD, re.M)
# (the look-ahead, a character every alternative of the lead may start with, lets
# the search leave most lines at their first character)
_PREFIX_NEXT = re.compile(r"\n(?=[ \t|\[<>#\dA-Z-])" + _PREFIX_LEAD, re.M)
_LEVEL_WORD = re.compile(r"TRACE|DEBUG|INFO|NOTICE|WARNING|WARN|ERROR|CRITICAL|FATAL")
LOG_PREFIX_MIN_RUN = 3  # lines sharing a prefix before it is taken for one
LOG_PREFIX_PROBE = 24  # lines of a run looked at to tell what is behind the prefix
LOG_PREFIX_WINDOWS = 3  # of them, one after the other
LOG_PREFIX_TRIES = 3  # runs of one prefix shape hiding nothing recognised before it is kept


_FOLD = str.maketrans("0123456789", "9999999999", " \t")
_NINES = re.compile("9{2,}")
# the shape of a prefix that holds a listing's line number: decided run by run
# (a post's numbered steps and its numbered code listings share the shape)
_LISTING_SHAPE = re.compile(r"^[|>#]*9[.)|│](?!9)")
# the shape of a Markdown list's marker (a post's bullet points and a paste an
# author made a list share it): decided run by run too
_LIST_SHAPE = re.compile(r"^[|>#]*-$")


def _prefix_shape(prefix: str) -> str:
    """What the lines of one run share: digits and levels folded, spaces dropped
    (``2024-05-01 10:00:00,123 DEBUG| [stdout] `` and the next second's line
    at INFO have one shape; so have a listing's lines ``  9. `` and ``  10. ``).

    >>> _prefix_shape("  9. ") == _prefix_shape("  10. ")
    True
    """
    if prefix != prefix.lower():  # only a level word is folded
        prefix = _LEVEL_WORD.sub("L", prefix)
    shape = prefix.translate(_FOLD)
    return _NINES.sub("9", shape) if "99" in shape else shape


_PREFIX_STEP = re.compile(rf"[ \t]{{0,8}}{_PREFIX_ELEMENT}[ \t]{{0,4}}")


def _cut_to_shape(line: str, shape: str) -> int:
    """Where the elements of ``line``'s prefix make ``shape``, or 0."""
    pos = 0
    for _ in range(8):
        m = _PREFIX_STEP.match(line, pos)
        if m is None or m.end() == pos:
            return 0
        pos = m.end()
        got = _prefix_shape(line[:pos])
        if got == shape:
            return pos
        if not shape.startswith(got):
            return 0
    return 0


def strip_log_prefixes(
    lines: list[str],
    body: str | None,
    recognise: Callable[[list[str]], str | None],
    parses: Callable[[str, list[str]], bool],
) -> int:
    """Remove, in place, the prefix a logger put before every line of a run
    (at least LOG_PREFIX_MIN_RUN consecutive lines whose prefixes have one
    shape), where what is behind it is recognised (``recognise`` gets the
    run's first lines and names what they are: an artifact's kind, or a
    prompt) and the lines as they are were not, or were recognised as the same
    thing but do not parse as it (``parses(kind, lines)``). A log file such as
    MariaDB's error log, whose parser reads the times, keeps them. Lines are
    neither added nor removed, so line numbers stay those of the original.
    Returns the number of lines changed.

    >>> lines = ["2024-05-01 10:00:00,123 DEBUG| [stdout] node 0 cpus: 0 1",
    ...          "2024-05-01 10:00:00,124 DEBUG| [stdout] node 0 size: 1024 MB",
    ...          "2024-05-01 10:00:00,125 INFO| [stdout] node 0 free: 512 MB"]
    >>> kind = lambda run: "numactl" if run[0].startswith("node") else None
    >>> strip_log_prefixes(lines, None, kind, lambda kind, run: False)
    3
    >>> lines[2]
    'node 0 free: 512 MB'
    """
    if body is None:
        body = "\n".join(lines)
        if body.count("\n") != len(lines) - 1:
            return 0
    candidates = _in_runs(line_indexes(_PREFIX_FIRST, _PREFIX_NEXT, body, lines[0] if lines else ""))
    if len(candidates) < LOG_PREFIX_MIN_RUN:
        return 0
    return _LoggerPrefixes(lines, recognise, parses).strip(candidates)


def _in_runs(found: list[int]) -> list[int]:
    """The lines of ``found`` in a run of LOG_PREFIX_MIN_RUN consecutive ones:
    only they can be stripped (a "# cmd" prompt or a log line on its own costs
    nothing more)."""
    present = set(found)
    return [
        i
        for i in found
        if {i - 2, i - 1} <= present or {i - 1, i + 1} <= present or {i + 1, i + 2} <= present
    ]


class _LoggerPrefixes:
    """The runs of lines of :func:`strip_log_prefixes`, and per prefix shape
    whether it is stripped (one logger, one decision)."""

    def __init__(
        self,
        lines: list[str],
        recognise: Callable[[list[str]], str | None],
        parses: Callable[[str, list[str]], bool],
    ) -> None:
        self.lines = lines
        self.recognise = recognise
        self.parses = parses
        self.decided: dict[str, bool] = {}  # prefix shape -> strip it
        self.unknown: dict[str, int] = {}  # prefix shape -> runs behind which nothing was recognised

    def strip(self, candidates: list[int]) -> int:
        """Strip the runs of ``candidates`` that are a logger's; the number of lines changed."""
        return sum(self.close(run, shape) for run, shape in self.runs(candidates))

    def runs(self, candidates: list[int]) -> Iterator[tuple[list[tuple[int, int]], str]]:
        """``(run, shape)`` of each run of consecutive ``candidates`` whose
        prefixes have one shape, a run being the ``(line, prefix length)`` of
        its lines (it may be empty or short: :meth:`close` decides). Each run
        is closed before the lines after it are looked at."""
        run: list[tuple[int, int]] = []
        shape = ""
        for i in candidates:
            m = _LOG_PREFIX.match(self.lines[i])
            if m is None or m.end() == 0:
                yield run, shape
                run, shape = [], ""
                continue
            follows = bool(run) and i == run[-1][0] + 1
            this, cut = self.prefix(i, m.group(), shape if follows else None)
            if run and (not follows or this != shape):
                yield run, shape
                run = []
            shape = this
            run.append((i, cut or m.end()))
        yield run, shape

    def prefix(self, i: int, prefix: str, shape: str | None) -> tuple[str, int]:
        """The shape of line ``i``'s ``prefix`` and where it ends (0: its end).
        After a run of ``shape``, a prefix that is the run's then more that
        looks like one (a logged line that starts with its own time) is the
        run's only: the rest is the logged line's."""
        this = _prefix_shape(prefix)
        if shape is None or this == shape or not this.startswith(shape):
            return this, len(prefix)
        cut = _cut_to_shape(self.lines[i], shape)
        return (shape if cut else this), cut

    def close(self, run: list[tuple[int, int]], shape: str) -> int:
        """Strip the prefixes of ``run`` when it is a logger's; the lines changed."""
        if len(run) < LOG_PREFIX_MIN_RUN or not self.stripped(run, shape):
            return 0
        for i, cut in run:
            self.lines[i] = self.lines[i][cut:]
        return len(run)

    def stripped(self, run: list[tuple[int, int]], shape: str) -> bool:
        """Whether the prefixes of ``shape`` are stripped, decided on ``run``
        when not decided yet (a listing's line numbers: on each run)."""
        if _LISTING_SHAPE.search(shape) or _LIST_SHAPE.search(shape):
            return bool(self.decide(run, shape))
        if shape not in self.decided:
            decision = self.decide(run, shape)
            if decision is None:
                return False
            self.decided[shape] = decision
        return self.decided[shape]

    def decide(self, run: list[tuple[int, int]], shape: str) -> bool | None:
        """Whether a prefix of ``shape`` (as on ``run``) is a logger's: what is
        behind it is recognised, and the lines as they are were not (or do not
        parse as the same thing). None: undecided, another run of this shape
        may show what it prefixes (but a shape that hid nothing recognisable
        thrice is a log's own)."""
        probe, behind = self.behind(run)
        if behind is None:
            return self.nothing_behind(shape)
        if behind == "prompt" or _LISTING_SHAPE.search(shape):
            # a prompt behind a prefix is a terminal logger's; a listing's line
            # numbers are a web page's, never an output's
            return True
        return self.unread_as_they_are(probe, behind)

    def nothing_behind(self, shape: str) -> bool | None:
        """Count one more run of ``shape`` behind whose prefixes nothing was
        recognised: False (a log's own prefix) the LOG_PREFIX_TRIES-th time, else None."""
        self.unknown[shape] = self.unknown.get(shape, 0) + 1
        return False if self.unknown[shape] >= LOG_PREFIX_TRIES else None

    def unread_as_they_are(self, probe: list[tuple[int, int]], behind: str) -> bool:
        """Whether the ``probe`` lines with their prefixes were not recognised,
        or were as ``behind`` (what is behind the prefixes) but do not parse as it."""
        original = [self.lines[i] for i, _ in probe]
        before = self.recognise(original)
        return before is None or (before == behind and not self.parses(before, original))

    def behind(self, run: list[tuple[int, int]]) -> tuple[list[tuple[int, int]], str | None]:
        """What the prefixes of ``run`` hide, from the first window of its lines
        where it is recognised (a log's first lines may be its own), with that window."""
        for start in range(0, min(len(run), LOG_PREFIX_WINDOWS * LOG_PREFIX_PROBE), LOG_PREFIX_PROBE):
            window = run[start : start + LOG_PREFIX_PROBE]
            behind = self.recognise([self.lines[i][cut:] for i, cut in window])
            if behind is not None:
                return window, behind
        return run[:LOG_PREFIX_PROBE], None


def normalise(text: str) -> Normalised:
    """Cleaned lines of a pasted ``text`` with their original line spans.

    >>> n = normalise("> node 0 cpus: 0 2\\r\\n> 4 6\\r\\n")
    >>> n.lines, n.first, n.last
    (['node 0 cpus: 0 2 4 6', ''], [0, 2], [1, 2])
    """
    count = text.count("\n") + 1
    notes: list[str] = []
    text = _clean(text, notes)
    work = _Work(text, text.split("\n"), list(range(count)), list(range(count)), text, notes)
    for step in _PASSES:
        step(work)
    lines, first, last = work.lines, work.first, work.last
    identity = len(lines) == count and first[-1] == count - 1 and first == last
    return Normalised(
        lines=lines,
        first=first,
        last=last,
        original_lines=count,
        notes=notes,
        identity=identity,
        joined=work.body,
    )


@dataclass
class _Work:
    """What :func:`normalise`'s line passes work on."""

    text: str  # the text after the whole-text passes (where each line pass looks for its marker)
    lines: list[str]
    first: list[int]
    last: list[int]
    body: str | None  # "\\n".join(lines) while it is known (None once a line holds a newline)
    notes: list[str]

    def rejoined(self) -> None:
        """The lines changed in place: ``body`` follows (while it is known)."""
        if self.body is not None:
            self.body = "\n".join(self.lines)

    def replace_lines(self, replaced: list[tuple[int, str]], note: str) -> None:
        """Put each ``(line, text)`` of ``replaced`` in place."""
        for i, line in replaced:
            self.lines[i] = line
        if replaced:
            self.notes.append(note)
            self.rejoined()

    def cut_starts(self, cuts: list[tuple[int, int]], note: str) -> None:
        """Cut the first ``end`` characters of each line ``i`` of ``cuts``."""
        for i, end in cuts:
            self.lines[i] = self.lines[i][end:]
        if cuts:
            self.notes.append(note)
            self.rejoined()


def _unwrap_pass(work: _Work) -> None:
    """HTML and Jira wrappers made Markdown fences."""
    html_mode = _HTML_MODE.search(work.text) is not None
    text = work.text
    jira = any(marker in text for marker in _JIRA_MARKERS)
    if not (html_mode or jira):
        return
    before = work.lines
    work.lines, work.first, work.last, clean = _unwrap(
        work.lines, work.first, work.last, text, jira=jira, html_mode=html_mode
    )
    if work.lines is not before:
        work.body = "\n".join(work.lines) if clean else None


def _stamp_pass(work: _Work) -> None:
    """After the wrappers: "<pre><code>2024-05-01 10:00:01 [root@h ~]# ..." is stamped too."""
    if _line_starts(_STAMP, _STAMP_NEXT, work.text):
        work.cut_starts(_stamped(work.lines, work.body), "terminal-logger timestamps removed")


def _bold_pass(work: _Work) -> None:
    if "**" in work.text and work.body is not None:
        work.replace_lines(_unbolded(work.lines, work.body), UNBOLDED)


def _tick_pass(work: _Work) -> None:
    if "`" in work.text and work.body is not None:
        work.replace_lines(
            _untick(work.lines, work.body), "Markdown inline-code backticks around a prompt removed"
        )


def _compose_pass(work: _Work) -> None:
    if _line_starts(_COMPOSE, _COMPOSE_NEXT, work.text):
        prefixed = _compose_prefixed(work.lines)
        if _unpad_terminal_wraps(work.lines, prefixed):
            work.notes.append("padding of lines wrapped at the terminal's width removed")
        work.cut_starts(prefixed, "docker compose service prefixes removed")


_PAD = re.compile(r" {8,}")
_PAD_MIN = 8


def _unpad_terminal_wraps(lines: list[str], prefixed: list[tuple[int, int]]) -> bool:
    """Remove, in place, the padding ``docker compose logs`` put where it wrapped
    a long line at the terminal's width: the first row holds the prefix and
    ``first`` characters, each later row ``width`` characters after ``pad``
    blanks, so the blanks sit at ``first``, ``first + pad + width`` ... of the
    line's text, and ``prefix + first == width``. Found only when a line shows
    two such places; a column gap of a table is not at those places.

    >>> head = "redis_1                | "
    >>> text = ("1:M # WARNING: The TCP backlog setting of 511 cannot be enforced because "
    ...     "/proc/sys/net/core/somaxconn is set to the lower value of 128.")
    >>> rows = [head + text[:35] + " " * 16 + text[35:95] + " " * 16 + text[95:]]
    >>> rows.append(head + "1:M # Server initialized")
    >>> _unpad_terminal_wraps(rows, [(0, 25), (1, 25)]), rows[0][25:] == text
    (True, True)
    """
    runs = {
        i: [(m.start() - end, m.end() - m.start()) for m in _PAD.finditer(lines[i], end)]
        for i, end in prefixed
    }
    layout = _wrap_layout(runs, dict(prefixed))
    if layout is None:
        return False
    first, period, pad = layout
    changed = False
    for i, end in prefixed:
        text = lines[i][end:]
        places = range(first, len(text), period)
        if not runs[i] or not all(text[p : p + pad] == " " * pad for p in places if p + pad <= len(text)):
            continue
        starts = [0, *(p + pad for p in places)]
        kept = [text[a:b] for a, b in zip(starts, [*places, len(text)], strict=True)]
        lines[i] = lines[i][:end] + "".join(kept)
        changed = True
    return changed


def _wrap_layout(
    runs: dict[int, list[tuple[int, int]]], prefix: dict[int, int]
) -> tuple[int, int, int] | None:
    """``(first, period, pad)`` of the wrapping that the blank runs of the lines
    show (see :func:`_unpad_terminal_wraps`), or None."""
    lengths = [n for found in runs.values() for _at, n in found]
    if not lengths:
        return None
    pad = min(lengths)
    if pad < _PAD_MIN:
        return None
    # a run one blank longer holds a real blank before or after the padding
    firsts: dict[int, int] = {}
    for found in runs.values():
        if found:
            at, n = found[0]
            for start in {at, at + n - pad}:
                firsts[start] = firsts.get(start, 0) + 1
    first = max(firsts, key=lambda k: (firsts[k], -k))
    for i, found in runs.items():
        if len(found) < 2 or first not in {found[0][0], found[0][0] + found[0][1] - pad}:
            continue
        at, n = found[1]
        for second in (at, at + n - pad):
            period = second - first
            if period - pad == first + prefix[i]:
                return first, period, pad
    return None


def _dedent_pass(work: _Work) -> None:
    indented = work.text[:1] in (" ", "\t") or _INDENTED_PARAGRAPH.search(work.text)
    if indented and _dedent(work.lines, work.body):
        work.rejoined()


def _join_pass(work: _Work) -> None:
    if _line_starts(_WRAPPABLE, _WRAPPABLE_NEXT, work.text):
        before = work.lines
        work.lines, work.first, work.last = _joins(work.lines, work.first, work.last, work.body)
        if work.lines is not before:
            work.body = None


# Quoted-printable mail text (RFC 2045 6.7) shown undecoded, as mailing-list
# archives keep it: "=20" for a trailing space, "=3D" for "=", and a soft line
# break ("=" at a line's end) where the mailer wrapped a long line. A literal
# "=" is always encoded there, so once a text shows the encoding every "=XX"
# is an escape and every "=" at a line's end a soft break.
_QP_SIGN = re.compile(r"=(?:20|09)$|=3D", re.M)
_QP_ESCAPES = re.compile(r"(?:=[0-9A-F]{2})+")
QP_MIN_SIGNS = 2  # encoded trailing spaces or "=3D" before a text is taken for quoted-printable


def _quoted_printable(text: str) -> bool:
    """Does ``text`` show quoted-printable encoding (at least :data:`QP_MIN_SIGNS`
    encoded trailing blanks or encoded "=")?"""
    if "=20" not in text and "=09" not in text and "=3D" not in text:
        return False
    return len(list(itertools.islice(_QP_SIGN.finditer(text), QP_MIN_SIGNS))) >= QP_MIN_SIGNS


def _qp_unescaped(line: str) -> str:
    """``line`` with its "=XX" escapes decoded (runs of them as UTF-8 bytes).

    >>> _qp_unescaped(">>  7:  32  16  10=20")
    '>>  7:  32  16  10 '
    >>> _qp_unescaped("innodb_numa_interleave=3DON =E4=B8=AD")
    'innodb_numa_interleave=ON \u4e2d'
    """
    if "=" not in line:
        return line
    return _QP_ESCAPES.sub(lambda m: bytes.fromhex(m[0].replace("=", "")).decode("utf-8", "replace"), line)


def _qp_lines(lines: list[str], first: list[int], last: list[int]) -> tuple[list[str], list[int], list[int]]:
    """Quoted-printable ``lines`` decoded: soft line breaks joined (the joined
    line spans the original lines it comes from), escapes decoded.

    >>> _qp_lines(["page: refcount:1 =", "mapping:0 index:0x0", "node   0   1=20"], [0, 1, 2], [0, 1, 2])
    (['page: refcount:1 mapping:0 index:0x0', 'node   0   1 '], [0, 2], [1, 2])
    """
    out: list[str] = []
    out_first: list[int] = []
    out_last: list[int] = []
    pending: list[str] = []
    for line, a, b in zip(lines, first, last, strict=True):
        if not pending:
            out_first.append(a)
        if line.endswith("=") and len(pending) < 1_000:
            pending.append(line[:-1])
            continue
        out.append(_qp_unescaped("".join(pending) + line))
        out_last.append(b)
        pending = []
    if pending:
        out.append(_qp_unescaped("".join(pending)))
        out_last.append(last[-1])
    return out, out_first, out_last


def _quoted_printable_pass(work: _Work) -> None:
    """Quoted-printable mail text decoded, before any other line pass reads it."""
    if not _quoted_printable(work.text):
        return
    work.lines, work.first, work.last = _qp_lines(work.lines, work.first, work.last)
    work.body = "\n".join(work.lines)
    work.text = work.body
    work.notes.append("quoted-printable mail text decoded")


def _unflatten_pass(work: _Work) -> None:
    """Outputs flattened onto their command's line cut back into lines
    (:mod:`collectors.unflatten`)."""
    found = _flattened_candidates(work.lines, work.body)
    if not found:
        return
    replaced = [(i, pieces) for i in found if (pieces := unflatten.unflattened(work.lines[i])) is not None]
    if not replaced:
        return
    work.lines, work.first, work.last = _spliced(replaced, work.lines, work.first, work.last)
    work.body = "\n".join(work.lines)
    work.notes.append(FLATTENED)


def _flattened_candidates(lines: list[str], body: str | None) -> list[int]:
    """Indexes of the ``lines`` (``body`` joined, when known) that may hold a
    flattened output (:data:`collectors.unflatten.CANDIDATE`)."""
    body = body if body is not None else "\n".join(lines)
    if body.count("\n") == len(lines) - 1:
        return line_indexes(unflatten.CANDIDATE, unflatten.CANDIDATE_NEXT, body, lines[0])
    # a line holds a newline: the body's line numbers are not the lines'
    return [i for i, line in enumerate(lines) if unflatten.CANDIDATE.match(line)]


# sysstat's report headers typed or translated with a full-width colon ("avg-cpu： %user",
# "Device： tps"): the colon iostat and sar print (readk)
_FULLWIDTH_HEADER = re.compile(r"^([ \t]*(?:avg-cpu|Device))：(?=[ \t])", re.M)


def _fullwidth_colon_pass(work: _Work) -> None:
    """``avg-cpu： %user ...`` read as ``avg-cpu: %user ...`` (only in such headers).

    >>> w = _Work("avg-cpu：", ["avg-cpu： %user %idle", "说明：这是"], [0, 1], [0, 1], None, [])
    >>> _fullwidth_colon_pass(w); w.lines
    ['avg-cpu: %user %idle', '说明：这是']
    """
    text = work.text
    if "avg-cpu：" not in text and "Device：" not in text:
        return
    replaced = [
        (i, _FULLWIDTH_HEADER.sub(r"\1:", line))
        for i, line in enumerate(work.lines)
        if "：" in line and _FULLWIDTH_HEADER.match(line)
    ]
    work.replace_lines(replaced, "full-width colons of sysstat headers read as ':'")


# normalise()'s line passes, in order
_PASSES: tuple[Callable[[_Work], None], ...] = (
    _quoted_printable_pass,
    _unwrap_pass,
    _stamp_pass,
    _bold_pass,
    _tick_pass,
    _compose_pass,
    _dedent_pass,
    _join_pass,
    _unflatten_pass,
    _fullwidth_colon_pass,
)
