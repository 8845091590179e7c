"""Split a pasted terminal / SQL-client transcript into (command, output) blocks.

Tickets and write-ups quote command output in many shapes::

    [root@zstack-9 ~]# numactl -H          shell prompts (also user@host:~$,
    available: 2 nodes (0-1)               host:~ #, $ cmd, $cmd, # cmd)
    ...
    MySQL [oceanbase]> show proxyconfig    SQL client prompts (mysql>, MariaDB [db]>,
    +------+-------+                       obclient>, with "->" continuation lines)
    ```                                    markdown fences
    top - 11:38:32 up 64 days ...          output without any prompt
    ```

:func:`split_transcript` returns one :class:`Block` per prompted command and per
un-prompted piece of text that a parser recognises by content
(``collectors.parsers`` ``detect``). Prose between blocks is not returned, except
prose paragraphs that a parser recognises (a version string quoted in a
sentence); those are flagged ``prose`` so that a failed parse is not reported.

Outside code fences there is no marker where an output ends, so an output stops
at the first line that reads like prose (see :func:`line_class`), and a data
run is split where the content starts to look like a different artifact.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from collectors import parsers
from collectors.facts import to_dict

log = logging.getLogger(__name__)

DETECT_HEAD_CHARS = 2048
DETECT_HEAD_LINES = 40
MENTION_MAX_LINES = 20  # undetected data runs longer than this are not searched for mentions
MENTION_MAX_WORDS = 6
MAX_DETECT_PER_RUN = 300
MAX_TRAILING_DETECT = 60  # per prompted output
_UNSET = object()


@dataclass
class Block:
    command: str | None  # the command or SQL statement; None when recognised by content
    text: str  # what the parser gets
    start_line: int  # 1-based line of ``text``'s first line in the transcript
    end_line: int  # 1-based, inclusive
    label: str = ""  # command, or the kind for un-prompted blocks
    kind: str | None = None  # parser kind, None when not recognised
    prompt: str | None = None  # "shell", "sql" or None
    host: str | None = None  # hostname read from the prompt
    fenced: bool = False
    prose: bool = False  # a prose paragraph that detected as an artifact


# ----------------------------------------------------------------- registry access

_matchers: dict[str, tuple[int, list[tuple[str, re.Pattern[str]]]]] = {}


def _compiled(attr: str) -> list[tuple[str, re.Pattern[str]]]:
    """Compiled ``commands``/``paths`` regexes of every registered parser, rebuilt
    when the registry grows. ``parsers.for_path`` would re-scan the package on
    every call; an archive with thousands of members cannot afford that."""
    registry = parsers.load_all() if not parsers.REGISTRY else parsers.REGISTRY
    cached = _matchers.get(attr)
    if cached and cached[0] == len(registry):
        return cached[1]
    compiled: list[tuple[str, re.Pattern[str]]] = []
    for spec in list(registry.values()):
        for pattern in getattr(spec, attr):
            try:
                compiled.append((spec.kind, re.compile(pattern)))
            except re.error:
                log.exception("parser %s has an invalid %s regex %r", spec.kind, attr, pattern)
    _matchers[attr] = (len(registry), compiled)
    return compiled


_prose: tuple[int, re.Pattern[str]] | None = None


def _output_prose() -> re.Pattern[str]:
    """One pattern of every parser's ``prose_lines``: output lines that read
    like prose but belong to the artifact (see ``ParserSpec.prose_lines``)."""
    global _prose
    compiled = _compiled("prose_lines")
    if _prose is None or _prose[0] != len(compiled):
        joined = "|".join(f"(?:{rx.pattern})" for _kind, rx in compiled) or r"(?!)"
        _prose = (len(compiled), re.compile(joined))
    return _prose[1]


def ensure_parsers() -> None:
    parsers.load_all()


_SUDO = re.compile(r"^(?:sudo(?:\s+-\S+)*|time|nice(?:\s+-n\s*-?\d+)?)\s+")


def kind_for_command(command: str) -> str | None:
    command = command.strip()
    while True:  # "sudo numactl -H", "time lscpu" name the same artifact
        stripped = _SUDO.sub("", command, count=1)
        if stripped == command:
            break
        command = stripped
    for kind, rx in _compiled("commands"):
        if rx.search(command):
            return kind
    return None


def kind_for_path(path: str) -> str | None:
    """The kind whose ``paths`` regex matches ``path`` first (registry order).
    (Measured: the separate patterns fail fast, ~0.3 us each; a combined
    alternation or a literal pre-check were both slower.)"""
    for kind, rx in _compiled("paths"):
        if rx.search(path):
            return kind
    return None


_detect_failures: set[str] = set()


def detect_kind(text: str) -> str | None:
    """Like ``collectors.parsers.detect`` but a detector that raises on hostile
    text is skipped (and logged) instead of failing the upload."""
    head = text[:8192]
    best: tuple[int, int, str] | None = None
    for order, spec in enumerate(list(parsers.REGISTRY.values())):
        if spec.detect is None:
            continue
        try:
            hit = spec.detect(head)
        except Exception:
            if spec.kind not in _detect_failures:  # once per process, not per line
                _detect_failures.add(spec.kind)
                log.exception("detect() of parser %s raised", spec.kind)
            continue
        # max() in parsers.detect keeps the first of equal priorities
        if hit and (best is None or spec.priority > best[0]):
            best = (spec.priority, -order, spec.kind)
    return best[2] if best else None


# ------------------------------------------------------------------ line classes

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_BRACKET_PROMPT = re.compile(
    r"^\[(?P<user>[\w.\-]+)@(?P<host>[^\]\s]+)(?:\s[^\]]*)?\]\s*(?:(?P<sym>[#$%>])\s?(?P<cmd>.*))?$"
)
_USER_HOST_PROMPT = re.compile(
    r"^(?P<user>[\w.\-]+)@(?P<host>[\w.\-]+):(?P<path>[^\s#$]*)\s?[#$%]\s?(?P<cmd>.*)$"
)
# SUSE "host:~ # cmd"; the path class admits OCR damage such as `od01crmapp05:" # Iscpu`
_HOST_PATH_PROMPT = re.compile(r"^(?P<host>[A-Za-z][\w.\-]*):(?P<path>[~\"'/][^\s#>]*)\s?[#>]\s?(?P<cmd>.*)$")
_DOLLAR_PROMPT = re.compile(r"^\$(?:\s?(?P<cmd>[A-Za-z./_~][^\n]*))?\s*$")
_HASH_PROMPT = re.compile(r"^#\s?(?P<cmd>[a-z./_][^\n]*)$")
_SQL_PROMPT = re.compile(
    r"^(?P<client>mysql|mariadb|obclient|MySQL|MariaDB|OceanBase|obclient|tidb|TiDB)"
    r"(?:\s*\[(?P<db>[^\]]*)\])?(?:\s*\((?P<db2>[^)]*)\))?\s?>\s?(?P<cmd>.*)$"
)
_SQL_CONTINUATION = re.compile(r"^\s*['\"`]?->\s?(?P<cont>.*)$")

# Commands accepted after a bare "# " prompt, which is otherwise a markdown heading.
COMMON_COMMANDS = frozenset(
    [
        "cat",
        "echo",
        "ls",
        "ll",
        "grep",
        "egrep",
        "zcat",
        "tail",
        "head",
        "less",
        "more",
        "virsh",
        "numactl",
        "numastat",
        "top",
        "htop",
        "lscpu",
        "mysql",
        "mysqladmin",
        "obclient",
        "sysctl",
        "tc",
        "ping",
        "df",
        "du",
        "iostat",
        "mpstat",
        "sar",
        "vmstat",
        "free",
        "uname",
        "dmesg",
        "ps",
        "systemctl",
        "service",
        "lsblk",
        "ip",
        "ethtool",
        "cpupower",
        "tuned-adm",
        "dmidecode",
        "lspci",
        "mount",
        "journalctl",
        "uptime",
        "hostname",
        "taskset",
        "perf",
        "irqbalance",
        "sysbench",
        "virt-what",
        "lshw",
        "lstopo",
        "qemu-img",
        "nova",
        "openstack",
        "stream",
        "cd",
        "export",
        "find",
        "awk",
        "sed",
        "sort",
        "uniq",
        "wc",
        "lsof",
        "netstat",
        "ss",
        "pidstat",
        "cgget",
        "tsar",
        "hwloc-ls",
        "numad",
        "ulimit",
        "getconf",
        "lsmod",
        "modprobe",
        "blockdev",
        "fdisk",
        "pvs",
        "vgs",
        "lvs",
        "cpupower",
    ]
)

_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
_CJK_SPLIT = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]+")
_TABULAR = re.compile(r"\t|\S {3,}\S|[|=<>{}]")
_KEY_VALUE_CJK = re.compile(r"^[^:：]{1,40}[:：]\s*\S")
_LOG_START = re.compile(r"^(\d|[A-Z][a-z]{2} +\d)")
_STOPWORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "to",
        "and",
        "or",
        "is",
        "are",
        "was",
        "be",
        "in",
        "for",
        "with",
        "on",
        "that",
        "this",
        "it",
        "as",
        "by",
        "from",
    ]
)
_BRACKET_WORD = re.compile(r"\[[\w\-]+\]")


_SHAPE_CUT = re.compile(r"[.:=\[(,]")


def _shape(line: str) -> str:
    """The first word with digits folded and cut at punctuation:
    ``Node 1 MemFree:`` and ``Node 1 MemUsed:`` share a shape, ``top - ...`` does not."""
    token = line.split(None, 1)[0] if line.strip() else ""
    token = _SHAPE_CUT.split(token, 1)[0] or token[:1]
    return re.sub(r"\d+", "9", token.lower())[:16]


def _command_words(cmd: str) -> str:
    first = cmd.strip().split(None, 1)[0] if cmd.strip() else ""
    return first.rsplit("/", 1)[-1]


def match_prompt(line: str) -> tuple[str, str, str | None] | None:
    """``(prompt kind, command, host)`` when ``line`` is a prompt line.

    >>> match_prompt("[root@zstack-9 ~]# virsh version")
    ('shell', 'virsh version', 'zstack-9')
    >>> match_prompt("MariaDB [infoplus-v2]> select 1;")
    ('sql', 'select 1;', None)
    """
    line = line.rstrip()
    if not line or len(line) > 4096:
        return None
    head = line[0]
    if head == "[":
        m = _BRACKET_PROMPT.match(line)
        if m:
            return "shell", (m.group("cmd") or "").strip(), m.group("host")
        return None
    if head == "$":
        m = _DOLLAR_PROMPT.match(line)
        if m:
            return "shell", (m.group("cmd") or "").strip(), None
        return None
    if head == "#":
        m = _HASH_PROMPT.match(line)
        if m:
            cmd = m.group("cmd").strip()
            if _command_words(cmd) in COMMON_COMMANDS or kind_for_command(cmd):
                return "shell", cmd, None
        return None
    m = _SQL_PROMPT.match(line)
    if m:
        return "sql", m.group("cmd").strip(), None
    m = _USER_HOST_PROMPT.match(line)
    if m:
        return "shell", m.group("cmd").strip(), m.group("host")
    m = _HOST_PATH_PROMPT.match(line)
    if m:
        return "shell", m.group("cmd").strip(), m.group("host")
    return None


def line_class(line: str) -> str:
    """``"blank"``, ``"prose"`` or ``"data"`` (command output, logs, tables).

    >>> line_class("Deploy a single ODP. The NIC bandwidth is 2000 Mbit/s.")
    'prose'
    >>> line_class("node 0 size: 32722 MB")
    'data'
    """
    s = line.strip()
    if not s:
        return "blank"
    if _TABULAR.search(line.rstrip()) or _BRACKET_WORD.search(s) or _output_prose().fullmatch(s):
        return "data"
    if _CJK.search(s):
        return "data" if _KEY_VALUE_CJK.match(s) and not s.endswith(("。", "：", ":")) else "prose"
    if _LOG_START.match(s):
        return "data"
    tokens = s.split()
    if not any(c.isalnum() for c in s):
        return "data"  # table borders, separators
    if not any(c.isdigit() for c in s):
        if (
            len(tokens) >= 5
            and not s.endswith((".", ":", "?", "!", ","))
            and not any(t.lower() in _STOPWORDS for t in tokens)
        ):
            return "data"  # column headers: Time rrqms wrqms %rrqm ...
        if len(tokens) >= 2 and all(not any(c.islower() for c in t) for t in tokens):
            return "data"  # column headers: PID USER PR NI ...
        if ":" in s and not s.endswith(":") and len(tokens) <= 6:
            return "data"  # "Byte Order: Little Endian", "policy: default"
        return "prose"
    alpha = sum(1 for t in tokens if t.strip(".,:;!?()\"'").isalpha())
    if len(tokens) >= 6 and alpha / len(tokens) >= 0.7 and (s[-1] in ".:;,?!)" or ". " in s):
        return "prose"
    return "data"


# --------------------------------------------------------------------- splitting


class _Splitter:
    def __init__(self, text: str, detect_lines: int, detect_budget: int):
        self.lines = text.split("\n")
        self.detect_lines = detect_lines
        self.detect_budget = detect_budget
        self.blocks: list[Block] = []
        self._classes: dict[int, str] = {}

    def cls(self, i: int) -> str:
        c = self._classes.get(i)
        if c is None:
            c = self._classes[i] = line_class(self.lines[i])
        return c

    def text(self, a: int, b: int) -> str:
        return "\n".join(self.lines[a:b])

    def head(self, i: int, end: int) -> str:
        out, size = [], 0
        for line in self.lines[i : min(end, i + DETECT_HEAD_LINES)]:
            out.append(line[:DETECT_HEAD_CHARS])
            size += len(out[-1]) + 1
            if size >= DETECT_HEAD_CHARS:
                break
        return "\n".join(out)[:DETECT_HEAD_CHARS]

    # -- top level: fences
    def run(self) -> list[Block]:
        n = len(self.lines)
        i = region_start = 0
        while i < n:
            m = _FENCE.match(self.lines[i])
            if not m:
                i += 1
                continue
            self.region(region_start, i, fenced=False)
            marker = m.group(1)[0] * 3
            j = i + 1
            while j < n and not self.lines[j].lstrip().startswith(marker):
                j += 1
            self.region(i + 1, j, fenced=True)
            i = region_start = j + 1
        self.region(region_start, n, fenced=False)
        return self.blocks

    # -- a fenced or un-fenced region: prompts
    def region(self, a: int, b: int, *, fenced: bool) -> None:
        j = pending = a
        host: str | None = None
        while j < b:
            prompt = match_prompt(self.lines[j])
            if prompt is None:
                j += 1
                continue
            self.unprompted(pending, j, fenced=fenced, host=host)
            kind_of_prompt, command, prompt_host = prompt
            host = prompt_host or host
            first = j
            j += 1
            if kind_of_prompt == "sql":
                while j < b and not command.rstrip().endswith((";", "\\G", "\\g")):
                    cm = _SQL_CONTINUATION.match(self.lines[j])
                    if not cm:
                        break
                    command = f"{command} {cm.group('cont').strip()}".strip()
                    j += 1
            out_start = j
            while j < b and match_prompt(self.lines[j]) is None:
                if not fenced and j > out_start and self.cls(j) == "prose":
                    break
                j += 1
            out_end = j
            while out_end > out_start and self.cls(out_end - 1) == "blank":
                out_end -= 1
            if command:
                self.prompted(first, out_start, out_end, command, kind_of_prompt, host, fenced)
                pending = j
            else:
                # An empty prompt ("[root@host ~]#" alone) ends the previous
                # output; what follows is recognised by content.
                pending = out_start
                j = out_start
                while j < b and match_prompt(self.lines[j]) is None:
                    j += 1
                self.unprompted(pending, j, fenced=fenced, host=host)
                pending = j
        self.unprompted(pending, b, fenced=fenced, host=host)

    def prompted(self, first, out_start, out_end, command, prompt, host, fenced) -> None:
        output = self.text(out_start, out_end)
        kind = kind_for_command(command)
        if kind is None and output.strip():
            kind = detect_kind(self.head(out_start, out_end) if out_end - out_start > 200 else output)
        rest: tuple[int, int] | None = None
        if prompt == "shell" and kind is not None and out_end - out_start > 2:
            # the output may run straight into another pasted artifact
            cut = self.trailing_artifact(out_start, out_end, kind)
            if cut is not None:
                rest = (cut, out_end)
                out_end = cut
                while out_end > out_start and self.cls(out_end - 1) == "blank":
                    out_end -= 1
                output = self.text(out_start, out_end)
        if prompt == "sql":
            # The statement says what a result table is (plan_type counts,
            # proxy config, a timed CREATE INDEX), so SQL parsers get it too.
            start, text = first, self.text(first, out_end)
        else:
            start, text = out_start, output
        self.append_prompted(start, out_end, text, command, kind, prompt, host, fenced)
        if rest is not None:
            self.data_run(rest[0], rest[1], fenced=fenced, host=host)

    def trailing_artifact(self, a: int, b: int, kind: str) -> int | None:
        """First line after which the output of a ``kind`` command is another
        artifact (both sides must parse), or None."""
        budget = min(MAX_TRAILING_DETECT, self.detect_budget)
        whole: object = _UNSET
        previous = _shape(self.lines[a])
        for i in range(a + 1, b):
            if budget <= 0:
                return None
            if self.cls(i) == "blank":
                previous = None
                continue
            shape = _shape(self.lines[i])
            if shape == previous:
                continue
            previous = shape
            budget -= 1
            self.detect_budget -= 1
            other = detect_kind(self.head(i, b))
            if other is None or other == kind or not self.parses(other, i, b):
                continue
            # A detector reads ahead (from "node 0 cpus" it already sees the
            # "top -" below), so the cut is right only where the command's own
            # output, cut there, still parses to everything it says in full.
            if whole is _UNSET:
                whole = self.parsed_facts(kind, a, b)
            if whole is not None and self.parsed_facts(kind, a, i) == whole:
                return i
        return None

    def parsed_facts(self, kind: str, a: int, b: int) -> object:
        """The parse of lines ``a..b`` as ``kind`` without provenance, or None."""
        spec = parsers.REGISTRY.get(kind)
        if spec is None:
            return None
        self.detect_budget -= 1
        try:
            result = spec.func(self.text(a, b))
        except Exception:
            return None
        out = to_dict(result)
        if isinstance(out, dict):
            out.pop("source", None)
            out.pop("lines", None)
        return out

    def append_prompted(self, start, out_end, text, command, kind, prompt, host, fenced) -> None:
        self.blocks.append(
            Block(
                command=command,
                text=text,
                start_line=start + 1,
                end_line=max(out_end, start + 1),
                label=command[:200],
                kind=kind,
                prompt=prompt,
                host=host,
                fenced=fenced,
            )
        )

    # -- text without a prompt
    def unprompted(self, a: int, b: int, *, fenced: bool, host: str | None) -> None:
        if a >= b:
            return
        if fenced:
            self.data_run(a, b, fenced=True, host=host)
            return
        i = a
        while i < b:
            c = self.cls(i)
            if c == "blank":
                i += 1
                continue
            j = i + 1
            if c == "data":
                # blank lines inside a data run are kept when data follows
                while j < b and self.cls(j) != "prose":
                    j += 1
                end = j
                while end > i and self.cls(end - 1) == "blank":
                    end -= 1
                self.data_run(i, end, fenced=False, host=host)
            else:
                while j < b and self.cls(j) == "prose":
                    j += 1
                self.prose_run(i, j, host=host)
            i = j

    def data_run(self, a: int, b: int, *, fenced: bool, host: str | None) -> None:
        while a < b and self.cls(a) == "blank":
            a += 1
        while b > a and self.cls(b - 1) == "blank":
            b -= 1
        if a >= b:
            return
        kinds: list[str | None] = [None] * (b - a)
        # Content detection costs ~35 regex searches, so it runs only where the
        # shape of the lines changes (a new first word, after a blank line), at
        # most MAX_DETECT_PER_RUN times per run. Each such line is first tried
        # with the text up to the next change ("top - ..." alone is top even when
        # node meminfo lines follow), then with the rest of the run.
        candidates = [a]
        if b - a <= self.detect_lines:
            budget = min(MAX_DETECT_PER_RUN, max(self.detect_budget, 1))
            previous = _shape(self.lines[a])
            for i in range(a + 1, b):
                if self.cls(i) == "blank":
                    previous = None
                    continue
                shape = _shape(self.lines[i])
                if shape != previous and len(candidates) < budget:
                    candidates.append(i)
                previous = shape
        for index, i in enumerate(candidates):
            nxt = candidates[index + 1] if index + 1 < len(candidates) else b
            kind = detect_kind(self.head(i, nxt))
            if kind is None and nxt < b:
                kind = detect_kind(self.head(i, b))
                self.detect_budget -= 1
            self.detect_budget -= 1
            for j in range(i, nxt):
                kinds[j - a] = kind
        piece_start, piece_kind = a, kinds[0]
        for offset in range(1, b - a):
            k = kinds[offset]
            if k is None or k == piece_kind or k == kinds[offset - 1]:
                continue
            i = a + offset
            # Detectors look at a few lines and some fire on the middle of
            # another artifact (softirq rows look like interrupt rows), so a
            # split is kept only when both sides parse as what they look like.
            both_parse = self.parses(k, i, b) and self.parses(piece_kind, piece_start, i)
            if piece_kind is not None and not both_parse:
                continue
            self.emit_unprompted(piece_start, i, piece_kind, fenced, host)
            piece_start, piece_kind = i, k
        self.emit_unprompted(piece_start, b, piece_kind, fenced, host)

    def parses(self, kind: str, a: int, b: int) -> bool:
        spec = parsers.REGISTRY.get(kind)
        if spec is None or self.detect_budget <= 0:
            return False
        self.detect_budget -= 1
        from collectors.assemble import ParseTimeout, parse_budget, parse_time_budget

        seconds, max_bytes = parse_budget()
        text = self.text(a, b)
        if max_bytes > 0 and len(text) > max_bytes:
            return False
        try:
            with parse_time_budget(seconds):
                spec.func(text)
        except ParseTimeout:
            # Hostile input: check no further splits this way (run_parser then
            # reports the artifact with its own budget).
            self.detect_budget = 0
            return False
        except Exception as exc:  # ParseError, or a parser bug: either way not a split
            if type(exc).__name__ == "SoftTimeLimitExceeded":  # Celery's: the analysis is over
                raise
            return False
        return True

    def emit_unprompted(self, a: int, b: int, kind: str | None, fenced: bool, host: str | None) -> None:
        while b > a and self.cls(b - 1) == "blank":
            b -= 1
        if a >= b:
            return
        if kind is not None and b - a > 1 and not self.parses(kind, a, b):
            # Recognised from its first lines only (a "CPU0 CPU1" header alone
            # reads as /proc/interrupts); the whole piece may say better.
            whole = detect_kind(self.head(a, b))
            if whole is not None and whole != kind and self.parses(whole, a, b):
                kind = whole
        if kind is None:
            if not fenced and b - a <= MENTION_MAX_LINES:
                self.mentions(a, b, host=host)
            return
        self.blocks.append(
            Block(
                command=None,
                text=self.text(a, b),
                start_line=a + 1,
                end_line=b,
                label=kind,
                kind=kind,
                host=host,
                fenced=fenced,
            )
        )

    def prose_run(self, a: int, b: int, *, host: str | None) -> None:
        kind = detect_kind(self.head(a, b))
        if kind is None:
            self.mentions(a, b, host=host)
            return
        self.blocks.append(
            Block(
                command=None,
                text=self.text(a, b),
                start_line=a + 1,
                end_line=b,
                label=kind,
                kind=kind,
                host=host,
                prose=True,
            )
        )

    def mentions(self, a: int, b: int, *, host: str | None) -> None:
        """Artifacts quoted inside a sentence ("... mariadb server version:
        10.4.14-MariaDB-log ..."): each Latin-script stretch of a line with a
        digit is tried from each of its first few words."""
        for i in range(a, b):
            line = self.lines[i]
            if not any(c.isdigit() for c in line) or len(line) > 4096:
                continue
            for segment in _CJK_SPLIT.split(line):
                if len(segment) < 8 or not any(c.isdigit() for c in segment):
                    continue
                words = segment.split()
                for k in range(min(MENTION_MAX_WORDS, len(words))):
                    sub = " ".join(words[k:])
                    kind = detect_kind(sub)
                    if kind:
                        self.blocks.append(
                            Block(
                                command=None,
                                text=sub,
                                start_line=i + 1,
                                end_line=i + 1,
                                label=kind,
                                kind=kind,
                                host=host,
                                prose=True,
                            )
                        )
                        break
                else:
                    continue
                break


def split_transcript(text: str, *, detect_lines: int = 5_000, detect_budget: int = 2_000) -> list[Block]:
    """Blocks of a transcript in order (see the module docstring).

    ``detect_lines`` bounds the per-line content detection on long runs of
    output without prompts (beyond it a run is recognised from its head only);
    ``detect_budget`` bounds the number of mid-run detections in the whole text.
    """
    ensure_parsers()
    return _Splitter(text, detect_lines, detect_budget).run()


def prompt_hosts(blocks: list[Block]) -> list[str]:
    """Hostnames named by prompts, first seen first."""
    seen: list[str] = []
    for block in blocks:
        if block.host and block.host not in seen:
            seen.append(block.host)
    return seen


__all__ = [
    "Block",
    "detect_kind",
    "kind_for_command",
    "kind_for_path",
    "line_class",
    "match_prompt",
    "prompt_hosts",
    "split_transcript",
]
