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

import bisect
import functools
import itertools
import logging
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from collectors import parsers
from collectors.assemble import ParseTimeout, parse_budget, parse_time_budget
from collectors.facts import to_dict
from collectors.normalise import (
    LOG_PREFIXES,
    Normalised,
    line_indexes,
    lines_holding,
    normalise,
    strip_log_prefixes,
)
from collectors.normalise import STOPWORDS as _STOPWORDS
from collectors.parsers import pt_summary
from collectors.unused import other_system_output, unused_command, unused_output

log = logging.getLogger(__name__)

DETECT_HEAD_CHARS = 2048
DETECT_HEAD_LINES = 40
MENTION_MAX_LINES = 20  # undetected data runs longer than this are not searched for mentions
MENTION_MAX_WORDS = 6
MAX_SPLIT_BLOCKS = 20_000  # blocks per transcript; the rest is reported, not split
MAX_DETECT_PER_RUN = 8  # candidate starts per run of un-prompted data
MAX_TRAILING_DETECT = 4  # per prompted output
SENTENCE_MIN_WORDS = 6  # a "# command" heading over a sentence this long is not a root prompt
PROBE_HEAD_LINES = 8  # a probe for an artifact inside another one reads less
PROBE_HEAD_CHARS = 600
MAX_STRONG_STARTS = 3  # lines with an artifact's strong first line tried inside a run nothing detected
_FIRST_HEAD = (DETECT_HEAD_LINES, DETECT_HEAD_CHARS)  # what detection reads of a run's first line
_PROBE_HEAD = (PROBE_HEAD_LINES, PROBE_HEAD_CHARS)  # and of a later candidate
_UNSET = object()


@dataclass
class Block:
    command: str | None  # the command or SQL statement; None when recognised by content
    text: str  # what the parser gets
    start_line: int  # 1-based line of ``text``'s first line in the transcript
    end_line: int  # 1-based, inclusive
    label: str = ""  # command, or the kind for un-prompted blocks
    kind: str | None = None  # parser kind, None when not recognised
    prompt: str | None = None  # "shell", "sql" or None (none shown: a command alone on its line)
    host: str | None = None  # hostname read from the prompt
    fenced: bool = False
    prose: bool = False  # a prose paragraph that detected as an artifact
    # 1-based original line of each line of ``text`` when normalisation joined
    # or split lines (None: line k of ``text`` is ``start_line + k``)
    origins: list[int] | None = None
    # what the output is when Casebook recognises it but reads nothing of it
    # (collectors.unused: "systemctl", "sysbench"); ``kind`` is None then
    unused: str | None = None


# What each input line was read as (see :class:`Split`); a higher value wins
# where normalisation put several pieces on one original line. UNUSED: the
# output of a command Casebook recognises but does not read (collectors.unused).
PROSE, UNRECOGNISED, UNUSED, PROMPT, READ = 0, 1, 2, 3, 4


@dataclass
class Split:
    """The whole reading of a transcript: blocks, and for every ORIGINAL line
    what it was read as (``roles``), the unrecognised runs, and the hosts the
    prompts named (``segments``: ``(first original line, 0-based; host)``,
    a new entry where a prompt names a different host)."""

    blocks: list[Block]
    roles: bytearray
    unrecognised: list[tuple[int, int, str]]  # 1-based start, end, first line
    segments: list[tuple[int, str | None]]
    notes: list[str]
    # outputs recognised but not read: 1-based start, end, what they are
    unused: list[tuple[int, int, str]] = field(default_factory=list)
    # index in ``blocks`` -> what the block's parser returned when the splitter
    # already parsed exactly that text (checking a split): not parsed again
    parsed: dict[int, Any] = field(default_factory=dict, repr=False)

    @property
    def lines(self) -> int:
        return len(self.roles)


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
    compiled = _compile_all(registry, attr)
    _matchers[attr] = (len(registry), compiled)
    return compiled


def _compile_all(registry: dict[str, parsers.ParserSpec], attr: str) -> list[tuple[str, re.Pattern[str]]]:
    """``(kind, regex)`` for each pattern of the parsers' ``attr``, compiled;
    an invalid one is logged and left out."""
    compiled: list[tuple[str, re.Pattern[str]]] = []
    for spec in list(registry.values()):
        for pattern in getattr(spec, attr):
            try:
                compiled.append((spec.kind, re.compile(pattern)))
            except re.error:
                log.exception("parser %s has an invalid %s regex %r", spec.kind, attr, pattern)
    return compiled


_prose: tuple[int, re.Pattern[str]] | None = None


def _output_prose() -> re.Pattern[str]:
    """One pattern of every parser's ``prose_lines``: output lines that read
    like prose but belong to the artifact (see ``ParserSpec.prose_lines``)."""
    global _prose
    cached = _matchers.get("prose_lines")
    if _prose is not None and cached and cached[0] == len(parsers.REGISTRY):
        return _prose[1]
    compiled = _compiled("prose_lines")
    if _prose is None or _prose[0] != len(compiled):
        _prose = (len(compiled), _any_of(compiled))
    return _prose[1]


def _any_of(compiled: list[tuple[str, re.Pattern[str]]]) -> re.Pattern[str]:
    """One pattern matching where any of the ``compiled`` ones does (none: never)."""
    return re.compile("|".join(f"(?:{rx.pattern})" for _kind, rx in compiled) or r"(?!)")


def ensure_parsers() -> None:
    parsers.load_all()


_SUDO = re.compile(
    r"^(?:sudo(?:\s+-\S+)*|time|nohup|nice(?:\s+-n\s*-?\d+)?|ip\s+netns\s+exec\s+[\w.-]+"
    r"|(?:docker|podman)\s+exec(?:\s+-\w+)*\s+[\w.-]+)\s+"
)
# what separates the commands of one command line, outside quotes
_COMPOUND = re.compile(
    r"""(?:'[^']*'|"(?:[^"\\]|\\.)*"|\\.|(?P<sep>;|&&|\|\|)|(?P<comment>(?<=\s)#.*$)"""
    r"""|[^'"\\;&|#]+|.)"""
)
COMPOUND_LOOKAHEAD = 64  # output lines tried as where the next command's output starts
MAX_COMPOUND_PARTS = 8


def command_parts(command: str) -> list[str]:
    """The commands of one command line: ``a; b``, ``a && b``, ``a || b``
    (separators inside quotes do not count), without a trailing ``# comment``.
    A pipeline stays one command: its output is the first command's, filtered.

    >>> command_parts("tc qdisc show dev lo; ping -c 3 -q 127.0.0.1 | tail -1     # netem on")
    ['tc qdisc show dev lo', 'ping -c 3 -q 127.0.0.1 | tail -1']
    >>> command_parts("mysql -e 'show variables; show status'")
    ["mysql -e 'show variables; show status'"]
    """
    if len(command) > 4096 or not any(c in command for c in ";&|#"):
        return [command.strip()] if command.strip() else []
    out = [p.strip() for p in _cut_at_separators(command) if p.strip()]
    return out[:MAX_COMPOUND_PARTS]


def _cut_at_separators(command: str) -> list[str]:
    """The pieces of ``command`` between its separators outside quotes
    (:data:`_COMPOUND`), up to a trailing comment; unstripped, maybe empty."""
    parts: list[str] = []
    start = 0
    for m in _COMPOUND.finditer(command):
        if m.group("comment") is not None:
            parts.append(command[start : m.start()])
            start = len(command)
            break
        if m.group("sep") is not None:
            parts.append(command[start : m.start()])
            start = m.end()
    parts.append(command[start:])
    return parts


def kind_for_command(command: str) -> str | None:
    """The parser kind of a command line (``sudo``/``time`` prefixes ignored).
    Commands repeat (a session runs ``numastat`` every second), so answers
    are cached per registry size."""
    if len(command) > 4096:
        return None
    return _kind_for_command(command, len(parsers.REGISTRY))


@functools.lru_cache(maxsize=4096)
def _kind_for_command(command: str, _registry_size: int) -> str | None:
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
# the registry's parsers by priority: (the registry's specs, by identity; them sorted)
_by_priority: dict[str, tuple[tuple[int, ...], list[parsers.ParserSpec]]] = {}


def _detectors() -> list[parsers.ParserSpec]:
    """The registry's parsers, highest priority first and in registry order
    among equals (sorted again when the registry changes: the cache holds the
    specs it was made of, so no other object can take one's identity)."""
    specs = list(parsers.REGISTRY.values())
    key = tuple(map(id, specs))
    cached = _by_priority.get("specs")
    if cached is None or cached[0] != key:
        cached = _by_priority["specs"] = (key, sorted(specs, key=lambda spec: -spec.priority))
    return cached[1]


def detect_kind(text: str) -> str | None:
    """Like ``collectors.parsers.detect`` but a detector that raises on hostile
    text is skipped (and logged) instead of failing the upload. The detector
    of highest priority that fires wins, the first in registry order among
    equals: detectors are asked in that order, and the first that fires is it
    (the ones after it could not win)."""
    head = text[:8192]
    for spec in _detectors():
        if spec.detect is None or (spec.needles and not any(n in head for n in spec.needles)):
            continue  # (a head without any of its literals: the detector would not fire)
        if _fires(spec.kind, spec.detect, head):
            return spec.kind
    return None


def _fires(kind: str, detect: Callable[[str], bool], head: str) -> bool:
    """Whether the detector ``detect`` of ``kind`` fires on ``head``; one that
    raises does not (logged once per process, not per line)."""
    try:
        return bool(detect(head))
    except Exception:
        if kind not in _detect_failures:
            _detect_failures.add(kind)
            log.exception("detect() of parser %s raised", kind)
        return False


# ------------------------------------------------------------------ line classes

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
# Lines that start an artifact whatever the lines above them are, and its kind:
# lscpu's "Architecture:", numactl -H's "available: N nodes (...)", /proc/meminfo's
# "MemTotal:", top's first line. Another tool's report may print such an output
# inside its own (PyTorch's collect_env prints lscpu under its "CPU:" line), cut
# before the lines a detector needs::
#
#     Is XNNPACK available: True
#
#     CPU:
#     Architecture:                    aarch64
_STRONG_FIRST_LINES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("lscpu", re.compile(r"Architecture:[ \t]+\w")),
    ("numactl_hardware", re.compile(r"available: \d{1,5} nodes? \(")),
    ("meminfo", re.compile(r"MemTotal:[ \t]+\d+ kB")),
    ("top", re.compile(r"top - \d\d:\d\d:\d\d up ")),
)


def strong_first_line(line: str) -> str | None:
    """The kind of artifact that ``line`` starts whatever is above it, or None.

    >>> strong_first_line("Architecture:                    aarch64"), strong_first_line("CPU:")
    ('lscpu', None)
    """
    return next((kind for kind, rx in _STRONG_FIRST_LINES if rx.match(line)), None)


_FENCE_NEXT = re.compile(r"\n[ \t]{0,3}(?:`{3,}|~{3,})")


_BRACKET_PROMPT = re.compile(
    r"^\[(?P<user>[\w.\-]+)@(?P<host>[^\]\s]+)(?:\s[^\]]*)?\]\s*(?:(?P<sym>[#$%>])\s?(?P<cmd>.*))?$"
)
_USER_HOST_PROMPT = re.compile(
    r"^(?P<user>[\w.\-]+)@(?P<host>[\w.\-]+):(?P<path>[^\s#$]*)\s?[#$%]\s?(?P<cmd>.*)$"
)
# Gentoo's and bash's default "\u@\h \W \$": "user@host ~ $ cmd", "root@host /etc # cmd"
_USER_HOST_DIR_PROMPT = re.compile(
    r"^(?P<user>[\w.\-]+)@(?P<host>[\w.\-]+)[ \t]+(?P<path>~[^\s#$]*|/[^\s#$]*)[ \t]+[#$][ \t]?(?P<cmd>.*)$"
)
# Gentoo's root prompt "\h \W \$": "garfield ~ # cmd", "host /etc # cmd" (readk)
_HOST_DIR_PROMPT = re.compile(
    r"^(?P<host>[A-Za-z][\w.\-]{0,62})[ \t]+(?P<path>~[^\s#$]*|/[^\s#$]*)[ \t]+#(?:[ \t]+(?P<cmd>\S.*))?$"
)
# a line holding such a prompt (found by its " # ")
_HOST_DIR_HASH = re.compile(r"^[A-Za-z][\w.\-]{0,62}[ \t]+[~/][^\s#$]*[ \t]+#(?:[ \t]|$)", re.M)
# SUSE "host:~ # cmd"; the path class admits OCR damage such as `od01crmapp05:" # Iscpu`
# (a URL "https://host/path#anchor ..." is prose, not "host:path # cmd")
_HOST_PATH_PROMPT = re.compile(
    r"^(?!(?:https?|ftp|file|ssh|git|s3):/)(?P<host>[A-Za-z][\w.\-]*):(?P<path>[~\"'/][^\s#>]*)\s?[#>]\s?(?P<cmd>.*)$"
)
_DOLLAR_PROMPT = re.compile(r"^\$(?:\s?(?P<cmd>[A-Za-z./_~][^\n]*))?\s*$")
# a Python virtualenv or conda environment shown before the prompt: "(env)[root@host dir]# ",
# "(base) user@host:~$ "
_ENV_PREFIX = re.compile(r"^\([\w.\-]{1,64}\)\s?(?=\S)")
# oh-my-zsh's default theme, "➜  dir git:(branch) ✗ cmd", and starship's "❯ cmd"
_ZSH_PROMPT = re.compile(r"^➜\s+\S+(?:\s+git:\([^)\s]*\))?(?:\s+✗)?(?:\s+(?P<cmd>.*))?$")
_STARSHIP_PROMPT = re.compile(r"^❯(?:\s(?P<cmd>.*))?$")
# a shell's default prompt when no PS1 is set: "sh-4.4# " (oc debug node), "bash-5.1$ "
_SHELL_VERSION_PROMPT = re.compile(r"^(?:ba|z|k|da)?sh-\d{1,2}(?:\.\d{1,3}){0,2}[#$]\s?(?P<cmd>.*)$")
_HASH_PROMPT = re.compile(r"^#\s?(?P<cmd>[a-z./_][^\n]*)$")
# csh's and zsh's default prompt as books print it: "% iostat -xm 5"
_PERCENT_PROMPT = re.compile(r"^%[ \t](?P<cmd>[a-z./_][^\n]*)$")
# virsh's interactive shell: "virsh # vcpuinfo guest" (root), "virsh > list" (other users);
# read as the shell command "virsh vcpuinfo guest"
_VIRSH_PROMPT = re.compile(r"^virsh ?[#>](?: ?(?P<cmd>[a-z][a-z-]*(?:\s.*)?))?\s*$")
_SQL_PROMPT = re.compile(
    r"^(?P<client>mysql|mariadb|obclient|MySQL|MariaDB|OceanBase|obclient|tidb|TiDB)"
    r"(?:\s*\[(?P<db>[^\]]*)\])?(?:\s*\((?P<db2>[^)]*)\))?\s?>\s?(?P<cmd>.*)$"
)
# Oracle's SQL*Plus: "SQL> show parameter sga"
_SQLPLUS_PROMPT = re.compile(r"^SQL>[ \t]?(?P<cmd>.*)$")
# PowerShell's "PS C:\Users\me> cmd" (and "PS /home/me> " on Linux), cmd.exe's "C:\Users\>cmd"
_POWERSHELL_PROMPT = re.compile(r"^PS (?:[A-Za-z]:\\|/)[^>\n]{0,250}>\s?(?P<cmd>.*)$")
_CMD_EXE_PROMPT = re.compile(r"^[A-Za-z]:\\[^>\n]{0,250}>\s?(?P<cmd>.*)$")
# psql's "postgres=# show all;" (superuser), "app=> select 1;"
_PSQL_PROMPT = re.compile(r"^(?P<db>[A-Za-z_][\w$-]{0,62})=[#>](?:\s(?P<cmd>.*)|\s*$)")
# redis-cli's "127.0.0.1:6379> info memory", "redis 127.0.0.1:6379[2]> ", "not connected> ";
# read as the shell command "redis-cli info memory" (the server named is not this host)
_REDIS_PROMPT = re.compile(
    r"^(?:redis )?(?:(?:\d{1,3}(?:\.\d{1,3}){3}|localhost):\d{2,5}"
    r"(?:\[\d{1,2}\])?|redis-cli|not connected)>\s?(?P<cmd>.*)$"
)
# every prompt of match_prompt starts like this (a necessary condition only)
_PROMPT_START = re.compile(
    r"[\[$#(➜❯]|%[ \t][a-z./_]|(?:mysql|mariadb|obclient|MySQL|MariaDB|OceanBase|tidb|TiDB)"
    r"|virsh ?[#>]|SQL>|PS [A-Za-z/]|[A-Za-z]:\\|[A-Za-z_][\w$-]{0,62}=[#>]"
    r"|(?:redis )?(?:\d{1,3}(?:\.\d{1,3}){3}|localhost):\d|redis-cli>|not connected>"
    r"|[\w.\-]{1,64}@[\w.\-]{1,253}(?::|[ \t]+[~/])"
    r"|(?:ba|z|k|da)?sh-\d"
    r"|[A-Za-z][\w.\-]{0,253}:[~\"'/]"
    r"|[A-Za-z][\w.\-]{0,62}[ \t]+[~/][^\s#$]*[ \t]+#(?:[ \t]|$)"
)
_PROMPT_START_NEXT = re.compile("\n(?:" + _PROMPT_START.pattern + ")")
# the same lines found by three searches that skip most of the text at C speed:
# a line starting with a prompt character, virsh's or an SQL client's, or holding "@" or ":/"
_PROMPT_LEAD_NEXT = re.compile(
    r"\n(?:[\[$#(➜❯]|%[ \t][a-z./_]|(?:ba|z|k|da)?sh-\d|virsh ?[#>]|SQL>|PS [A-Za-z/]|[A-Za-z]:\\"
    r"|[A-Za-z_][\w$-]{0,62}=[#>]|(?:redis )?(?:\d{1,3}(?:\.\d{1,3}){3}|localhost):\d"
    r"|redis-cli>|not connected>|mysql|mariadb|obclient|MySQL|MariaDB|OceanBase|tidb|TiDB)"
)
_AT = re.compile("@")
_HOST_PATH = re.compile(r":[~\"'/]")
# a line of YAML front matter: "title: ...", "tags:", "    - NUMA", or blank
_FRONT_MATTER_LINE = re.compile(r"^(?:[A-Za-z_][\w-]{0,40}:(?:[ \t].*)?|[ \t]*-[ \t].*|[ \t]*)$")
FRONT_MATTER_MAX_LINES = 60
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
        "swapon",
        "swapoff",
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
        # other tools of the systems a support engineer looks at, by family: disks and
        # storage, hardware, time and system state, network, monitors, virtualisation
        # and containers, databases' own clients and servers (their output is not read,
        # but a line naming one alone is a command, and what it printed is its output)
        *[
            "lsscsi",
            "smartctl",
            "hdparm",
            "nvme",
            "multipath",
            "mdadm",
            "dmsetup",
            "blkid",
            "findmnt",
            "xfs_info",
            "tune2fs",
            "zpool",
            "zfs",
            "pvdisplay",
            "vgdisplay",
            "lvdisplay",
            "lsusb",
            "lsipc",
            "lsmem",
            "lsinitrd",
            "sensors",
            "ipmitool",
            "edac-util",
            "mcelog",
            "turbostat",
            "powertop",
            "x86_energy_perf_policy",
            "chronyc",
            "ntpq",
            "timedatectl",
            "hostnamectl",
            "sestatus",
            "getenforce",
            "ifconfig",
            "route",
            "arp",
            "brctl",
            "bridge",
            "ovs-vsctl",
            "tcpdump",
            "iptables",
            "nft",
            "firewall-cmd",
            "nmcli",
            "ifstat",
            "atop",
            "nmon",
            "glances",
            "iotop",
            "dstat",
            "watch",
            "strace",
            "ltrace",
            "pmap",
            "pstree",
            "slabtop",
            "virt-host-validate",
            "virt-top",
            "virt-install",
            "qemu-system-x86_64",
            "qemu-kvm",
            "docker",
            "podman",
            "kubectl",
            "crictl",
            "mysqld",
            "mysqld_safe",
            "mongod",
            "mongo",
            "mongosh",
            "redis-cli",
            "redis-server",
            "psql",
            "pg_ctl",
            "sqlplus",
            "srvctl",
            "crsctl",
            "lsnrctl",
            "obd",
        ],
    ]
)

_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
_CJK_CHARS = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\u3040-\u30ff\uac00-\ud7af]")
# a CJK, kana or Hangul character (what :func:`_cjk_prose` is tried on)
_CJK_ANY = re.compile(r"[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef]")
_HIRAGANA = re.compile(r"[\u3041-\u309f]")
_CJK_SPLIT = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]+")
_KEY_VALUE_CJK = re.compile(r"^[^:：]{1,40}[:：]\s*\S")
_LOG_START = re.compile(r"^(\d|[A-Z][a-z]{2} +\d)")
# "name value" rows of a variables dump whose tabs became spaces: a snake_case
# name, then a value of at most three words or after a gap of 2+ spaces
# (or a lower-case name and one value with a digit or punctuation: "basedir /usr")
_IDENTIFIER = re.compile(
    r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?:(?: \S+){1,3}|  +\S.*)?"
    r"|(?!(?:the|a|an|of|to|and|or|is|in|for|on|by|at) )[a-z][a-z0-9]*"
    r"(?: +(?![:：]$)[^\sA-Za-z]\S*| +[A-Za-z]+[^\sA-Za-z.,;:!?]\S*| {2,}\S.*)"
)


# A line holding one of these is data whatever else it holds: a tab, a gap of
# 3+ spaces, table or markup characters, a [bracketed-word]
# a Markdown image or link on a line of its own ("![image](https://...png)"); "![]()" is an
# image whose address was lost, "[![logo](img)](page)" a linked image (a page's logo)
_MD_LINK_LINE = re.compile(
    r"!?\[(?:[^\]\n]{0,200}|!\[[^\]\n]{0,200}\]\([^)\s]{0,2000}\))\]\([^)\s]{0,2000}\)"
)
_DATA_MARK = re.compile(r"\t|\S {3,}\S|[|=<>{}]|\[[\w\-]+\]")
_DIGIT = re.compile(r"\d")
_ALNUM = re.compile(r"[^\W_]")
LONG_LINE = 4096  # a longer line is data (a log or a dump pasted without newlines), never prose
_SHAPE_CUT = re.compile(r"[.:=\[(,]")


def _shape(line: str) -> str:
    """The first word with digits folded and cut at punctuation:
    ``Node 1 MemFree:`` and ``Node 1 MemUsed:`` share a shape, ``top - ...`` does not."""
    token = line.split(None, 1)[0] if line.strip() else ""
    token = _SHAPE_CUT.split(token, 1)[0] or token[:1]
    return re.sub(r"\d+", "9", token.lower())[:16]


_KEY_COLON = re.compile(r"[A-Za-z][\w ()./-]{0,40}:(?:\s|$)")


def _form(line: str) -> str:
    """A coarse class of a line's start: indented, digit, letter, markup or
    table, punctuation. ``lscpu`` or ``sysctl -a`` keep one form throughout;
    ``top -`` after numactl's ``  1:  21  10`` rows changes it."""
    c = line[:1]
    if c.isdigit():
        return "d"
    if c.isalpha():
        return "k" if _KEY_COLON.match(line) else "a"
    return _FORM_BY_START.get(c, "p")


# the form of a line by its first character, when not a digit nor a letter
# (an empty line's is "x", as a line of markup)
_FORM_BY_START = {" ": "s", "\t": "s", "<": "x", "": "x", "+": "t", "|": "t", "-": "t", "=": "t"}


# The starts of the lines that may have each form (a superset, at C speed;
# the form is then taken with _form): anything not ASCII may be a digit or a letter.
_FORM_STARTS = {
    "s": r"[ \t]",
    "d": r"[0-9]|[^\x00-\x7f]",
    "k": _KEY_COLON.pattern.replace("$", "\\Z"),
    "a": "(?!" + _KEY_COLON.pattern.replace("$", "\\Z") + r")[A-Za-z]|[^\x00-\x7f]",
    "x": r"<",
    "t": r"[+|\-=]",
    "p": r"[^ \t0-9A-Za-z<+|\-=]",
}


@functools.lru_cache(maxsize=128)
def _new_form_or_blank(seen: frozenset[str]) -> re.Pattern[str]:
    """A newline before a blank line or a line whose form may not be in ``seen``."""
    starts = [_FORM_STARTS[form] for form in sorted(_FORM_STARTS) if form not in seen]
    return re.compile(r"\n(?=[^\S\n]*(?:\n|\Z)" + "".join(f"|{x}" for x in starts) + ")")


def _index(items: list[Any], value: Any, start: int) -> int:
    """``items.index(value, start)`` (a search at C speed), or -1."""
    try:
        return items.index(value, start)
    except ValueError:
        return -1


def _command_words(cmd: str) -> str:
    """The command's name, after its ``sudo``/``time`` prefixes and path.

    >>> _command_words("sudo sysctl vm.overcommit_memory=1"), _command_words("/usr/bin/numactl -H")
    ('sysctl', 'numactl')
    """
    cmd = cmd.strip()
    while (stripped := _SUDO.sub("", cmd, count=1)) != cmd:
        cmd = stripped
    first = cmd.split(None, 1)[0] if cmd else ""
    return first.rsplit("/", 1)[-1]


# the name of a program as typed (after its path): a word starting with a lower-case letter
_PROGRAM = re.compile(r"[a-z][\w.+\-]{0,63}")
# the shell's own words: what follows them is a loop's or a test's output, not a program's
_SHELL_WORDS = frozenset(
    ["for", "while", "until", "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "function"]
)


def program_name(command: str) -> str | None:
    """The program a shell command line runs (:func:`_command_words`: after
    ``sudo``/``time`` and a path), or ``None`` when its first word is not a
    program's name (a loop, a variable, a sentence that looked like a command).

    >>> program_name("sudo lsscsi -g"), program_name("./mlc --latency_matrix")
    ('lsscsi', 'mlc')
    >>> program_name("for i in 1 2; do echo $i; done"), program_name("FOO=1"), program_name("Note that")
    (None, None, None)
    """
    name = _command_words(command)
    return name if _PROGRAM.fullmatch(name) and name not in _SHELL_WORDS else None


COMMENT_LOOKAHEAD = 12  # lines looked at past a comment for the data it introduces
_FILE_READERS = frozenset(["cat", "less", "more", "head", "tail", "grep", "egrep", "zcat", "zgrep"])


BARE_COMMAND_MAX_LINES = 3
OTHER_SYSTEM_HEAD_LINES = 6  # lines of an output looked at for another system's header
PROPOSAL_MAX_LINES = 12
# a sentence that introduces configuration to add: it ends with a colon and says
# to add, append or write the lines below (English, Chinese)
_PROPOSES = re.compile(
    r"(?i)(?:\b(?:add|append|insert|put|write)\b[^.!?]{0,100}"
    r"|(?:添加|加入|追加|增加|写入|修改为|改为|改成|设置为|设为)[^。！？]{0,40})[:：]\s*$"
)


# an author's label between a command and what it printed ("Sample output:", "The output
# looks like:", "输出如下：", "出力例:")
_OUTPUT_LABEL = re.compile(
    r"(?i:(?:(?:sample|example|typical|expected|the)[ \t]+)?output(?:[ \t]+(?:is|looks like|was|will be))?"
    r"(?:[ \t]+(?:as[ \t]+)?(?:follows|below|like this))?)[ \t]*[:：]"
    r"|(?:输出|結果|结果|显示|返回)(?:如下|结果|示例|内容)?[ \t]*[:：]|出力(?:例|結果)?[ \t]*[:：]"
)

# a value a cat of a sysfs or proc file prints alone on its line ("powersave",
# "[mq-deadline] none"), or an author's elision of such lines (":", "...")
_VALUE_LINE = re.compile(
    r"[ \t]*(?:[A-Za-z0-9_\[\].\-]{1,40}(?:[ \t]+[A-Za-z0-9_\[\].\-]{1,40}){0,2}|:|\.{2,}|…|⋮)[ \t]*"
)

# a numbered step of a guide: "1. ", "2) ", "3、"
_STEP = re.compile(r"\d{1,2}[.)、][ \t]*")


def _bare_command(line: str) -> bool:
    """A command line quoted without a prompt (``lscpu -e``, ``echo 10 > /sys/...``):
    a command Casebook knows by name, then its arguments; also a guide's numbered
    step naming one, or the file a parser reads (``1. free``, ``1. /proc/meminfo``).

    >>> _bare_command("1. free"), _bare_command("2. /proc/vmstat"), _bare_command("1. Setup cmdline")
    (True, True, False)
    """
    s = line.strip()
    step = _STEP.match(s)
    if step is not None:
        s = s[step.end() :]
        if s.startswith("/") and kind_for_path(s) is not None:
            return True
    return _starts_like_a_command(s) and _is_command(s)


def _starts_like_a_command(s: str) -> bool:
    """Whether the stripped line ``s`` may be a command: at most 300
    characters, no CJK, starting with a lowercase letter."""
    return bool(s) and len(s) <= 300 and not _CJK.search(s) and s[0].isalpha() and s[0].islower()


# the colon after a command that labels the output under it ("cat /sys/block/sda/queue/scheduler:")
_LABEL_COLON = re.compile(r"(?<!:)[ \t]*:$")


def _lone_command(line: str) -> bool:
    """A command alone on its line (:func:`_bare_command`) that starts with a
    command's name, not a guide's numbered step nor a sentence naming a file.

    >>> _lone_command("vmstat 1"), _lone_command("extract of cat /proc/meminfo"), _lone_command("1. free")
    (True, False, False)
    """
    name = _command_words(line)
    known = name in COMMON_COMMANDS or kind_for_command(name) is not None
    return known and _bare_command(line) and not _STEP.match(line.strip())


def _shows_a_file(command: str) -> bool:
    """``cat /etc/my.cnf``, ``grep -v ^$ /etc/sysctl.conf``: a command printing a
    file that a parser reads (its kind is known from the path)."""
    return _command_words(command) in _FILE_READERS and kind_for_command(command) is not None


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith(("#", ";"))


# what a failed command prints instead of its output: virsh's "error: ...", a shell's
# "bash: numastat: command not found", a tool's "numactl: ... No such file or directory"
_FAILURE_LINE = re.compile(
    r"^(?:error:|ERROR:|fatal:|E: |-?(?:ba|z|k|da)?sh: |sudo: "
    r"|[\w./-]{1,64}: (?:command not found|not found|Permission denied|No such file or directory|cannot ))"
)


def command_failure(text: str) -> str | None:
    """The first line of an output made only of error lines (a command that
    failed), else ``None``.

    >>> command_failure("error: Failed to retrieve CPU statistics for domain 'win11'\\n"
    ...                 "error: Operation not supported: operation not supported for backend 'cgroup V2'")
    "error: Failed to retrieve CPU statistics for domain 'win11'"
    >>> command_failure("actual 8388608\\nrss 8168560") is None
    True
    """
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not 0 < len(lines) <= 10 or not all(_FAILURE_LINE.match(ln) for ln in lines):
        return None
    return lines[0][:200]


_HEADING = re.compile(r"^#{2,6}[ \t]+(?P<cmd>[a-z./_][^\n]{0,300}?)[ \t#]*$")


# a Markdown heading in words ("# PC-011 — Redis memory-overcommit warning at startup",
# "# [numastat]Add more info to list of known fields in meminfo"): not a sentence's end,
# no table or column gap
_TITLE = re.compile(r"#{1,6}[ \t]+(?P<text>[^\s#|][^\t|]{0,300}?)[ \t#]*")


def title_heading(line: str) -> bool:
    """Whether ``line`` is a Markdown heading in words, not a command (``# numactl -H``
    is a root prompt, ``## cat /proc/meminfo`` names the output below it) nor a
    sentence-ending comment. The splitter reads it as prose where it stands alone
    (a blank line, prose or the text's edge on both sides), never inside a
    configuration file whose comments touch its settings.

    >>> title_heading("# fix vm.overcommit_memory = 1 in docker logs")
    True
    >>> title_heading("# numactl -H"), title_heading("# Added by the installer.")
    (False, False)
    """
    m = _TITLE.fullmatch(line.strip())
    if m is None:
        return False
    text = m.group("text")
    return not text.endswith((".", ",", ";")) and not _GAP.search(text) and not _is_command(text)


def _is_command(cmd: str) -> bool:
    return _command_words(cmd) in COMMON_COMMANDS or kind_for_command(cmd) is not None


def heading_command(line: str) -> str | None:
    """The command a Markdown heading names (``### cat /proc/meminfo``): the
    output below it is that command's. ``# cmd`` is a root prompt already
    (:func:`match_prompt`); a heading in words names none.

    >>> heading_command("### cat /proc/meminfo")
    'cat /proc/meminfo'
    >>> heading_command("## numactl -H ##"), heading_command("## Background") is None
    ('numactl -H', True)
    """
    m = _HEADING.match(line) if line.startswith("##") else None
    if m is None:
        return None
    cmd = m.group("cmd").strip()
    return cmd if _is_command(cmd) else None


def _to_next_prompt(command: str, fenced: bool) -> bool:
    """Whether the output of ``command`` runs to the next prompt whatever its
    lines read like: in a fence, or a section of pt-summary's report."""
    return fenced or command.startswith(pt_summary.SECTION_PREFIX)


# a fence's info string: a language, then maybe a title, then the command
_FENCE_INFO = re.compile(r"^\s{0,3}(?:`{3,}|~{3,})\s*(?P<info>[^`\n]{1,300})$")
_FENCE_LANGUAGES = frozenset(
    {"sh", "bash", "shell", "console", "shell-session", "shellsession", "zsh", "text", "txt", "plaintext"}
    | {"terminal", "output", "log", "none", "plain", "sql", "mysql", "psql"}
)


def _fence_info_command(line: str) -> str | None:
    """The command a fence's info string names (```` ```sh numactl -H ````,
    ```` ```console title="$ lscpu" ````), or None (```` ```bash ```` alone).

    >>> _fence_info_command("```console title='numactl -H'"), _fence_info_command("```bash") is None
    ('numactl -H', True)
    """
    m = _FENCE_INFO.match(line)
    if m is None:
        return None
    info = _info_text(m.group("info"))
    return info if info and _is_command(info) else None


def _info_text(info: str) -> str:
    """What a fence's info string says after its language: the text of a
    ``title=`` in quotes, without a prompt's ``$`` or ``#``."""
    info = info.strip().strip("{}")
    first, _, rest = info.partition(" ")
    if first.lower() in _FENCE_LANGUAGES:
        info = rest.strip()
    if info.startswith("title="):
        info = info[len("title=") :].strip("\"'")
    return re.sub(r"^[$#]\s?", "", info).strip()


def match_prompt(line: str) -> tuple[str, str, str | None] | None:
    """``(prompt kind, command, host)`` when ``line`` is a prompt line.

    >>> match_prompt("[root@zstack-9 ~]# virsh version")
    ('shell', 'virsh version', 'zstack-9')
    >>> match_prompt("MariaDB [infoplus-v2]> select 1;")
    ('sql', 'select 1;', None)
    >>> match_prompt("(env)[root@host conductor]# virsh nodeinfo")
    ('shell', 'virsh nodeinfo', 'host')
    >>> match_prompt("➜  ~ virsh domstats")
    ('shell', 'virsh domstats', None)
    >>> match_prompt("virsh # vcpuinfo guest")
    ('shell', 'virsh vcpuinfo guest', None)
    >>> match_prompt("SQL> show parameter sga;")
    ('sql', 'show parameter sga;', None)
    >>> match_prompt("% iostat -xm 5")
    ('shell', 'iostat -xm 5', None)
    """
    line = line.rstrip()
    if not line or len(line) > 4096:
        return None
    head = line[0]
    read_lead = _PROMPT_BY_LEAD.get(head)
    if read_lead is not None:
        return read_lead(line)
    if _RIGHT_PAD in line and (right := _RIGHT_PROMPT.search(line)) is not None:
        return _left_of_right_prompt(line[: right.start()])
    return _first_prompt(line, _PROMPTS_BY_HEAD.get(head, _OTHER_PROMPTS)) or _host_dir_prompt(line)


# (pattern, prompt kind, what the command is prefixed with); the host is the
# pattern's "host" group when it has one
_PromptForm = tuple[re.Pattern[str], str, str]
# a prompt starting with one of these characters is one of these forms or none
_PROMPTS_BY_HEAD: dict[str, tuple[_PromptForm, ...]] = {
    "➜": ((_ZSH_PROMPT, "shell", ""), (_STARSHIP_PROMPT, "shell", "")),
    "❯": ((_ZSH_PROMPT, "shell", ""), (_STARSHIP_PROMPT, "shell", "")),
    "[": ((_BRACKET_PROMPT, "shell", ""),),
    "$": ((_DOLLAR_PROMPT, "shell", ""),),
}
# the other prompts, tried in this order
_OTHER_PROMPTS: tuple[_PromptForm, ...] = (
    (_SHELL_VERSION_PROMPT, "shell", ""),
    (_VIRSH_PROMPT, "shell", "virsh "),  # read as the shell command "virsh vcpuinfo guest"
    (_SQL_PROMPT, "sql", ""),
    (_SQLPLUS_PROMPT, "sql", ""),
    (_PSQL_PROMPT, "sql", ""),
    (_REDIS_PROMPT, "shell", "redis-cli "),  # read as the shell command "redis-cli info"
    (_POWERSHELL_PROMPT, "shell", ""),
    (_CMD_EXE_PROMPT, "shell", ""),
    (_USER_HOST_PROMPT, "shell", ""),
    (_USER_HOST_DIR_PROMPT, "shell", ""),
    (_HOST_PATH_PROMPT, "shell", ""),
)


def _first_prompt(line: str, forms: tuple[_PromptForm, ...]) -> tuple[str, str, str | None] | None:
    """The prompt of the first of ``forms`` that ``line`` matches, or None."""
    for pattern, kind, prefix in forms:
        m = pattern.match(line)
        if m:
            return kind, f"{prefix}{m.group('cmd') or ''}".strip(), m.groupdict().get("host")
    return None


def _prompt_after_env(line: str) -> tuple[str, str, str | None] | None:
    """A prompt after a virtualenv's name: ``(env)[root@host dir]# cmd``."""
    env = _ENV_PREFIX.match(line)
    rest = line[env.end() :] if env else ""
    return match_prompt(rest) if rest and rest[0] != "(" else None


def _host_dir_prompt(line: str) -> tuple[str, str, str | None] | None:
    """Gentoo's root prompt ``garfield ~ # sysctl vm.swappiness``: a prompt only
    when what follows ``#`` is a command (``The ~ # sign`` is not).

    >>> _host_dir_prompt("garfield ~ # sysctl vm.swappiness"), _host_dir_prompt("The ~ # sign")
    (('shell', 'sysctl vm.swappiness', 'garfield'), None)
    """
    m = _HOST_DIR_PROMPT.match(line)
    if m is None:
        return None
    cmd = (m.group("cmd") or "").strip()
    if cmd and not _is_command(cmd):
        return None
    return "shell", cmd, m.group("host")


# a right-hand prompt (zsh's RPROMPT) that the terminal padded the line with spaces up to:
# "[14:58:16]", "[±master]", "03:04:47 PM" (readk)
_RIGHT_PAD = " " * 8
_RIGHT_PROMPT = re.compile(
    r"(?<=\S)[ \t]{8,}(?:\[[^\]\n]{1,40}\]?|\d{1,2}:\d\d(?::\d\d)?(?:[ \t]?[AP]M)?)[ \t]*$"
)
# the first line of a two-line prompt, left of its right-hand prompt: "user@host ~/dir",
# "~/.dotfiles main !12 ?5" (a directory and its git status)
_PROMPT_FIRST_LINE = re.compile(
    r"^(?:(?P<user>[\w.\-]+)@(?P<host>[\w.\-]+)[ \t]+)?(?P<path>[~/]\S*)(?:[ \t]+[^\s$#%>]{1,40}){0,4}$"
)


def _left_of_right_prompt(left: str) -> tuple[str, str, str | None] | None:
    """The prompt left of a right-hand prompt: the command without it, or the
    first line of a two-line prompt (it names the host; the command is on the next line).

    >>> _left_of_right_prompt("junchao@arch6k ~/work/ruapu"), _left_of_right_prompt("$lscpu")
    (('shell', '', 'arch6k'), ('shell', 'lscpu', None))
    """
    if (first := _PROMPT_FIRST_LINE.match(left)) is not None:
        return "shell", "", first.group("host")
    return match_prompt(left)


def _hash_prompt(line: str, form: re.Pattern[str]) -> tuple[str, str, str | None] | None:
    """``# cmd`` (or csh's ``% cmd``), a prompt only when ``cmd`` is a command
    (not a comment, not a percentage)."""
    m = form.match(line)
    if m is None:
        return None
    cmd = m.group("cmd").strip()
    if _is_command(cmd):
        return "shell", cmd, None
    return None


def _hash_line_prompt(line: str) -> tuple[str, str, str | None] | None:
    """The prompt of a line starting with ``#``: a pt-summary section header
    (``# Top Processes #####``) names what prints below; else a root prompt
    (:func:`_hash_prompt`)."""
    section = pt_summary.report_section(line)
    return ("shell", section, None) if section else _hash_prompt(line, _HASH_PROMPT)


# a line starting with one of these characters is this reader's prompt or none
_PROMPT_BY_LEAD: dict[str, Callable[[str], tuple[str, str, str | None] | None]] = {
    "(": _prompt_after_env,  # "(env)[root@host conductor]# ..."
    "#": _hash_line_prompt,
    "%": functools.partial(_hash_prompt, form=_PERCENT_PROMPT),  # csh's "% iostat -xm 5"
}


# Markdown inside a sentence: inline code, a link or image (its text kept), bold
_MD_INLINE = re.compile(r"`[^`\n]{0,300}`|!?\[([^\]\n]{0,200})\]\([^)\s]{0,2000}\)|\*\*|__")
# what starts a heading, a quote, a list item or a numbered step: "## ", "> ", "- ",
# "1. ", "2、", "(3) ", "一、"
_LINE_MARK = re.compile(
    r"^(?:#{1,6}[ \t]+|>[ \t]*|[-*+][ \t]+|\d{1,3}[.、)）][ \t]*|[（(]\d{1,3}[)）][ \t]*"
    r"|[一二三四五六七八九十]{1,3}[、.．][ \t]*)"
)
_GAP = re.compile(r"\S {3,}\S|\t")
# a Markdown list item or quote: "* numa_hit", "- item", "> quoted"
_MARKUP_START = re.compile(r"[ \t]{0,3}(?:[-*+][ \t]+\S|>[ \t]?\S)")
# the people a reply is addressed to ("@zx4i    "), before its text
_MENTIONS = re.compile(r"(?:@[\w-]{1,39}[ \t]+)+")
# an English term glossed in Chinese or Japanese ("buffer pool(缓冲池)", "Page Cache（页缓存）",
# "SMP (对称多处理器结构: Symmetric Multi-Processor)"), or the other way ("字节(Byte)")
_GLOSSED_TERM = re.compile(
    r"[A-Za-z][\w -]{0,40}[(（][ \t]?[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]{1,12}[)）:：]"
    r"|[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff][(（][A-Za-z][A-Za-z -]{0,40}[)）]"
)
_CJK_SENTENCE_END = ("。", "！", "？", "；", "…", "：", ":")
CJK_PROSE_MIN = 4  # CJK characters of a sentence (2 with a link or a sentence mark)


def _inline_text(m: re.Match[str]) -> str:
    """What a Markdown inline construct reads as in a sentence: a word for inline
    code, a link's text, nothing for bold markers."""
    if m.group(0).startswith("`"):
        return "code"
    return m.group(1) or ""


def _cjk_prose(s: str) -> bool:
    """Whether a stripped line holding CJK text is a sentence, a heading or a
    list item of a post (Markdown links, inline code and step numbers allowed)
    rather than an output in a CJK locale (``型号名称：   Intel(R) ...``, whose
    columns are aligned with gaps, or ``key：value`` with a short value).

    >>> _cjk_prose("1. 执行 `numactl -H` 查看节点，详见[官方文档](https://example.com/numa)。")
    True
    >>> _cjk_prose("型号名称：                       Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz")
    False
    >>> _cjk_prose("虚拟化类型：完全")
    False

    Korean and Japanese too (``본문 바로가기``, a page's chrome), a Japanese
    fragment around a word the page set as code (``と ns2``: a particle in
    hiragana, which no tool prints alone), a reply to someone (``@name    非常感谢...``)
    and a label over terms glossed in Chinese (``InnoDB内存包括: buffer pool(缓冲池), ...``).

    >>> _cjk_prose("본문 바로가기"), _cjk_prose("と ns2"), _cjk_prose("@zx4i    非常感谢你的反馈。")
    (True, True, True)
    >>> _cjk_prose("InnoDB内存包括: buffer pool(缓冲池), redo log buffer")
    True
    """
    links = "](" in s
    text = _MD_INLINE.sub(_inline_text, s)
    text = _LINE_MARK.sub("", _MENTIONS.sub("", text.strip())).strip()
    if not text or _GAP.search(text):
        return False
    if len(_CJK_CHARS.findall(text)) < _cjk_prose_min(text, links):
        return False
    return not _cjk_label_value(text)


def _cjk_sentence(s: str) -> bool:
    """Whether the stripped line ``s`` holds CJK text and is prose (:func:`_cjk_prose`)."""
    return _CJK_ANY.search(s) is not None and _cjk_prose(s)


def _cjk_prose_min(text: str, links: bool) -> int:
    """How many CJK characters make ``text`` (its markup gone) a sentence: one
    with hiragana, two when a link or a sentence's mark says so, else
    :data:`CJK_PROSE_MIN`."""
    if _HIRAGANA.search(text):
        return 1
    marked = links or text.endswith(_CJK_SENTENCE_END) or "，" in text or "。" in text
    return 2 if marked else CJK_PROSE_MIN


def _cjk_label_value(text: str) -> bool:
    """Whether ``text`` is a CJK label and a short value, an output's line in a
    CJK locale (``虚拟化类型：完全``, ``型号名称：Intel(R) ...``): not a
    sentence, the value of fewer than five CJK characters and no comma, naming
    no command and glossing no term."""
    if not _KEY_VALUE_CJK.match(text) or text.endswith(_CJK_SENTENCE_END):
        return False
    value = re.split(r"[:：]", text, maxsplit=1)[1]
    if len(_CJK_CHARS.findall(value)) >= 5 or "，" in value:
        return False
    return not _names_a_command(value) and _GLOSSED_TERM.search(text) is None


# a link on a line of its own, a Markdown bold heading ("**Test:**"), a list item or
# numbered step in words ("- Add new per-process NUMA maps metrics ...", "1. flash dasharo")
_URL_LINE = re.compile(r"<?(?:https?|ftp)://[^\s<>]{1,2000}>?")
# a reference: a few words, then links ("See: https://...", "Ref From https://...",
# "Redis 5.0 related issue: https://...",
# "Links: https://... and https://..."), or a Markdown link definition ("[亲和性]:http://...")
_REFERENCE = re.compile(
    r"(?:[A-Za-z0-9][\w.'-]{0,30}[ \t]){0,5}[A-Za-z][\w'-]{0,30}:?[ \t]+"
    r"<?(?:https?|ftp)://[^\s<>]{1,2000}>?(?:[ \t]+and[ \t]+<?(?:https?|ftp)://[^\s<>]{1,2000}>?)?"
    r"|\[[^\]\n]{1,80}\]:[ \t]*<?(?:https?|ftp)://[^\s<>]{1,2000}>?"
)
# (a thread's turn names its writer so, maybe with a role: "**SE-Bin** (author):")
_BOLD_LINE = re.compile(
    r"(\*\*|__)(?=\S)[^*_\n]{1,120}(?<=\S)\1"
    r"(?:[ \t]\((?:author|member|collaborator|contributor|owner|maintainer)\))?[:.]?"
)
# a write-up's field: a bold label and its value, in a list or not ("- **大小**: 2 GB",
# "**配置时间**: 2026-01-18 00:02 UTC")
_BOLD_LABEL = re.compile(r"(?:[-*+][ \t]+)?\*\*(?=\S)[^*\n]{1,60}(?<=\S)\*\*[:：][ \t]*\S.{0,300}")
# a page's or a thread's metadata: fields joined by " · " ("owner/repo · issue #685 · closed ·
# JavaScript", "Oratorian · comment · 2017-10-26", "张三 · 2023-05-22 · 阅读 1234"), the last
# field possibly cut off ("Rooie ·"); no field is a column of a table (no gap, no tab)
_BYLINE_FIELD = r"[^\s·](?:[^\t·]{0,78}[^\s·])?"
_BYLINE = re.compile(rf"{_BYLINE_FIELD}(?: · {_BYLINE_FIELD}){{1,7}}(?: ·)?|{_BYLINE_FIELD} ·")
# a Chinese page's byline with its reading counter: "wmui / 3343人阅读", "作者 · 阅读 1234"
_BYLINE_ZH = re.compile(
    r"[^\s/·]{1,40}(?: [/·] [^\s/·]{1,40}){0,4} [/·] (?:\d{1,9} ?人阅读|阅读(?:数|量)?[:：]? ?\d{1,9})"
)
# a page's or a thread's tags: "labels: bug, reliability", "Tags: linux, numa", "标签：内存",
# an issue's labels as ``gh issue view`` prints them ("labels:\tbug", "labels: operator,
# platform, Priority: High"); names and commas only (no "=", braces or brackets of a YAML
# or Kubernetes "labels:" map)
_TAG = r"[^\t,={}\[\]<>|]"
_TAGS_LINE = re.compile(
    rf"(?i:labels|tags|标签)[:：][ \t]?[^\s,=:{{}}\[\]<>|]{_TAG}{{0,40}}(?:, ?{_TAG}{{1,40}}){{0,15}}"
)
# a line of a web page's markup: only HTML tags of text (headings, lists, paragraphs,
# emphasis, images: a thread's ``<img alt="..." src="..." />``) around words, never an XML
# document's elements ("<h3>2.4.1 Intel CPU node</h3>",
# "<ul>", "</li>", "<li>CPU 频率范围硬限制：<code>800MHz - 3.4GHz</code>"); a post's own
# HTML table too, as pandoc writes a Markdown table it cannot keep ("<col style="width: 14%" />",
# "<td>59秒 IPC 0.56</td>"): the write-up's table, like a Markdown one, not a tool's output
_HTML_TEXT_TAG = (
    r"</?(?:h[1-6]|ul|ol|li|p|div|span|strong|b|em|i|mark|code|a|blockquote|br|hr|details|summary"
    r"|table|thead|tbody|tfoot|tr|th|td|colgroup|col|caption|img)"
    r"\b[^<>\n]{0,300}+>"
)
_HTML_TEXT_LINE = re.compile(rf"{_HTML_TEXT_TAG}(?:{_HTML_TEXT_TAG}|[^<>]++)*+")
_LIST_STARTS = frozenset("-*•+0123456789")
_REFERENCE_STARTS = frozenset("RrFfCcSsDdPp")  # the first letters of _ISSUE_REFERENCE's words
_LIST_ITEM = re.compile(r"(?:[-*•+]|\d{1,3}(?:\.\d{1,3}){0,3}[.)])[ \t]+")
_WORD = re.compile(r"[(\"']?[A-Za-z][a-z]*(?:['-][a-z]+)*[)\"',.:;!?]{0,2}")
# in an item without a figure, a name in camel case is a word too ("- Linux : HugePages")
_NAME_WORD = re.compile(r"[(\"']?[A-Za-z][A-Za-z]*(?:['-][A-Za-z]+)*[)\"',.:;!?]{0,2}")
_DASHES = frozenset({":", "-", "–", "—", "/", "|"})
# in an item with a figure, the short name of a state, a part or a standard is a word too
# ("- C1 – Halt", "- C4E/C5 -Enhanced Deeper Sleep", "- DDR4 memory")
_STATE_NAME = re.compile(r"[A-Z]{1,4}\d{1,2}[A-Z]{0,2}(?:/[A-Z]{1,4}\d{1,2}[A-Z]{0,2})?")


# a numbered heading of a manual or a book: a section number, then a title in capitalised
# words ("7.1 CPU Frequency Scaling Framework", "13.2.2. Default Behavior for Emulator Thread
# Pinning"), short words of English between them
_TITLE_WORD = (
    r"(?:[A-Z][\w'’/-]*|\([A-Z][\w'’/-]*\)|a|an|and|as|at|by|for|from|in|into|of|on|or|the|to|with|vs\.?)"
)
_SECTION_HEADING = re.compile(
    rf"\d{{1,2}}(?:\.\d{{1,2}}){{1,3}}\.?[ \t]+[A-Z][\w'’/-]*(?:[ \t]+{_TITLE_WORD}){{1,12}}"
)
# a post's byline: "by" and a name, then the day it was written ("by somick 2020. 7. 30.",
# "by admin 2019-03-12", "By Jane Doe, March 3, 2021")
_DATE = (
    r"(?:\d{4}(?:\.[ \t]?|-|/)\d{1,2}(?:\.[ \t]?|-|/)\d{1,2}\.?|\d{4}年\d{1,2}月\d{1,2}日"
    r"|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]{0,6}\.?[ \t]\d{1,2},?[ \t]\d{4}"
    r"|\d{1,2}[ \t](?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]{0,6}\.?,?[ \t]\d{4})"
)
_DATED_BYLINE = re.compile(
    rf"[Bb]y[ \t]+[^\s\d][^\s,]{{0,39}}(?:[ \t]+[^\s\d][^\s,]{{0,39}}){{0,2}},?[ \t]+{_DATE}"
)
# a list item that is only a reference or a code span: a link, an issue, a command quoted
# ("- https://github.com/...", "- #165", "* owner/repo#12", "- `iostat -x 1 /dev/sda`")
_LIST_REFERENCE = re.compile(
    rf"[-*+][ \t]+(?:{_URL_LINE.pattern}|(?:[\w.-]{{1,39}}/[\w.-]{{1,100}})?#\d{{1,7}}|`[^`\n]{{1,300}}`)"
)
# a command in inline code introducing what follows ("`cat /proc/interrupts | grep ens192`:")
_CODE_LABEL = re.compile(r"`(?P<code>[^`\n]{1,300})`[ \t]*[:：]")


def code_label_command(line: str) -> str | None:
    """The command a line of inline code ending with a colon names (a post's
    ``cat /proc/interrupts | grep ens192`` in backticks, over its output), or None.

    >>> code_label_command("`cat /proc/interrupts | grep ens192`:")
    'cat /proc/interrupts | grep ens192'
    >>> code_label_command("`Example`:") is None
    True
    """
    m = _CODE_LABEL.fullmatch(line.strip())
    if m is None:
        return None
    cmd = re.sub(r"^[$#]\s?", "", m.group("code").strip())
    return cmd if _is_command(cmd) else None


# a note with an arrow: a few words, then what they point to ("hypervisor host ---> lscpu",
# "LOCALHOST ---> this defines the server"); never a symbolic link of ls -l (figures, one dash)
_ARROW_NOTE = re.compile(r"[A-Za-z][A-Za-z_ ]{0,60}?[ \t]*(?:-{2,}>|=>|→)[ \t]*[^\s\d][^\t]{0,200}")


def _arrow_note(s: str) -> bool:
    """A note pointing words to a command or a phrase (no gap, at most one arrow).

    >>> _arrow_note("hypervisor host ---> lscpu"), _arrow_note("lib -> usr/lib")
    (True, False)
    """
    return (
        _ARROW_NOTE.fullmatch(s) is not None
        and not _GAP.search(s)
        and len(re.findall(r"-{2,}>|=>|→", s)) == 1
    )


# an option and what it does, as a manual or a post lists them ("-c：紧凑的显示信息",
# "--switch-events: 上下文切换次数", "-b<TAB>I/O 和传输速率信息状况", "-s, --show  show the policy")
_OPTION_DOC = re.compile(
    r"-{1,2}[A-Za-z][\w-]{0,40}(?:=?[<\[]?[\w|.-]{1,30}[>\]]?)?(?:,[ \t]*-{1,2}[A-Za-z][\w-]{0,40})*"
    r"(?:[ \t]*[:：][ \t]*|[ \t]{2,}|\t|[ \t](?=[\u3400-\u9fff]))(?P<doc>\S.*)"
)


def _matching(pattern: re.Pattern[str], words: Iterable[str]) -> int:
    """How many of ``words`` ``pattern`` matches in full."""
    return sum(1 for w in words if pattern.fullmatch(w))


def _edge_stripped_words(pattern: re.Pattern[str], tokens: Iterable[str]) -> list[str]:
    """The ``tokens`` that ``pattern`` matches in full once their punctuation
    and quotes (:data:`_WORD_EDGES`) are stripped, stripped."""
    return [w for w in (t.strip(_WORD_EDGES) for t in tokens) if pattern.fullmatch(w)]


def _option_doc(s: str) -> bool:
    """A line of a command's options documented in words (a manual, a post
    listing them), not an output row: the option, then what it does, a
    sentence or a phrase in Chinese, or three words or more of prose.

    >>> _option_doc("-c：紧凑的显示信息，并将内存四舍五入到MB单位")
    True
    >>> _option_doc("-s, --show   show the NUMA policy")
    True
    >>> _option_doc("-rw-r--r-- 1 root root 4096 Jan  1 12:00 file"), _option_doc("-1  0  0  0")
    (False, False)
    """
    m = _OPTION_DOC.fullmatch(s)
    if m is None:
        return False
    doc = m.group("doc")
    if _CJK.search(doc):
        return len(_CJK_CHARS.findall(doc)) >= 2 and not _DIGIT.match(doc)
    words = doc.split()
    return len(words) >= 3 and _matching(_WORD, words) * 10 >= len(words) * 7


# a reference to an issue or a pull request ("Resolves #166", "Fixes owner/repo#12, #13",
# "Duplicate of #14"): how a thread links its work, never an output
_ISSUE_REFERENCE = re.compile(
    r"(?i:resolves?|resolved|fix(?:es|ed)?|close[sd]?|see|refs?|related(?: to)?|duplicate of|part of"
    r"|follow-up (?:to|of)|reverts?|supersedes)[ \t:]+(?:[\w.-]{1,39}/[\w.-]{1,100})?#\d{1,7}"
    r"(?:[ \t]*(?:,|and)[ \t]*(?:[\w.-]{1,39}/[\w.-]{1,100})?#\d{1,7})*\.?"
)
# a thread's turn as an export of it marks it ("[turn 3 by Darren, continued]"), a blog's
# reading time ("Jan 24, 2022 14 min read", "5 min read")
# (the day it was published may follow, glued: "6 min readMay 12, 2019")
_THREAD_MARK = re.compile(
    r"\[turn \d{1,4} by [^\]\n]{1,80}\]|(?:[^\n]{0,60}[ \t])?\d{1,3}[ \t]?min(?:ute)?s?[ \t]read"
    rf"(?:[ \t]?{_DATE})?"
)


def _bullet_prose(s: str) -> bool:
    """An item of a list set with a typographic bullet (``• 1TB storage``, ``• CentOS Stream
    8 (ppc64le)``): a web page's list, which no tool prints, in words.

    >>> _bullet_prose("• 32GB main memory (2 x 16GB DIMMs)"), _bullet_prose("• 0x1f")
    (True, False)
    """
    words = _ALPHA_WORD.findall(s)
    return not _GAP.search(s) and any(len(w) >= 3 for w in words)


# ------------------------------------------------- a page's chrome, an issue template's answers

# a product and its version, maybe a list item ("CentOS 8", "Juju 3.5.4", "- macOS 10.14.6 (18G87)")
_VERSIONED_NAME = re.compile(
    r"(?:[-*+•][ \t]+)?[A-Za-z][\w+-]{0,30}(?:[ \t][A-Za-z][\w+-]{0,30}){0,2}[ \t]+v?\d{1,4}"
    r"(?:\.\d{1,5}){0,3}[a-z]?(?:[ \t][A-Z]{2,5})?(?:[ \t]\([\w. ,-]{1,30}\))?"
)
# lines whose shape alone is chrome: a page's metadata in fields joined by semicolons
# ("Length: 221 words; Published: June 24, 2015"), a Chinese page's date, time and author
# ("2022-03-22 20:14:00 半生瓜丶"), a diagram's frame or arrows ("┌────┐", "↑ ↑ ↑", "│ │"),
# punctuation a page's markup left on its own line (an elision, a sentence's end: ").")
_CHROME_SHAPE = re.compile(
    r"[A-Z][\w ]{0,20}:[ \t][^;\n]{1,80}(?:;[ \t][A-Z][\w ]{0,20}:[ \t][^;\n]{1,80}){1,8};?"
    r"|\d{4}-\d\d-\d\d[ \t]\d\d:\d\d(?::\d\d)?[ \t]+[^\x00-\x7f\s]{1,20}"
    r"|[\u2500-\u257f\u2190-\u21ff][ \t\u2500-\u257f\u2190-\u21ff]*|[.…)(\[\];,{}]{1,5}"
)
# a footer's notice ("© 2019 MariaDB", "This documentation is provided {and copyrighted} by ...")
_NOTICE = re.compile(r"©|\(c\)|\b(?i:copyright(?:ed)?|all rights reserved)\b")
# a definition list whose term the page set apart (": Total installed memory.")
_DEFINITION = re.compile(r":[ \t]+(?P<text>\S.{0,300})")
# an author's label over what follows ("10sec average:", "Power9:")
_LABEL_LINE = re.compile(r"[^\s:][^:\t]{0,40}[^\s:]:")
# a template's answer alone under its field ("win10", "21H1", "6.0.6")
_BARE_ANSWER = re.compile(r"(?=[^\s]{0,19}\d)[A-Za-z0-9][\w.+-]{0,19}")
TEMPLATE_FIELD_MAX_CHARS = 24


def chrome_line(s: str) -> bool:
    """A stripped line of a page's chrome or of an issue template, never an
    output's: a product and its version (``CentOS 8``, ``- macOS 10.14.6
    (18G87)``), a page's metadata, a footer's notice, a diagram's frame, a lone
    punctuation mark, a definition list's definition, an author's label.

    >>> chrome_line("- macOS 10.14.6 (18G87)"), chrome_line("Juju 3.5.4"), chrome_line("sda 12")
    (True, True, False)
    >>> chrome_line("Length: 221 words; Published: June 24, 2015; Updated: October 22, 2019")
    True
    >>> chrome_line("2022-03-22 20:14:00 半生瓜丶"), chrome_line("2022-03-22 20:14:00 kernel: oom")
    (True, False)
    >>> chrome_line("© 2019 MariaDB"), chrome_line("┌──────┐"), chrome_line(")."), chrome_line("...")
    (True, True, True, True)
    >>> chrome_line(": Total installed memory."), chrome_line("10sec average:"), chrome_line("a: 1")
    (True, True, False)
    """
    if _VERSIONED_NAME.fullmatch(s):
        return any(c.isupper() for c in s) or re.search(r"\d\.\d", s) is not None
    if _CHROME_SHAPE.fullmatch(s):
        return True
    if _NOTICE.search(s):
        return not _GAP.search(s) and any(len(w) >= 3 for w in _ALPHA_WORD.findall(s))
    if (m := _DEFINITION.fullmatch(s)) is not None:
        return line_class(m["text"]) == "prose"
    return (
        _LABEL_LINE.fullmatch(s) is not None
        and len(s.split()) <= 5
        and not _GAP.search(s)
        and any(len(w) >= 3 for w in _ALPHA_WORD.findall(s))
    )


def template_field(line: str) -> bool:
    """An issue template's field over its answer (``Linux版本``, ``## Versions``,
    ``版本``): a short line of words without a figure or a sentence's end."""
    s = line.strip().lstrip("#").strip()
    return (
        0 < len(s) <= TEMPLATE_FIELD_MAX_CHARS
        and not _DIGIT.search(s)
        and not s.endswith((".", "。", ":", "：", "?", "？"))
        and line_class(line) == "prose"
    )


CAPTION_MAX_WORDS = 12


def caption_line(s: str) -> bool:
    """A short line of a post in words: a caption over an output, a title, a
    label (``Disk IO(sdb) info of tikv-3``, ``NUMA on POWER9``, ``Virtual Machine
    Network Card Multi-Queue``): two words at least, most of the line in
    letters, with a short word of English prose, or every word capitalised (a
    title). A row of a table (``tidb-1   24C 128G 4TSAS``), a setting
    (``a = b``) or a value (``noop deadline [cfq]``) is not one.

    >>> caption_line("Disk IO(sdb) info of tikv-3"), caption_line("Virtual Machine Network Card Multi-Queue")
    (True, True)
    >>> caption_line("tidb-1   24C 128G 4TSAS"), caption_line("noop deadline [cfq]")
    (False, False)
    >>> caption_line("MemTotal: 16 GB")
    False
    """
    tokens = s.split()
    if not 2 <= len(tokens) <= CAPTION_MAX_WORDS or _DATA_MARK.search(s):  # a gap or a tab among its marks
        return False
    words = _edge_stripped_words(_ALPHA_WORD, tokens)
    if len(words) * 2 < len(tokens) or max(map(len, words), default=0) < 3:
        return False
    return _title_words(words, tokens) or not _STOPWORDS.isdisjoint(w.lower() for w in words)


def _title_words(words: list[str], tokens: list[str]) -> bool:
    """Whether a line of ``tokens`` (``words`` of them in letters) is a title:
    three words at least, every token capitalised."""
    return len(words) >= 3 and all(t[:1].isupper() for t in tokens)


def _list_item_prose(s: str) -> bool:
    """A list item or numbered step whose text is words or a Markdown link, not
    an output row (nor a row a parser declares, ``ParserSpec.prose_lines``).

    >>> _list_item_prose("- [https://coderwall.com/p/utc42q/understanding-iostat]"
    ...     "(https://coderwall.com/p/utc42q/understanding-iostat)")
    True
    >>> _list_item_prose("- C1 – Halt"), _list_item_prose("- C7 – C6 + LLC may be flushed")
    (True, True)
    >>> _list_item_prose("- C1 C2 C3")
    False
    """
    m = _LIST_ITEM.match(s)
    if m is None or _output_prose().fullmatch(s):
        return False
    if _MD_LINK_LINE.fullmatch(s, m.end()):
        return True
    words = [w for w in s[m.end() :].split() if w not in _DASHES]
    return 2 <= len(words) <= 80 and _item_words_prose(words, figures=_DIGIT.search(s, m.end()) is not None)


def _item_words_prose(words: list[str], *, figures: bool) -> bool:
    """Whether the words of a list item read as prose: three in five of them
    names (with ``figures`` in the item: words or state names, one a word)."""
    if not figures:
        return _matching(_NAME_WORD, words) / len(words) >= 0.6
    named = sum(1 for w in words if _WORD.fullmatch(w) or _STATE_NAME.fullmatch(w))
    return named / len(words) >= 0.6 and any(_WORD.fullmatch(w) for w in words)


# who wrote what a reply quotes ("On Fri, Oct 20, 2017 at 06:54:28PM +0000, Austen Lauria
# wrote:", a forum's "6 hours ago, Warrentheo said:")
_ATTRIBUTION = re.compile(r"[^\t\n]{1,160}[ \t](?:wrote|said|writes|says)[ \t]?[:：]")
# a question-and-answer site's chrome under a post ("share|improve this answer",
# "share|cite|improve this question|follow")
_QA_CHROME = re.compile(
    r"share(?:[ \t]*\|[ \t]*(?:cite|edit|follow|flag|close|delete|improve this (?:question|answer)))+"
)
# an arrow alone on its line, pointing from one output or idea to the next ("==>", "↓")
_ARROW_LINE = re.compile(r"[=-]{1,4}>|→|⇒|↓|⇓")
# a GitHub task-list item ("- [x] v4.0 (TiDB 4.0 versions)", "- [ ] Branch created")
_TASK_ITEM = re.compile(r"[-*+][ \t]+\[[ xX]\][ \t]+(?P<text>\S.{0,300})")
# a Chinese page's metadata: when, who, where from ("时间:2022-09-26 16:51:27", "作者:张昊",
# "本文来源:原创投稿")
_CJK_PAGE_META = re.compile(
    r"(?:(?:发布|发表|更新)?(?:时间|日期)|发布于|发表于|更新于)[ \t]?[:：][ \t]*\d{4}[-/.年]\S.{0,40}"
    r"|(?:作者|译者|编辑|责任编辑|(?:本文|文章)?来源|出处|分类|原文链接)[ \t]?[:：][ \t]*\S.{0,120}"
)
_CJK_META_STARTS = frozenset("发更时日作译编责本文来出分原")
# a numbered heading of a Chinese post ("一、命令解析:iostat -x 1含义", "场景 1:高%util+ 高await",
# "3. 初步诊断:观察指标"): a Chinese ordinal, a word and its number, or a section number, then a
# title in Chinese
_CJK_HEADING = re.compile(
    r"(?:[一二三四五六七八九十]{1,3}[、.．]"
    r"|[\u4e00-\u9fff]{1,6}[ \t]?\d{1,2}[:：.、]"
    r"|\d{1,2}(?:\.\d{1,2}){0,3}[.、]?[ \t]*(?=[\u4e00-\u9fff]{2}))"
    r"[ \t]*(?P<title>[^\t\n]{1,80})"
)


# a review thread's locator over the change it quotes: a source or a document file and
# a line number ("benchmark/benchmark-tidb-using-tpcc.md:85", "avocado/utils/cpu.py:502")
_REVIEW_LOCATOR = re.compile(
    r"[\w.\-/]{0,200}[\w\-]\.(?:md|markdown|rst|adoc|txt|py|c|h|cc|cpp|hpp|go|rs|java|js|ts|rb|sh|pl"
    r"|yaml|yml|json|toml|cfg|conf|ini|xml|html|sql|tf):\d{1,7}"
)


def _task_item(s: str) -> bool:
    """A GitHub task-list item: its checkbox is the post's markup, its text
    words (one word of two letters at least).

    >>> _task_item("- [x] v4.0 (TiDB 4.0 versions)"), _task_item("- [ ] Branch created")
    (True, True)
    >>> _task_item("- [ ] 0x1f 0x20")
    False
    """
    m = _TASK_ITEM.fullmatch(s)
    return m is not None and not _GAP.search(s) and any(len(w) >= 2 for w in _ALPHA_WORD.findall(m["text"]))


def _cjk_heading(s: str) -> bool:
    """A numbered heading of a Chinese post, its title in Chinese and no
    column of a table in it.

    >>> _cjk_heading("一、命令解析:iostat -x 1含义"), _cjk_heading("场景 1:高%util+ 高await")
    (True, True)
    >>> _cjk_heading("3. 初步诊断:观察指标")
    True
    >>> _cjk_heading("节点 0:   16384 MB"), _cjk_heading("节点0:16384 MB")
    (False, False)
    """
    m = _CJK_HEADING.fullmatch(s)
    return m is not None and not _GAP.search(s) and len(_CJK_CHARS.findall(m["title"])) >= 2


WRAPPED_WORDS_MIN_TOKENS = 6


def wrapped_words(line: str) -> bool:
    """A line of words cut from its sentence by a mail's or a page's width
    (``Hi, I have recently noticed that on P9 running Red Hat Enterprise Linux
    Server``, a reply's quote): words only, two short words of English prose
    among them; an output's line has its columns, marks or figures.

    >>> wrapped_words("Hi, I have recently noticed that on P9 running Red Hat Enterprise Linux Server")
    True
    >>> wrapped_words("node 0 cpus: 0 1 2 3 4 5 6 7")
    False
    >>> wrapped_words("Red Hat Enterprise Linux Server release 7.4 (Maipo)")
    False
    """
    tokens = line.split()
    if len(tokens) < WRAPPED_WORDS_MIN_TOKENS or _DATA_MARK.search(line):
        return False
    words = [t.strip(".,:;!?()\"'").lower() for t in tokens]
    alpha = _matching(_ALPHA_WORD, words)
    return alpha * 10 >= len(words) * 8 and len({w for w in words if w in _STOPWORDS}) >= 2


def line_class(line: str) -> str:
    """``"blank"``, ``"prose"`` or ``"data"`` (command output, logs, tables).

    >>> line_class("Deploy a single ODP. The NIC bandwidth is 2000 Mbit/s.")
    'prose'
    >>> line_class("node 0 size: 32722 MB")
    'data'
    >>> line_class("mailcow/mailcow-dockerized · issue #685 · closed · JavaScript")
    'prose'
    >>> line_class("Oratorian · description · 2017-10-26"), line_class("wmui / 3343人阅读")
    ('prose', 'prose')
    """
    s = line.strip()
    if not s:
        return "blank"
    if len(s) > LONG_LINE:
        return "data"
    if _marked_prose(s):
        return "prose"
    if _data_by_marks(line, s):
        return "data"
    if _CJK.search(s):
        return _cjk_line_class(s)
    if _log_or_rule(s):
        return "data"
    if not _DIGIT.search(s):
        return _words_line_class(s, s.split())
    return _numbers_line_class(s, s.split())


def _cjk_line_class(s: str) -> str:
    """The class of a stripped line holding CJK text (not prose by its marks):
    data when a label and its value, not ending like a sentence or a label."""
    return "data" if _KEY_VALUE_CJK.match(s) and not s.endswith(("。", "：", ":")) else "prose"


def _data_by_marks(line: str, s: str) -> bool:
    """Whether ``line`` (``s`` stripped) is data by its marks: a tab-separated
    row, even one whose last column is empty (``default_regex_flags<TAB>``), a
    table, a bare snake_case name (the same row with its tab turned into spaces,
    then trimmed), or an output's line a parser declares (``prose_lines``)."""
    return bool(_DATA_MARK.search(line) or _IDENTIFIER.fullmatch(s) or _output_prose().fullmatch(s))


def _log_or_rule(s: str) -> bool:
    """Whether the stripped line ``s`` is a log line (not one starting with a
    figure and a word) or a table's border or a separator (no letter nor digit)."""
    return bool(_LOG_START.match(s) and not _FIGURE_LEAD.match(s)) or not _ALNUM.search(s)


# a line that reads as prose on its own: (first characters, test of the stripped line)
_PROSE_LINES: tuple[tuple[str | frozenset[str], Callable[[str], object]], ...] = (
    ("<", _HTML_TEXT_LINE.fullmatch),
    ("h<f", _URL_LINE.fullmatch),
    ("*_", _BOLD_LINE.fullmatch),
    ("*-+", _BOLD_LABEL.fullmatch),
    ("lLtT标", _TAGS_LINE.fullmatch),
    (_LIST_STARTS, _list_item_prose),
    ("-*+", _LIST_REFERENCE.fullmatch),
    ("0123456789", _SECTION_HEADING.fullmatch),
    ("bB", _DATED_BYLINE.fullmatch),
    ("`", _CODE_LABEL.fullmatch),
    ("-", _option_doc),
    ("•", _bullet_prose),
    (_REFERENCE_STARTS, _ISSUE_REFERENCE.fullmatch),
    ("[0123456789ADFJMNOS", _THREAD_MARK.fullmatch),
    ("s", _QA_CHROME.fullmatch),
    ("=-→⇒↓⇓", _ARROW_LINE.fullmatch),
    ("-*+", _task_item),
    (_CJK_META_STARTS, _CJK_PAGE_META.fullmatch),
)


def _sentence_with_code(s: str) -> bool:
    """A sentence quoting inline code (``Redis emits this when `vm.overcommit_memory
    != 1`. With AOF persistence``): prose once each code span reads as a word,
    with a short word of English prose outside the code. A line that starts with
    code ends like a sentence (a ``SHOW CREATE TABLE`` row, ```` `name` varchar(255)
    ... ,````, does not).

    >>> _sentence_with_code("Also, I noticed that using `--membind=0` explicitly greatly "
    ...     "reduce minor page faults. What could possibly cause this?")
    True
    >>> _sentence_with_code("`uname -m` returns `aarch64` on armv8 machines, not `aarch6`.")
    True
    >>> _sentence_with_code("`name` varchar(64) NOT NULL COMMENT 'the name of the user',")
    False
    """
    if s.count("`") < 2 or (s[0] == "`" and not s.endswith((".", "?", "!", ":"))):
        return False
    text = _MD_INLINE.sub(_inline_text, s)  # code spans, and links read as their text
    return "`" not in text and _reads_as_sentence(text, 4)


def _sentence_with_link(s: str) -> bool:
    """A sentence holding a Markdown link (``After installing [Redis](https://redis.io/)
    on Debian 10 (Kernel 4.19) there was the following entry in its log:``): prose once
    the link reads as its text.

    >>> _sentence_with_link("After installing [Redis](https://redis.io/) on Debian 10 "
    ...     "(Kernel 4.19) there was the following entry in its log:")
    True
    """
    text = _MD_INLINE.sub(_inline_text, s)
    return "](" not in text and "`" not in text and _reads_as_sentence(text, 4)


def _reads_as_sentence(text: str, least: int) -> bool:
    """Whether ``text`` (a line whose code or setting was made a word) is a
    sentence: ``least`` words or more, a short word of English prose among
    them, prose by :func:`line_class`."""
    words = [w.strip(".,:;!?()").lower() for w in text.split()]
    return len(words) >= least and not _STOPWORDS.isdisjoint(words) and line_class(text) == "prose"


# a setting named inside a sentence, unquoted and unspaced ("overcommit_memory=1")
_SETTING_WORD = re.compile(r"[\w.\-/]{1,80}=[\w.\-/%]{1,80}")
# the same setting spaced as sysctl prints it, unquoted, inside a longer sentence
# ("Prior to RHEL 6.4: vm.swappiness = 0 disables swapping for the most part, ...")
_SPACED_SETTING = re.compile(r"(?<!['\"`])\b[a-z][\w.\-/]{1,80} = [\w.\-/%]{1,80}\b(?!['\"`])")
SPACED_SETTING_MIN_WORDS = 8


def _sentence_with_setting(s: str) -> bool:
    """A sentence naming one setting as ``name=value`` (``To set
    overcommit_memory=1 seems like the more stable option.``): prose once the
    setting reads as a word, with a short word of English prose and a sentence's
    end. A spaced ``name = value`` (sysctl's output, a Redis warning quoting
    ``'vm.overcommit_memory = 1'``) or a second ``=`` (a command line) is not one.

    >>> _sentence_with_setting("To set overcommit_memory=1 seems like the more stable option.")
    True
    >>> _sentence_with_setting("BOOT_IMAGE=/vmlinuz-5.15 root=/dev/sda1 ro quiet.")
    False

    Spaced, as sysctl prints it, in a longer sentence (never sysctl's own line):

    >>> _sentence_with_setting("Prior to RHEL 6.4: vm.swappiness = 0 disables swapping for the most part.")
    True
    >>> _sentence_with_setting("vm.swappiness = 60.")
    False
    """
    if s.count("=") != 1 or not s.endswith((".", "?", "!")):
        return False
    text = _SPACED_SETTING.sub("setting", _SETTING_WORD.sub("setting", s))
    least = SPACED_SETTING_MIN_WORDS if " = " in s else 5
    return "=" not in text and _reads_as_sentence(text, least)


def _marked_prose(s: str) -> bool:
    """Whether a stripped line is prose by its marks: a Markdown link, a CJK
    sentence, a link, a bold heading, a list item in words."""
    if _MD_LINK_LINE.fullmatch(s) or _cjk_sentence(s):
        return True
    if any(mark in s and test(s) for mark, test in _PROSE_MARKS):
        return True
    head = s[0]
    return any(head in starts and test(s) for starts, test in _PROSE_LINES)


def _byline(s: str) -> bool:
    """A page's or a thread's metadata (no field a column of a table)."""
    return _BYLINE.fullmatch(s) is not None and not _GAP.search(s)


# a line that reads as prose by what it holds: (a string it holds, test of the stripped line)
_PROSE_MARKS: tuple[tuple[str, Callable[[str], object]], ...] = (
    (" ·", _byline),
    ("阅读", _BYLINE_ZH.fullmatch),
    ("`", _sentence_with_code),
    ("](", _sentence_with_link),
    ("=", _sentence_with_setting),
    ("://", _REFERENCE.fullmatch),
    ("->", _arrow_note),
    ("=>", _arrow_note),
    ("→", _arrow_note),
    (":", _REVIEW_LOCATOR.fullmatch),
    ("wrote", _ATTRIBUTION.fullmatch),
    ("said", _ATTRIBUTION.fullmatch),
    ("、", _cjk_heading),
    (":", _cjk_heading),
    ("：", _cjk_heading),
    (".", _cjk_heading),
)


def _column_headers(s: str, tokens: list[str]) -> bool:
    """Column headers: ``Time rrqms wrqms %rrqm ...``; never a sentence ending
    inside its parentheses (``(First line applies immediately; ... reboots.)``)."""
    return (
        len(tokens) >= 5
        and not s.rstrip(")").endswith((".", ":", "?", "!", ","))
        and not any(t.lower() in _STOPWORDS for t in tokens)
    )


def _short_column_headers(s: str, tokens: list[str]) -> bool:
    """Ten or more short column names (vmstat's ``r b swpd free ... in cs us sy
    id wa st``, whose ``in`` reads like a word of a sentence): no sentence is
    made of such words only (readk).

    >>> _short_column_headers("r b swpd free buff cache si so bi bo in cs us sy id wa st", [])
    True
    >>> _short_column_headers("seems that take the value from swap on the wrong line", [])
    False
    """
    tokens = tokens or s.split()
    if len(tokens) < 10 or not all(_short_column_name(t) for t in tokens):
        return False
    return sum(t in _STOPWORDS for t in tokens) <= 1  # "in"; a sentence has more


def _short_column_name(token: str) -> bool:
    """Whether ``token`` is a short column name: five lowercase letters at most."""
    return len(token) <= 5 and token.isalpha() and token.islower()


def _upper_headers(s: str, tokens: list[str]) -> bool:
    """Column headers in capitals: ``PID USER PR NI ...``."""
    return len(tokens) >= 2 and all(not any(c.islower() for c in t) for t in tokens)


def _key_value_words(s: str, tokens: list[str]) -> bool:
    """``Byte Order: Little Endian``, ``policy: default``."""
    return ":" in s and not s.endswith(":") and len(tokens) <= 6


_QUOTED_NAME = re.compile(r'"[^"\s]{1,200}"')


def _name_value_row(s: str, tokens: list[str]) -> bool:
    """``name value`` rows: ``license GPL``, ``Variable_name Value``, and an
    object with its quoted name (lstopo's ``Block(Disk) "sda"``, ``Net "eth0"``).

    >>> _name_value_row('Block(Disk) "sdf"', ["Block(Disk)", '"sdf"'])
    True
    """
    if len(tokens) != 2 or s[-1] in ".:;,?!":
        return False
    return tokens[0][0].islower() or "_" in tokens[0] or _QUOTED_NAME.fullmatch(tokens[1]) is not None


# the rows without a digit that are data, not a sentence
_WORD_ROWS = (_column_headers, _short_column_headers, _upper_headers, _key_value_words, _name_value_row)


def _words_line_class(s: str, tokens: list[str]) -> str:
    """The class of a stripped line without a digit."""
    if _other_language_prose(tokens):
        return "prose"
    return "data" if any(row(s, tokens) for row in _WORD_ROWS) else "prose"


# a word in letters of any script ("décompose", "заголовком", "프로세스의")
_LETTER_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_WORD_EDGES = ".,:;!?()\"'«»“”‘’„"
# short function words of French, Spanish, Portuguese, Italian, German, Dutch and
# Indonesian prose; none a column header, a unit or a CPU flag ("de", "est" are flags)
_OTHER_STOPWORDS = frozenset(
    {"le", "la", "les", "des", "du", "une", "et", "sont", "pour", "dans", "avec", "sur", "qui", "que", "se"}
    | {"ce", "cette", "au", "aux", "ou", "pas", "el", "los", "las", "una", "es", "por", "para", "con"}
    | {"del", "como", "pero", "os", "uma", "não", "são", "com", "dos", "das", "em", "il", "gli", "della"}
    | {"che", "sono", "per", "di", "non", "der", "die", "das", "und", "ist", "nicht", "mit", "für", "ein"}
    | {"eine", "auf", "dem", "zu", "von", "wird", "sind", "het", "een", "van", "niet", "voor", "yang"}
    | {"dan", "ke", "dari", "untuk", "dengan", "jika", "ini", "itu", "atau", "pada", "adalah", "tidak"}
    | {"akan", "kami", "anda", "dapat", "bisa"}
)
OTHER_PROSE_MIN_TOKENS = 4


def _other_language_prose(tokens: list[str]) -> bool:
    """A sentence or a title in another language than English: mostly words in
    letters, and either most of them in another script (or accented), or a
    fifth of them (two at least) function words of another language.

    >>> _other_language_prose("Le cache se décompose selon 3 zones".split())
    True
    >>> _other_language_prose("Bagaimana kami dapat mengidentifikasi jika NUMA diaktifkan".split())
    True
    >>> _other_language_prose("fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat est".split())
    False
    """
    if len(tokens) < OTHER_PROSE_MIN_TOKENS:
        return False
    words = _edge_stripped_words(_LETTER_WORD, tokens)
    return len(words) * 10 >= len(tokens) * 7 and _foreign_words(words)


def _foreign_words(words: list[str]) -> bool:
    """Whether ``words`` are in another language than English: half of them in
    another script (or accented), or a fifth of them (two at least) function
    words of another language."""
    if sum(1 for w in words if not w.isascii()) * 2 >= len(words):
        return True
    hits = sum(1 for w in words if w.lower() in _OTHER_STOPWORDS)
    return hits >= 2 and hits * 5 >= len(words)


# a word, with the apostrophes and hyphens inside it ("I'm", "don't", "one-time")
_ALPHA_WORD = re.compile(r"[A-Za-z]+(?:['’-][A-Za-z]+)*")


# a line starting with a figure and a word, not a time stamp ("5200 RPM disk in my ...")
_FIGURE_LEAD = re.compile(r"\d{1,12}(?:\.\d{1,6})?%?[ \t]+[A-Za-z]")
FIGURES_SENTENCE_MIN_TOKENS = 8


def _numbers_line_class(s: str, tokens: list[str]) -> str:
    """The class of a stripped line with a digit: prose when it is mostly words
    and ends like a sentence, or reads as a line of a wrapped paragraph
    (:func:`_sentence_with_figures`)."""
    words = [t.strip(".,:;!?()\"'") for t in tokens]
    alpha = _matching(_ALPHA_WORD, words)
    if _worded_sentence(s, len(tokens), alpha):
        return "prose"
    return "prose" if _sentence_with_figures(words, alpha) or _other_language_prose(tokens) else "data"


def _worded_sentence(s: str, tokens: int, alpha: int) -> bool:
    """Whether the stripped line ``s`` of ``tokens`` tokens, ``alpha`` of them
    words in letters, is mostly words (six tokens at least, seven in ten words)
    and ends like a sentence (or holds the end of one)."""
    return tokens >= 6 and alpha / tokens >= 0.7 and (s[-1] in ".:;,?!)" or ". " in s)


def _sentence_with_figures(words: list[str], alpha: int) -> bool:
    """A line of English prose quoting figures, cut anywhere by the page's width
    (``The w_await —the time to service each I/O write—is fairly low (6.08 ms), and
    the disk is``): eight words or more, most of them in letters, and the short
    words of English prose (three different ones at least, one word in six):
    an output row names things and figures, it does not join them with these.

    >>> _sentence_with_figures("5200 RPM disk in my desktop system behaves well when "
    ...     "the service time is under 15 ms.)".split(), 14)
    True
    >>> _sentence_with_figures("sda 0.00 11.60 0.60 24.20 0.02 0.14 13.35".split(), 1)
    False
    """
    if len(words) < FIGURES_SENTENCE_MIN_TOKENS or alpha * 10 < len(words) * 6:
        return False
    function = [w for w in (w.lower() for w in words) if w in _STOPWORDS]
    return len(set(function)) >= 3 and len(function) * 6 >= len(words)


# --------------------------------------------------------------------- splitting


def host_key(name: str) -> str:
    """What :func:`same_host` compares: the first label, lower-case."""
    return name.lower().split(".", 1)[0]


def same_host(a: str | None, b: str | None) -> bool:
    """``db01`` and ``db01.example.com`` (or ``DB01``) name one host."""
    if not a or not b:
        return False
    return host_key(a) == host_key(b)


def _known_parts(command: str) -> list[tuple[str, str]] | None:
    """The commands of a compound shell line (``a; b``, ``cd /x && b``) that a
    parser reads, with their kinds; None when the line is one command."""
    parts = command_parts(command)
    if not (len(parts) > 1 or (parts and parts[0] != command.strip())):
        return None
    return [(part, k) for part in parts if (k := kind_for_command(part)) is not None]


def _prompt_or_heading_command(text: str) -> tuple[str, str, str | None] | None:
    """``(kind, command, host)`` of the prompt on line ``text``
    (:func:`match_prompt`), or of a Markdown heading naming a shell command
    (:func:`heading_command`), or None."""
    prompt = match_prompt(text)
    if prompt is None and (command := heading_command(text)) is not None:
        return ("shell", command, None)
    return prompt


def _front_matter_end(lines: list[str]) -> int:
    """The index after a YAML front matter at the top of ``lines`` (between
    ``---`` lines, within :data:`FRONT_MATTER_MAX_LINES`, not empty), or 0."""
    if not lines or lines[0].strip() != "---":
        return 0
    for end in range(1, min(len(lines), FRONT_MATTER_MAX_LINES)):
        if lines[end].strip() == "---":
            return end + 1 if end > 1 else 0
        if not _FRONT_MATTER_LINE.match(lines[end]):
            return 0
    return 0


class _Splitter:
    def __init__(self, lines: list[str], detect_lines: int, detect_budget: int, body: str | None = None):
        self.lines = lines
        # the lines joined, and where each starts in it (offsets[k] - 1 is the
        # newline before line k): whole-text searches find lines at C speed
        self.body = "\n".join(lines) if body is None else body
        self.offsets = list(itertools.accumulate(map((1).__add__, map(len, lines)), initial=0))
        # False when a line holds a newline (an unescaped "&#10;"): searches of
        # the text cannot tell lines then, and each line is looked at
        self.searchable = body is not None or self.body.count("\n") == len(lines) - 1
        self.detect_lines = detect_lines
        self.detect_budget = detect_budget
        self.blocks: list[Block] = []
        self.unused: list[tuple[int, int, str]] = []  # 0-based [a, b) and what
        # line_class and _form of each distinct line (outputs repeat lines)
        self._classes: dict[str, str] = {}
        self._forms: dict[str, str] = {}
        # (kind, a, b) -> the parser's result on lines a..b, when it parsed
        self._results: dict[tuple[str, int, int], Any] = {}
        self.parsed: dict[int, Any] = {}  # see Split.parsed
        self.role = bytearray(len(lines))
        self._prompts: dict[int, tuple[str, str, str | None]] = {}
        self._prompt_index: list[int] = []
        self._detected: dict[str, str | None] = {}
        # prompt lines that may be a heading naming a command ("# vmstat", "### cat
        # /proc/meminfo") or a fence's info string: their output is read by content
        # when it does not parse as the command's
        self._weak: set[int] = set()
        self._find_prompts()
        self.host: str | None = None
        self.truncated = False
        self.segments: list[tuple[int, str | None]] = [(0, None)]
        self.diff_fence = False  # the fence being read quotes a change ("```diff")

    def detect(self, head: str) -> str | None:
        """``detect_kind``, once per distinct head: a probe and the block it
        starts often look at the same lines."""
        if head in self._detected:
            return self._detected[head]
        kind = self._detected[head] = detect_kind(head)
        return kind

    def _find_prompts(self) -> None:
        """Every prompt line, found once: whole-text searches for lines that
        start like a prompt, then ``match_prompt`` on those only."""
        index: list[int] = []
        for line in self.prompt_candidates():
            text = self.lines[line]
            prompt = _prompt_or_heading_command(text)
            if prompt is not None:
                self._prompts[line] = prompt
                index.append(line)
                if text.startswith("#"):
                    self._weak.add(line)  # a Markdown heading as much as a root prompt
        self._prompt_index = index

    def prompt_candidates(self) -> list[int]:
        """The indexes of the lines that start like a prompt, in order, found by
        searches over the whole text (the fast ones when it is not searchable)."""
        body, lines = self.body, self.lines
        if not self.searchable:
            return line_indexes(_PROMPT_START, _PROMPT_START_NEXT, body, lines[0])
        found = set(line_indexes(_PROMPT_START, _PROMPT_LEAD_NEXT, body, lines[0]))
        found.update(lines_holding(_AT, body))
        found.update(lines_holding(_HOST_PATH, body))
        found.update(lines_holding(_HOST_DIR_HASH, body, " #"))
        return sorted(i for i in found if _PROMPT_START.match(lines[i]))

    def prompt(self, i: int) -> tuple[str, str, str | None] | None:
        return self._prompts.get(i)

    def next_prompt(self, j: int, b: int) -> int:
        """The first prompt line in ``j..b``, or ``b``."""
        index = self._prompt_index
        k = bisect.bisect_left(index, j)
        return index[k] if k < len(index) and index[k] < b else b

    def mark(self, a: int, b: int, role: int) -> None:
        if b > a:
            self.role[a:b] = bytes([role]) * (b - a)

    def prompt_host(self, line: int, host: str | None) -> None:
        """A prompt naming ``host`` on (normalised) ``line``: a different host
        than the current one starts a new segment."""
        if not host or same_host(host, self.host):
            return
        if self.host is None and self.segments[-1][1] is None:
            self.segments[-1] = (self.segments[-1][0], host)
        else:
            self.segments.append((line, host))
        self.host = host

    def cls(self, i: int) -> str:
        line = self.lines[i]
        c = self._classes.get(line)
        if c is None:
            c = self._classes[line] = line_class(line)
        return c

    def blank(self, i: int) -> bool:
        return not self.lines[i].strip()

    def trimmed(self, a: int, b: int) -> int:
        """``b`` moved back over the blank lines that end ``a..b`` (never before ``a``)."""
        while b > a and self.blank(b - 1):
            b -= 1
        return b

    def next_prose(self, j: int, end: int) -> int:
        """The first line of ``j..end`` that reads like prose, or ``end``. The
        classes of lines seen before are looked up a chunk at a time (at C
        speed); only new lines are classified."""
        while j < end:
            stop = min(end, j + 256)
            found = self.classes(j, stop)
            k = _index(found, "prose", 0)
            while k >= 0 and self.heading(j + k, end):
                k = _index(found, "prose", k + 1)
            if k >= 0:
                return j + k
            j = stop
        return end

    def classes(self, a: int, b: int) -> list[str | None]:
        """The classes of lines ``a..b`` (:func:`line_class`): those of lines
        seen before looked up at once, only the new ones classified."""
        classes, lines = self._classes, self.lines
        found = list(map(classes.get, lines[a:b]))
        k = -1
        while (k := _index(found, None, k + 1)) >= 0:  # lines not seen yet
            line = lines[a + k]
            found[k] = classes[line] = line_class(line)
        return found

    def heading(self, i: int, end: int) -> bool:
        """Whether prose-looking line ``i`` is a heading inside an output: a few
        words ending with ":" over indented data (lscpu's "NUMA:" and "Caches
        (sum of all):" sections since util-linux 2.37)."""
        line = self.lines[i].strip()
        if not line.endswith(":") or len(line.split()) > 4 or i + 1 >= end:
            return False
        following = self.lines[i + 1]
        return following[:1] in (" ", "\t") and self.cls(i + 1) == "data"

    def form(self, line: str) -> str:
        f = self._forms.get(line)
        if f is None:
            f = self._forms[line] = _form(line)
        return f

    def text(self, a: int, b: int) -> str:
        """Lines ``a..b`` (exclusive) joined: a slice of the joined text."""
        if a >= b:
            return ""
        return self.body[self.offsets[a] : self.offsets[b] - 1]

    def head(
        self, i: int, end: int, max_lines: int = DETECT_HEAD_LINES, max_chars: int = DETECT_HEAD_CHARS
    ) -> str:
        out, size = [], 0
        for line in self.lines[i : min(end, i + max_lines)]:
            out.append(line[:max_chars])
            size += len(out[-1]) + 1
            if size >= max_chars:
                break
        return "\n".join(out)[:max_chars]

    # -- top level: fences
    def run(self) -> list[Block]:
        n = len(self.lines)
        fences = self._fence_lines()
        i = region_start = self._front_matter()
        k = 0
        while k < len(fences) and not self.truncated:
            i = fences[k]
            if i < region_start:
                k += 1
                continue
            close = self.closing_fence(fences, k)
            j = fences[close] if close < len(fences) else n
            self.fence(region_start, i, j)
            region_start = j + 1
            k += 1
        if self.truncated:
            self.mark(region_start, n, UNRECOGNISED)
        else:
            self.region(region_start, n, fenced=False)
        return self.blocks

    def closing_fence(self, fences: list[int], k: int) -> int:
        """The index in ``fences`` of the fence that closes ``fences[k]``
        (``len(fences)`` when none does): the next fence line with the same
        marker, at least as long (a "````diff" fence holds the "```" fences of
        the change it quotes; an index walk, not a slice per fence: a paste of
        fences stays linear)."""
        m = _FENCE.match(self.lines[fences[k]])
        assert m is not None
        marker = m.group(1)
        close = k + 1
        while close < len(fences) and not self.lines[fences[close]].lstrip().startswith(marker):
            close += 1
        return close

    def fence(self, region_start: int, i: int, j: int) -> None:
        """The text from ``region_start`` up to the fence opened on line ``i``,
        then the fence's content (up to line ``j``). A command named just
        before the fence (a prompt or a Markdown heading alone on its line) or
        in its info string (```` ```sh numactl -H ````) is the content's
        command when the content starts without a prompt of its own."""
        named = self.command_before_fence(region_start, i)
        command = named[1] if named else _fence_info_command(self.lines[i])
        first = self.first_nonblank(i + 1, j)
        if command is None or first >= j or self.prompt(first) is not None:
            self.region(region_start, i, fenced=False)
            self.fence_content(i, j)
            return
        line = named[0] if named else i
        self.region(region_start, line, fenced=False)
        self.mark(line, line + 1, PROMPT)
        self._weak.add(line)
        end = self.next_prompt(first, j)
        self.prompted(line, i + 1, self.trimmed(i + 1, end), command, "shell", self.host, True)
        self.region(end, j, fenced=True)

    def fence_content(self, i: int, j: int) -> None:
        """The content of the fence opened on line ``i`` (up to line ``j``) with
        no command named for it: a region of its own, unless it is configuration
        a post proposes (not read)."""
        if self.next_prompt(i + 1, j) < j or not self.proposal(i + 1, j):
            self.diff_fence = _DIFF_START.fullmatch(self.lines[i]) is not None
            self.region(i + 1, j, fenced=True)
            self.diff_fence = False

    def command_before_fence(self, region_start: int, i: int) -> tuple[int, str] | None:
        """``(line, command)`` of a shell prompt or a heading naming a command
        on the last non-blank line before the fence on line ``i`` (within a
        few lines), or a command in inline code ending with a colon
        (:func:`code_label_command`), or None."""
        k = self.line_above(i, region_start)
        if k is None:
            return None
        prompt = self.prompt(k)
        if prompt is None:
            command = code_label_command(self.lines[k])  # "`cat /proc/interrupts`:"
            return None if command is None else (k, command)
        if prompt[0] != "shell" or not prompt[1]:
            return None
        return k, prompt[1]

    def line_above(self, i: int, start: int) -> int | None:
        """The last non-blank line before line ``i`` (from ``start``) within three
        lines of it, or None."""
        k = i - 1
        while k >= start and i - k <= 3 and self.blank(k):
            k -= 1
        return None if k < start or i - k > 3 else k

    def first_nonblank(self, a: int, b: int) -> int:
        while a < b and self.blank(a):
            a += 1
        return a

    def _front_matter(self) -> int:
        """A blog post's YAML front matter (``---``, ``title: ...``, ``tags:``,
        ``    - NUMA``, ``---``) at the top is prose; the index after it, or 0."""
        end = _front_matter_end(self.lines)
        self.mark(0, end, PROSE)
        return end

    def _fence_lines(self) -> list[int]:
        """Indexes of the lines that open or close a code fence, found with
        one multi-line search."""
        return line_indexes(_FENCE, _FENCE_NEXT, self.body, self.lines[0])

    # -- a fenced or un-fenced region: prompts
    def region(self, a: int, b: int, *, fenced: bool) -> None:
        j = pending = a
        while (j := self.next_prompt(j, b)) < b:
            if len(self.blocks) >= MAX_SPLIT_BLOCKS:
                # a generated or hostile paste: the rest is one unrecognised block
                self.truncated = True
                self.mark(j, b, UNRECOGNISED)
                return
            self.unprompted(pending, j, fenced=fenced, host=self.host)
            j = pending = self.prompt_and_output(j, b, fenced=fenced)
        self.unprompted(pending, b, fenced=fenced, host=self.host)

    def prompt_and_output(self, first: int, b: int, *, fenced: bool) -> int:
        """Read the prompt on line ``first`` and its output (up to the next
        prompt at most, before ``b``); the index where what follows starts."""
        kind_of_prompt, command, out_start = self.read_prompt(first, b)
        host = self.host
        if not command:
            # An empty prompt ("[root@host ~]#" alone) ends the previous
            # output; what follows is recognised by content.
            j = self.next_prompt(out_start, b)
            self.unprompted(out_start, j, fenced=fenced, host=host)
            return j
        if first in self._weak and not fenced and self.sentence(out_start, b):
            self.mark(first, out_start, PROSE)  # a Markdown heading over a sentence
            return out_start
        out_start, j = self.command_output(out_start, b, command, kind_of_prompt == "shell", fenced)
        if first in self._weak and self.trimmed(out_start, j) == out_start:
            self.mark(first, out_start, PROSE)  # a heading over prose, not a command's output
            return j
        self.prompted(first, out_start, self.trimmed(out_start, j), command, kind_of_prompt, host, fenced)
        return j

    def read_prompt(self, first: int, b: int) -> tuple[str, str, int]:
        """Read the prompt on line ``first`` (a SQL statement with the lines that
        continue it, before ``b``), switching hosts when it runs a command:
        ``(prompt kind, command, index after the prompt)``."""
        prompt = self.prompt(first)
        assert prompt is not None
        kind_of_prompt, command, prompt_host = prompt
        # Only a prompt that runs a command switches hosts: a bare prompt
        # naming another host is usually the tail of a paste from another
        # window, and what follows it is read with the current host.
        if command or self.host is None:
            self.prompt_host(first, prompt_host)
        out_start = first + 1
        if kind_of_prompt == "sql":
            out_start, command = self.sql_statement(out_start, b, command)
        self.mark(first, out_start, PROMPT)
        return kind_of_prompt, command, out_start

    def command_output(self, a: int, b: int, command: str, shell: bool, fenced: bool) -> tuple[int, int]:
        """``(start, end)`` of the output of ``command`` from line ``a`` (before
        ``b``): after the author's label of it, and up to the values a ``cat``
        of several files printed when they parse as the file's kind."""
        file_shown = shell and _shows_a_file(command)
        j = self.output_end(a, b, file_shown=file_shown, fenced=_to_next_prompt(command, fenced))
        a = self.output_label(a, j)
        if file_shown and not fenced and (values := self.file_values(a, j, b, command)) is not None:
            return values
        return a, j

    def output_label(self, a: int, j: int) -> int:
        """Where a command's output starts when its first line ``a`` is the
        author's label of it (``Sample output:``, ``输出如下：``): the label is
        prose, the output the lines after it."""
        if a + 1 < j and _OUTPUT_LABEL.fullmatch(self.lines[a].strip()):
            self.mark(a, a + 1, PROSE)
            return a + 1
        return a

    def file_values(self, a: int, j: int, b: int, command: str) -> tuple[int, int] | None:
        """The lines of values a ``cat`` of several files printed from line ``a``
        (one short value a line, ``powersave``; elided with ``:``), which read as
        prose and so end the output early; after the author's sentence when one
        stands between the command and them. ``(start, end)`` when they parse
        as the command's kind (``j``: where the output ends without them; readk)."""
        start = a + 1 if self.lead_sentence(a, b) else a
        end = self.values_end(start, self.next_prompt(start, b))
        if end - start < 2 or (start == a and end <= j):
            return None  # one value, or no more than the output already is
        if not self.parses(kind_for_command(command), start, end):
            return None
        self.mark(a, start, PROSE)
        return start, end

    def lead_sentence(self, a: int, b: int) -> bool:
        """Whether line ``a`` (before ``b``) is the author's sentence, in words
        or in CJK, over the lines after it."""
        return a < b and (self.sentence(a, b) or _CJK.search(self.lines[a]) is not None)

    def values_end(self, i: int, b: int) -> int:
        """The end of the run of value lines (:data:`_VALUE_LINE`) from line ``i``, before ``b``."""
        while i < b and _VALUE_LINE.fullmatch(self.lines[i]):
            i += 1
        return i

    def sentence(self, i: int, b: int) -> bool:
        """Is line ``i`` (before ``b``) a sentence of a post, never an output's
        first line: prose of :data:`SENTENCE_MIN_WORDS` words at least (an
        output of one or two words, ``performance``, reads as prose too)."""
        return i < b and self.cls(i) == "prose" and len(self.lines[i].split()) >= SENTENCE_MIN_WORDS

    def sql_statement(self, j: int, b: int, command: str) -> tuple[int, str]:
        """A SQL statement continued on the lines from ``j`` (``    -> ...``):
        the line after it and the whole statement."""
        while j < b and not command.rstrip().endswith((";", "\\G", "\\g")):
            cm = _SQL_CONTINUATION.match(self.lines[j])
            if not cm:
                break
            command = f"{command} {cm.group('cont').strip()}".strip()
            j += 1
        return j, command

    def output_end(self, out_start: int, b: int, *, file_shown: bool, fenced: bool) -> int:
        """Where the output of a command starting on line ``out_start`` ends:
        the next prompt, or (outside a fence) the first prose line."""
        nxt = self.next_prompt(out_start, b)
        if fenced:
            return nxt
        # Comment lines ("# clients (those using ...)." in a my.cnf, the
        # "# The following is the parsable format" header of lscpu -p)
        # read like prose: they end the output only when prose, not
        # data, follows them (a file shown with cat/grep keeps them all).
        j = out_start + 1 if out_start < nxt else out_start
        while (j := self.next_prose(j, nxt)) < nxt and self.comment_kept(j, nxt, file_shown=file_shown):
            j += 1
        return j

    def comment_kept(self, j: int, end: int, *, file_shown: bool) -> bool:
        """Whether line ``j`` is a comment line the output keeps: all of them in
        a file shown, else those followed by data (:meth:`data_after_comments`)."""
        return _is_comment(self.lines[j]) and (file_shown or self.data_after_comments(j, end))

    def data_after_comments(self, j: int, end: int) -> bool:
        """Whether the comment lines from ``j`` are followed by data (within a
        few lines) rather than prose or the end of the output."""
        for i in range(j + 1, min(end, j + COMMENT_LOOKAHEAD)):
            if self.cls(i) == "blank" or _is_comment(self.lines[i]):
                continue
            return self.cls(i) == "data"
        return False

    def prompted(
        self,
        first: int,
        out_start: int,
        out_end: int,
        command: str,
        prompt: str,
        host: str | None,
        fenced: bool,
    ) -> None:
        """Read the output (lines ``out_start..out_end``) of ``command`` on the
        prompt line ``first``: shared between the commands of a compound line,
        the post's Markdown under a heading, an output nothing reads, or read."""
        known = _known_parts(command) if prompt == "shell" else None
        if known is not None and self.compound(out_start, out_end, known, host, fenced):
            return
        kind = self.command_kind(out_start, out_end, command, known)
        if first in self._weak and kind is not None and out_end > out_start:
            kind = self.kind_by_content(kind, out_start, out_end)
            if not fenced and self.markup_after_heading(first, out_start, out_end, kind, host):
                return
        kind, what = self.content_kind(kind, command, out_start, out_end, (prompt, fenced))
        if what is not None:
            self.unused_block(first, out_start, out_end, command, what, prompt, host, fenced)
            return
        self.read_prompted(first, out_start, out_end, command, kind, prompt, host, fenced)

    def read_prompted(
        self,
        first: int,
        out_start: int,
        out_end: int,
        command: str,
        kind: str | None,
        prompt: str,
        host: str | None,
        fenced: bool,
    ) -> None:
        """Read lines ``out_start..out_end`` as the output of ``command`` (of
        ``kind``, or unread when None) under its prompt on line ``first``; the
        lines after the end of a shell command's output are a data run."""
        rest: tuple[int, int] | None = None
        if prompt == "shell" and kind is not None:
            out_end, rest = self.shell_output_end(kind, out_start, out_end)
        self.mark(
            out_start, out_end, READ if kind is not None else self.unread_role(out_start, out_end, fenced)
        )
        # The statement says what a result table is (plan_type counts, proxy
        # config, a timed CREATE INDEX), so SQL parsers get it too.
        start = first if prompt == "sql" else out_start
        self.append_prompted(start, out_end, self.text(start, out_end), command, kind, prompt, host, fenced)
        if rest is not None:
            self.data_run(rest[0], rest[1], fenced=fenced, host=host)

    def content_kind(
        self, kind: str | None, command: str, a: int, b: int, shown: tuple[str, bool] = ("shell", False)
    ) -> tuple[str | None, str | None]:
        """The kind of ``command``'s output on lines ``a..b`` (by content when
        the command does not say), or what the catalogue calls it when no
        parser reads it: ``(kind, what)``."""
        if kind is not None:
            return kind, self.other_system_what(kind, a, b)
        output = self.text(a, b)
        if not output.strip():
            return None, None
        kind = self.detect(self.head(a, b) if b - a > 200 else output)
        return kind, None if kind is not None else self.unused_what(command, output, a, b, shown)

    def other_system_what(self, kind: str, a: int, b: int) -> str | None:
        """What the catalogue calls the output on lines ``a..b`` of a command a
        parser reads (``vmstat``) when it does not parse as ``kind``: the same
        command's output on another system (Solaris's or AIX's vmstat columns)
        is not used, never read as Linux's."""
        if b <= a:
            return None
        # their headers are in the first lines (after a banner and a group header)
        what = other_system_output("\n".join(self.lines[a : min(b, a + OTHER_SYSTEM_HEAD_LINES)]))
        return what if what is not None and not self.parses(kind, a, b) else None

    def markup_after_heading(self, first: int, a: int, b: int, kind: str, host: str | None) -> bool:
        """Whether lines ``a..b`` under the ``# command`` line ``first`` outside
        a fence are the post's Markdown (:meth:`markup_under_heading`); the
        heading is prose then, and the lines read without a prompt."""
        if not self.markup_under_heading(kind, a, b):
            return False
        self.mark(first, a, PROSE)  # "# numastat Overview" over "* numa_hit"
        self.unprompted(a, b, fenced=False, host=host)
        return True

    def markup_under_heading(self, kind: str, a: int, b: int) -> bool:
        """Are lines ``a..b`` under a ``# command`` line outside a fence the
        post's Markdown (a list item or a quote first) rather than the output
        of ``kind``, which does not read them?"""
        return _MARKUP_START.match(self.lines[a]) is not None and not self.parses(kind, a, b)

    def program_output(self, command: str, a: int, b: int, fenced: bool) -> str | None:
        """The program whose output lines ``a..b`` are, when no parser and no
        row of the catalogue reads it (``stat /``, ``lsscsi``): the shell prompt
        says which command printed them, so they are its output, not used, never
        a reading missed. Not when they are what a post quotes (notes under a
        commented-out command, :meth:`unread_role`), nor a file printed by a
        reader of files (``grep -c processor /proc/cpuinfo``: the file's parser
        did not read it, which is said)."""
        name = program_name(command)
        if name is None or name in _FILE_READERS or self.unread_role(a, b, fenced) != UNRECOGNISED:
            return None
        return name

    def unread_role(self, a: int, b: int, fenced: bool) -> int:
        """What the output of a command no parser reads is: prose when it is
        what the post quotes (comments under ``sysctl -p``, a script), else
        unrecognised."""
        if any(not self.blank(i) for i in range(a, b)) and self.post_quotes(a, b, fenced):
            return PROSE  # also commands and comments under a commented-out one ("#tc filter add ...")
        return UNRECOGNISED

    def post_quotes(self, a: int, b: int, fenced: bool) -> bool:
        """Whether lines ``a..b`` are what the post quotes (:meth:`quoted_text`),
        a how-to's notes or, outside a fence, its sentences in CJK."""
        return (
            self.quoted_text(a, b, fenced=fenced)
            or command_notes(self.note_kinds(a, b))
            or (not fenced and self.cjk_sentences(a, b))
        )

    def cjk_sentences(self, a: int, b: int) -> bool:
        """Whether the non-blank lines ``a..b`` are all sentences in Chinese,
        Japanese or Korean (:func:`_cjk_prose`): the post's text after a command
        quoted in it (``$ sudo ip netns add ns2`` then ``次に Virtual Ethernet
        インターフェイスで veth0``), which an output's first line always is."""
        lines = [self.lines[i].strip() for i in range(a, b) if not self.blank(i)]
        return all(_cjk_sentence(line) for line in lines)

    def kind_by_content(self, kind: str, a: int, b: int) -> str:
        """The kind of lines ``a..b`` that a heading named ``kind``: the kind
        their content is recognised as when they do not parse as ``kind``
        (an issue titled ``# vmstat`` above an iostat report)."""
        if self.parses(kind, a, b):
            return kind
        other = self.detect(self.head(a, b))
        return other if other is not None and self.parses(other, a, b) else kind

    def command_kind(self, a: int, b: int, command: str, known: list[tuple[str, str]] | None) -> str | None:
        """The kind of what ``command`` printed on lines ``a..b`` by the
        command; of a compound line (``known``: the parts a parser reads, with
        their kinds), the one that prints."""
        if known is None:
            return kind_for_command(command)
        kinds = {k for _part, k in known}
        if len(kinds) > 1:
            detected = self.detect(self.head(a, b))
            return detected if detected in kinds else known[-1][1]
        return known[-1][1] if known else kind_for_command(command)  # "cd /x && numactl -H"

    def unused_what(
        self, command: str, output: str, a: int, b: int, shown: tuple[str, bool] = ("shell", False)
    ) -> str | None:
        """What an output no parser reads is (a command Casebook does not read,
        or a program run at a shell prompt: :meth:`program_output`), or None (a
        failed command's errors are not). ``shown``: the prompt's kind and
        whether the output is in a fence."""
        if command_failure(output) is not None:
            return None
        what = unused_command(command) or unused_output(self.head(a, b))
        return what or (self.program_output(command, a, b, shown[1]) if shown[0] == "shell" else None)

    def shell_output_end(self, kind: str, a: int, b: int) -> tuple[int, tuple[int, int] | None]:
        """Where the output of a ``kind`` shell command on lines ``a..b`` ends,
        and the lines after it that are something else, if any."""
        rest: tuple[int, int] | None = None
        if b - a > 2:
            # the output may run straight into another pasted artifact
            cut = self.trailing_artifact(a, b, kind)
            if cut is not None:
                rest = (cut, b)
                b = self.trimmed(a, cut)
        if self.other_form_at_end(a, b):
            # a table reader stops at the first line that is not a row: what it
            # passed over at the end ("text after the table not read") is handed back
            end = self.unread_tail(kind, a, b)
            if end < b:
                rest = (end, rest[1] if rest is not None else b)
                b = end
        return b, rest

    def compound(self, a: int, b: int, known: list[tuple[str, str]], host: str | None, fenced: bool) -> bool:
        """The output of ``a; b`` (lines ``a..b``) shared between the commands of
        the line that a parser reads (``known``: command, kind), in order: each
        next output starts at the first line from which it parses (or is
        detected) while the output before it parses as its own command's. False
        when no such split is found."""
        if len({k for _part, k in known}) < 2:
            return False
        pieces: list[tuple[int, int, str, str]] = []
        p = a
        for (cmd, kind), (_next_cmd, next_kind) in itertools.pairwise(known):
            cut = self.next_output_start(p, b, kind, next_kind)
            if cut is None:
                return False
            pieces.append((p, cut, cmd, kind))
            p = cut
        pieces.append((p, b, known[-1][0], known[-1][1]))
        for start, piece_end, cmd, kind in pieces:
            end = self.trimmed(start, piece_end)
            self.mark(start, end, READ)
            self.append_prompted(start, end, self.text(start, end), cmd, kind, "shell", host, fenced)
        return True

    def next_output_start(self, p: int, b: int, kind: str, next_kind: str) -> int | None:
        """The first line after ``p`` (within :data:`COMPOUND_LOOKAHEAD`) from which
        the lines parse or are detected as ``next_kind`` while those from ``p``
        parse as ``kind``; None when there is none, or no detection budget left."""
        for i in range(p + 1, min(b, p + COMPOUND_LOOKAHEAD)):
            if self.detect_budget <= 0:
                return None
            if self.blank(i):
                continue
            self.detect_budget -= 1
            starts = self.detect(self.head(i, b, PROBE_HEAD_LINES, PROBE_HEAD_CHARS)) == next_kind
            if (starts or self.parses(next_kind, i, b)) and self.parses(kind, p, i):
                return i
        return None

    def unused_block(
        self,
        first: int,
        out_start: int,
        out_end: int,
        command: str,
        what: str,
        prompt: str,
        host: str | None,
        fenced: bool,
    ) -> None:
        """The output of a command Casebook does not read: accounted as such, up
        to where another pasted artifact starts (that one is read)."""
        cut = self.artifact_after(out_start, out_end) if out_end - out_start > 2 else None
        end = self.trimmed(out_start, out_end if cut is None else cut)
        self.mark_unused(out_start, end, what)
        start = first if prompt == "sql" else out_start
        block = Block(
            command=command,
            text=self.text(start, end),
            start_line=start + 1,
            end_line=max(end, start + 1),
            label=command[:200],
            prompt=prompt,
            host=host,
            fenced=fenced,
            unused=what,
        )
        self.blocks.append(block)
        if cut is not None:
            self.data_run(cut, out_end, fenced=fenced, host=host)

    def mark_unused(self, a: int, b: int, what: str) -> None:
        """Mark lines ``a..b`` as an output nothing reads and list them with
        ``what`` it is (when there are any)."""
        self.mark(a, b, UNUSED)
        if b > a:
            self.unused.append((a, b, what))

    def artifact_after(self, a: int, b: int) -> int | None:
        """First line of ``a+1..b`` where an artifact that parses starts, or None."""
        return self.first_artifact(self.form_changes(a, b, min(MAX_TRAILING_DETECT, self.detect_budget)), b)

    def artifact_inside(self, a: int, b: int) -> tuple[int, str] | None:
        """First line of ``a..b`` that is an artifact's strong first line
        (:func:`strong_first_line`) and starts one that parses, with its kind
        (the detector's when it recognises more), or None: a run that no
        detector recognised from its head may hold one, or be one cut before
        the lines its detector needs."""
        starts = (i for i in range(a, b) if strong_first_line(self.lines[i]))
        for i in itertools.islice(starts, MAX_STRONG_STARTS):
            self.detect_budget -= 1
            head = self.head(i, b, PROBE_HEAD_LINES, PROBE_HEAD_CHARS)
            kind = self.detect(head) or strong_first_line(self.lines[i])
            if self.parses(kind, i, b):
                return i, str(kind)
        return None

    def first_artifact(self, starts: Iterable[int], b: int) -> int | None:
        """The first of ``starts`` where an artifact that parses up to ``b`` starts, or None."""
        for i in starts:
            if self.artifact_at(i, b) is not None:
                return i
        return None

    def artifact_at(self, i: int, b: int, other_than: str | None = None) -> str | None:
        """The kind (not ``other_than``) detected from line ``i`` when the lines
        ``i..b`` parse as it, or None; one detection taken from the budget."""
        self.detect_budget -= 1
        other = self.detect(self.head(i, b, PROBE_HEAD_LINES, PROBE_HEAD_CHARS))
        if other is None or other == other_than or not self.parses(other, i, b):
            return None
        return other

    def unread_tail(self, kind: str, a: int, b: int) -> int:
        """Where the output of ``kind`` on lines ``a..b`` ends when its last
        lines are ones its parser reports it did not read (an error with the
        line's number saying "not read": the prompt of another tool, a
        variable, a sentence); ``b`` when there are none. Lines the parser
        reports as cut by the paste stay with it."""
        unread = self.unread_lines(kind, a, b)
        if not unread:
            return b
        end, passed = self.unread_run(a, b, unread)
        if passed == 1 and self.last_line(self.trimmed(a, b) - 1):
            return b  # one line at the very end of the paste: a row the paste cut ("CPU M")
        if not a < end < b or unread.isdisjoint(range(end - a + 1, b - a + 1)):
            return b
        return end if self.parses(kind, a, end) else b

    def unread_run(self, a: int, b: int, unread: set[int]) -> tuple[int, int]:
        """``(start, count)`` of the run of ``unread`` lines (1-based in ``a..b``)
        and blank lines that ends ``a..b``: where it starts, never just after a
        blank line, and how many non-blank lines it holds."""
        end, passed = b, 0
        while end > a and (self.blank(end - 1) or (end - a) in unread):
            passed += not self.blank(end - 1)
            end -= 1
        while end < b and self.blank(end - 1):  # never cut before a blank line
            end -= 1
        return end, passed

    def unread_lines(self, kind: str, a: int, b: int) -> set[int]:
        """The numbers (1-based in ``a..b``) of the lines the ``kind`` parser
        reports it did not read; none when the lines do not parse."""
        if not self.parses(kind, a, b):
            return set()
        return _unread_line_numbers(self._results.get((kind, a, b)))

    def other_form_at_end(self, a: int, b: int) -> bool:
        """Whether the last line of ``a..b`` starts like none of the output's
        first lines (only then is the output parsed here, to find where it ends:
        a paste of thousands of prompted outputs must not hold every parse)."""
        last = self.trimmed(a + 1, b)
        if last - a < 2:
            return False
        forms = {self.form(line) for line in self.lines[a : min(a + 8, last - 1)] if line.strip()}
        return self.form(self.lines[last - 1]) not in forms

    def last_line(self, i: int) -> bool:
        """Whether line ``i`` is the last non-blank line of the text (or of its fence)."""
        for j in range(i + 1, min(len(self.lines), i + 50)):
            line = self.lines[j]
            if line.strip():
                return _FENCE.match(line) is not None
        return i + 50 >= len(self.lines)

    def trailing_artifact(self, a: int, b: int, kind: str) -> int | None:
        """First line after which the output of a ``kind`` command is another
        artifact (both sides must parse), or None."""
        budget = min(MAX_TRAILING_DETECT, self.detect_budget)
        whole: object = _UNSET
        for i in self.form_changes(a, b, budget):
            if self.artifact_at(i, b, other_than=kind) is None:
                continue
            # A detector reads ahead (from "node 0 cpus" it already sees the
            # "top -" below), so the cut is right only where the command's own
            # output, cut there, still parses to everything it says in full.
            if whole is _UNSET:
                whole = self.parsed_facts(kind, a, b)
            if whole is not None and self.parsed_facts(kind, a, i) == whole:
                return i
        return None

    def form_changes(self, a: int, b: int, cap: int) -> list[int]:
        """Lines of ``a+1..b`` where another artifact may start: after a blank
        line, or where the form of the lines changes (:func:`_form`), at most
        ``cap`` of them. Detection runs on these only, so it is once per block
        and a few times per long output, never once per line."""
        out: list[int] = []
        if cap <= 0:
            return out
        lines = self.lines
        form_of = self.form
        seen = {form_of(lines[a])}
        after_blank = False
        i = a + 1
        while i < b:
            if not after_blank:
                # skip the lines that are neither blank nor of a new form
                i = self.next_form_or_blank(i, b, seen)
                if i >= b:
                    break
            line = lines[i]
            if not line.strip():
                after_blank = True
                i += 1
                continue
            form = form_of(line)
            # a form seen before in this output is its own layout coming back
            # (lscpu's "key:" lines around a cache table), unless a blank line
            # separates it
            if after_blank or form not in seen:
                out.append(i)
                if len(out) >= cap:
                    break
            seen.add(form)
            after_blank = False
            i += 1
        return out

    def next_form_or_blank(self, i: int, b: int, seen: set[str]) -> int:
        """The first line of ``i..b`` that may be blank or of a form not in
        ``seen`` (a line that is neither is skipped by a search of the text), or ``b``."""
        if not self.searchable:
            return i
        m = _new_form_or_blank(frozenset(seen)).search(self.body, self.offsets[i] - 1, self.offsets[b] - 1)
        return b if m is None else bisect.bisect_left(self.offsets, m.start() + 1)

    def parsed_facts(self, kind: str, a: int, b: int) -> object:
        """The parse of lines ``a..b`` as ``kind`` without provenance, or None."""
        spec = parsers.REGISTRY.get(kind)
        if spec is None:
            return None
        self.detect_budget -= 1
        result = self._results.get((kind, a, b), _UNSET)
        if result is _UNSET:
            try:
                result = parsers.parse(spec, self.text(a, b))
            except Exception:
                return None
            self._results[kind, a, b] = result
        out = to_dict(result)
        if isinstance(out, dict):
            out.pop("source", None)
            out.pop("lines", None)
        return out

    def add_block(self, block: Block, a: int, b: int) -> None:
        """Append ``block`` (lines ``a..b``), with its parse when the splitter made it."""
        if block.kind is not None and (result := self._results.get((block.kind, a, b), _UNSET)) is not _UNSET:
            self.parsed[len(self.blocks)] = result
        self.blocks.append(block)

    def append_prompted(
        self,
        start: int,
        out_end: int,
        text: str,
        command: str,
        kind: str | None,
        prompt: str | None,
        host: str | None,
        fenced: bool,
    ) -> None:
        self.add_block(
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
            ),
            start,
            out_end,
        )

    # -- text without a prompt
    def unprompted(self, a: int, b: int, *, fenced: bool, host: str | None) -> None:
        """Read lines ``a..b``, without a prompt: one data run inside a fence,
        else runs of data and of prose in turn (a heading is prose)."""
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
            elif c == "data" and self.post_heading(i, b):
                self.prose_run(i, i + 1, host=host)
                i += 1
            elif c == "data" or self.word_command(i, b):
                i = self.unprompted_data(i, b, host)
            else:
                i = self.unprompted_prose(i, b, host)

    def unprompted_data(self, i: int, b: int, host: str | None) -> int:
        """Read the run of data from line ``i`` up to the next prose line (blank
        lines inside it are kept when data follows), unless a post proposes it;
        the index where the run ends."""
        j = self.next_prose(i + 1, b)
        if not self.proposal(i, self.trimmed(i, j)):
            self.data_run(i, self.trimmed(i, j), fenced=False, host=host)
        return j

    def unprompted_prose(self, i: int, b: int, host: str | None) -> int:
        """Read the run of prose lines from line ``i``; the index where it ends."""
        j = i + 1
        while j < b and self.cls(j) == "prose":
            j += 1
        self.prose_run(i, j, host=host)
        return j

    def word_command(self, i: int, b: int) -> bool:
        """Whether line ``i``, prose by its class, is a command of one word typed
        alone (``lsmem``, ``lscpu``, ``free``) with an output's line under it: it
        opens that output's run (:meth:`bare_command_output` reads them)."""
        line = self.lines[i].strip()
        if " " in line or not _lone_command(line):
            return False
        k = self.first_nonblank(i + 1, b)
        return k < b and self.cls(k) == "data"

    def post_heading(self, i: int, b: int) -> bool:
        """Whether line ``i`` is a post's heading: a title alone (:meth:`lone_title`)
        or a setext underline (:meth:`heading_underline`)."""
        return self.lone_title(i, b) or self.heading_underline(i)

    def heading_underline(self, i: int) -> bool:
        """Whether line ``i`` underlines the prose line above it (``-----`` or
        ``=====`` under a title, a Markdown setext heading)."""
        line = self.lines[i].strip()
        if i == 0 or not line or line[0] not in "-=" or not _MD_RULE_LINE.fullmatch(line):
            return False
        return self.cls(i - 1) == "prose"

    def lone_title(self, i: int, b: int) -> bool:
        """Whether line ``i`` is a Markdown heading in words (:func:`title_heading`)
        between blank lines, prose or the edges of ``..b``."""
        if not title_heading(self.lines[i]):
            return False
        return (i == 0 or self.cls(i - 1) != "data") and (i + 1 >= b or self.cls(i + 1) != "data")

    def proposal(self, a: int, b: int) -> bool:
        """Whether lines ``a..b`` are configuration a post proposes, not what a
        host printed: a few lines after a sentence that says to add them
        (``在/etc/sysctl.conf文件中添加如下配置:``, ``Add the following to
        /etc/sysctl.conf:``). They are marked as prose and not read."""
        if b - a > PROPOSAL_MAX_LINES or not self.proposes_above(a):
            return False
        self.mark(a, b, PROSE)
        return True

    def proposes_above(self, a: int) -> bool:
        """Whether the line above line ``a`` (past blank lines and a fence line,
        within three lines) is a sentence that says to add what follows."""
        k = a - 1
        while k >= 0 and (self.blank(k) or _FENCE.match(self.lines[k])) and a - k <= 3:
            k -= 1
        return k >= 0 and self.cls(k) == "prose" and _PROPOSES.search(self.lines[k]) is not None

    def data_run(self, a: int, b: int, *, fenced: bool, host: str | None) -> None:
        a = self.first_nonblank(a, b)
        b = self.trimmed(a, b)
        if a >= b:
            return
        if (fenced and self.diff_fence) or self.quoted_diff(a, b):
            self.mark(a, b, PROSE)  # an output a quoted change shows is the change's text
            return
        for start, end, kind in self.pieces(a, b, self.detected_kinds(a, b)):
            self.emit_unprompted(start, end, kind, fenced, host)

    def pieces(self, a: int, b: int, kinds: list[str | None]) -> Iterator[tuple[int, int, str | None]]:
        """The pieces ``(start, end, kind)`` of the data run ``a..b``, cut where
        the detected ``kinds`` (one a line) change and both sides parse."""
        piece_start, piece_kind = a, kinds[0]
        for offset in range(1, b - a):
            k = kinds[offset]
            if k is None or k == piece_kind or k == kinds[offset - 1]:
                continue
            i = a + offset
            if not self.cut_holds(piece_start, i, b, piece_kind, k):
                continue
            yield piece_start, i, piece_kind
            piece_start, piece_kind = i, k
        yield piece_start, b, piece_kind

    def cut_holds(self, start: int, i: int, b: int, kind: str | None, next_kind: str) -> bool:
        """Whether a data run is cut at line ``i``, between the piece of
        ``kind`` from ``start`` and one of ``next_kind`` up to ``b``. Detectors
        look at a few lines and some fire on the middle of another artifact
        (softirq rows look like interrupt rows), so a cut is kept only when both
        sides parse as what they look like (or nothing detected the piece)."""
        both_parse = self.parses(next_kind, i, b) and self.parses(kind, start, i)
        return kind is None or both_parse

    def detected_kinds(self, a: int, b: int) -> list[str | None]:
        """The kind detected for each line of the data run ``a..b``.

        Content detection costs ~35 regex searches, so it runs only where the
        shape of the lines changes (a new first word, after a blank line), at
        most MAX_DETECT_PER_RUN times per run. Each such line is first tried
        with the text up to the next change ("top - ..." alone is top even when
        node meminfo lines follow), then with the rest of the run."""
        kinds: list[str | None] = [None] * (b - a)
        for index, (i, nxt) in enumerate(itertools.pairwise([*self.detection_starts(a, b), b])):
            # the run's first line gets a full head, later candidates a probe
            kind = self.detect_from(i, nxt, b, _FIRST_HEAD if index == 0 else _PROBE_HEAD)
            kinds[i - a : nxt - a] = [kind] * (nxt - i)
        return kinds

    def detection_starts(self, a: int, b: int) -> list[int]:
        """The lines of the data run ``a..b`` where detection runs: its first,
        then where the form changes (:meth:`form_changes`) unless the run is
        longer than ``detect_lines``."""
        if b - a > self.detect_lines:
            return [a]
        budget = min(MAX_DETECT_PER_RUN, max(self.detect_budget, 1))
        return [a, *self.form_changes(a, b, budget - 1)]

    def detect_from(self, i: int, nxt: int, b: int, size: tuple[int, int]) -> str | None:
        """The kind detected from line ``i`` on the head (``size``: lines,
        characters) of the lines up to the next change ``nxt``, then of the rest
        of the run (up to ``b``) when that was shorter than the head."""
        kind = self.detect(self.head(i, nxt, *size))
        if kind is None and nxt < b and nxt - i < size[0]:
            kind = self.detect(self.head(i, b, *size))
            self.detect_budget -= 1
        self.detect_budget -= 1
        return kind

    def parses(self, kind: str | None, a: int, b: int) -> bool:
        """Whether lines ``a..b`` parse as ``kind`` (within the detection budget
        and the parse budget; the result is kept for the block)."""
        if kind is None:
            return False
        spec = parsers.REGISTRY.get(kind)
        if spec is None or self.detect_budget <= 0:
            return False
        self.detect_budget -= 1

        seconds, max_bytes = parse_budget()
        text = self.text(a, b)
        if max_bytes > 0 and len(text) > max_bytes:
            return False
        if (kind, a, b) in self._results:
            return True
        return self.parse(spec, kind, a, b, text, seconds)

    def parse(self, spec: parsers.ParserSpec, kind: str, a: int, b: int, text: str, seconds: float) -> bool:
        """Whether ``text`` (lines ``a..b``) parses as ``kind`` within ``seconds``;
        its result kept. A timeout ends the detection of splits."""
        try:
            with parse_time_budget(seconds):
                self._results[kind, a, b] = parsers.parse(spec, text)
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
        """Read the piece ``a..b`` of a data run, detected as ``kind`` (None:
        nothing detected it)."""
        b = self.trimmed(a, b)
        if a >= b:
            return
        if kind is None:
            self.undetected(a, b, fenced, host)
            return
        if self.bare_command_output(a, b, host, fenced):
            return  # "vmstat 1" over the vmstat table it printed
        if b - a > 1 and not self.parses(kind, a, b):
            kind = self.whole_kind(kind, a, b)
        self.read_unprompted(a, b, kind, fenced, host)

    def read_unprompted(self, a: int, b: int, kind: str, fenced: bool, host: str | None) -> None:
        """Read lines ``a..b`` as the output of ``kind`` (no prompt over them);
        the lines at the end its parser did not read are handed back unread."""
        end = self.unread_tail(kind, a, b) if b - a > 1 else b
        self.mark(a, end, READ)
        self.add_block(
            Block(
                command=None,
                text=self.text(a, end),
                start_line=a + 1,
                end_line=end,
                label=kind,
                kind=kind,
                host=host,
                fenced=fenced,
            ),
            a,
            end,
        )
        if end < b:
            # handed back as what nothing read (not detected again: a paste that
            # repeats a line a parser passes over would be split once per line)
            self.emit_unprompted(self.first_nonblank(end, b), b, None, fenced, host)

    def whole_kind(self, kind: str, a: int, b: int) -> str:
        """The kind of lines ``a..b`` recognised as ``kind`` from their first
        lines only (a "CPU0 CPU1" header alone reads as /proc/interrupts) but
        not parsing as it: the whole piece may say better."""
        whole = self.detect(self.head(a, b))
        if whole is not None and whole != kind and self.parses(whole, a, b):
            return whole
        return kind

    def undetected(self, a: int, b: int, fenced: bool, host: str | None) -> None:
        """Lines ``a..b`` that no detector recognised: the output of a command
        Casebook does not read, bare commands, a post's Markdown (a table, a
        rule), or unrecognised (mentions inside them are looked for)."""
        if self.artifact_within(a, b, fenced, host):
            return
        read = (  # each reading marks the lines when it applies
            self.catalogued_unused(a, b)
            or self.post_text(a, b, fenced)
            or self.bare_command_output(a, b, host, fenced)
            or self.bare_commands(a, b)
            or self.notes(a, b)
            or self.gutter(a, b)
            or self.code_or_chrome(a, b)
        )
        if not read:
            self.unrecognised(a, b, fenced, host)

    def artifact_within(self, a: int, b: int, fenced: bool, host: str | None) -> bool:
        """Whether an artifact starts inside lines ``a..b`` (:meth:`artifact_inside`):
        it and what follows are read as its kind, the lines before it again as
        undetected."""
        inside = self.artifact_inside(a, b)
        if inside is None:
            return False
        start, kind = inside
        if start > a:
            self.undetected(a, start, fenced, host)
        self.emit_unprompted(start, b, kind, fenced, host)
        return True

    def post_text(self, a: int, b: int, fenced: bool) -> bool:
        """Whether lines ``a..b`` are what a post quotes (:meth:`quoted_text`,
        :meth:`configuration`) or its own text (:meth:`plain_text`); marked as prose."""
        if not (
            self.quoted_text(a, b, fenced=fenced) or self.plain_text(a, b, fenced) or self.configuration(a, b)
        ):
            return False
        self.mark(a, b, PROSE)
        return True

    def code_or_chrome(self, a: int, b: int) -> bool:
        """Whether lines ``a..b`` are a piece of code or configuration that its own
        comments cut apart (:meth:`code_paragraph`), or a page's chrome
        (:meth:`page_chrome`); marked as prose."""
        if not (self.code_paragraph(a, b) or self.page_chrome(a, b)):
            return False
        self.mark(a, b, PROSE)
        return True

    def unrecognised(self, a: int, b: int, fenced: bool, host: str | None) -> None:
        """Mark lines ``a..b`` unrecognised; a few lines outside a fence may
        still mention an artifact inside their sentences (:meth:`mentions`)."""
        self.mark(a, b, UNRECOGNISED)
        if not fenced and b - a <= MENTION_MAX_LINES:
            self.mentions(a, b, host=host)

    def catalogued_unused(self, a: int, b: int) -> bool:
        """Whether lines ``a..b`` are an output the catalogue knows and no parser
        reads (:func:`collectors.unused.unused_output`); marked and listed so."""
        what = unused_output(self.head(a, b))
        if what is None:
            return False
        self.mark_unused(a, b, what)
        return True

    def bare_commands(self, a: int, b: int) -> bool:
        """Whether lines ``a..b`` are a few commands without a prompt (``lscpu -e``
        above its output); marked as prompts."""
        if b - a > BARE_COMMAND_MAX_LINES or not all(
            self.blank(i) or _bare_command(self.lines[i]) for i in range(a, b)
        ):
            return False
        self.mark(a, b, PROMPT)
        return True

    def plain_text(self, a: int, b: int, fenced: bool) -> bool:
        """Whether lines ``a..b``, which no detector recognised, are a post's
        text: every non-blank line reads as prose on its own (:func:`line_class`;
        text an author put in a code block, a list of options in Chinese), or,
        outside a fence, they are one line standing alone that names what
        follows or titles a section (:func:`caption_line`: ``Disk IO(sdb) info
        of tikv-3``). A line of words between the lines of a paragraph is
        one of them (:meth:`paragraph_line`). An output's line comes with its
        command or its neighbours."""
        lines = [i for i in range(a, b) if not self.blank(i)]
        if all(self.prose_line(i) for i in lines):
            return bool(lines)
        return not fenced and len(lines) == 1 and caption_line(self.lines[lines[0]].strip())

    def prose_line(self, i: int) -> bool:
        """Whether line ``i`` reads as prose on its own or is a paragraph's line
        (:meth:`paragraph_line`)."""
        return self.cls(i) == "prose" or self.paragraph_line(i)

    def paragraph_line(self, i: int) -> bool:
        """Whether line ``i`` is a paragraph's line cut by its width
        (:func:`wrapped_words`) with a line of prose right above or below it."""
        if not wrapped_words(self.lines[i]):
            return False
        return any(
            0 <= k < len(self.lines) and not self.blank(k) and self.cls(k) == "prose" for k in (i - 1, i + 1)
        )

    def gutter(self, a: int, b: int) -> bool:
        """Lines ``a..b`` that are the line numbers of a listing the page printed
        apart from it (:func:`listing_gutter`): markup, read as prose."""
        if b - a > GUTTER_MAX_LINES or not listing_gutter(self.lines[a:b]):
            return False
        self.mark(a, b, PROSE)
        return True

    def bare_command_output(self, a: int, b: int, host: str | None, fenced: bool) -> bool:
        """Lines ``a..b`` that open with a command alone on its line, without a
        prompt (``cat  /sys/block/sda/queue/scheduler``, ``vmstat 1``), then its
        output: read as a prompt line and the command's output when the output
        parses as what the command prints (readk). A colon after the command
        (``cat /sys/block/sda/queue/scheduler:``, a label over its output) is
        not part of it."""
        command = self.bare_command_at(a)
        if command is None:
            return False
        out = self.first_nonblank(a + 1, b)
        if out < b and _lone_command(self.lines[out].strip()):
            # commands one under the other ("vmstat 1", "vmstat 1 -S m"): the last one printed
            return self.bare_command_output(out, b, host, fenced) and self.mark_prompt(a)
        if out >= b:
            return False
        kind = kind_for_command(command)
        if kind is None:
            return self.bare_unused_output(a, out, b, command)
        return self.bare_read_output(a, out, b, command, kind, host, fenced)

    def bare_command_at(self, a: int) -> str | None:
        """The command alone on line ``a`` (the colon of a label over its output
        left out), or None; never an output's first line that names a command
        (``top - 11:38:32 up 64 days``)."""
        command = _LABEL_COLON.sub("", self.lines[a].strip())
        if not _lone_command(command) or self.detect(command) is not None:
            return None
        return command

    def bare_read_output(
        self, a: int, out: int, b: int, command: str, kind: str, host: str | None, fenced: bool
    ) -> bool:
        """Whether lines ``out..b`` under a command alone on line ``a`` are what
        it prints as ``kind``; read as its output then."""
        if not self.printed(command, kind, out, b):
            return False
        self.mark(a, a + 1, PROMPT)
        self.mark(out, b, READ)
        # no prompt was shown: the block has its command, not a prompt (not a session)
        self.append_prompted(out, b, self.text(out, b), command, kind, None, host, fenced)
        return True

    def bare_unused_output(self, a: int, out: int, b: int, command: str) -> bool:
        """Lines ``out..b`` under a command alone on line ``a`` that no parser
        reads (``lsscsi``, ``sudo lsiutil``): its output, not used, when they are
        an output's lines (data, not a post's sentences) and the command did
        not fail."""
        what = program_name(command)
        output = self.text(out, b)
        if what is None or what in _FILE_READERS or command_failure(output) is not None:
            return False
        if self.holds_prose(out, b):
            return False
        what = unused_command(command) or what
        self.mark(a, a + 1, PROMPT)
        self.mark_unused(out, b, what)
        return True

    def holds_prose(self, a: int, b: int) -> bool:
        """Whether a line of ``a..b`` reads as prose (a post's sentence)."""
        return any(not self.blank(i) and self.cls(i) == "prose" for i in range(a, b))

    def mark_prompt(self, i: int) -> bool:
        self.mark(i, i + 1, PROMPT)
        return True

    def printed(self, command: str, kind: str, a: int, b: int) -> bool:
        """Are lines ``a..b`` what ``command`` (of parser ``kind``) printed: they
        parse as it, or are a file's value a cat printed (the device is in the
        path the parser gets with the command)?"""
        if _shows_a_file(command) and b - a <= BARE_COMMAND_MAX_LINES:
            return True
        return self.parses(kind, a, b)

    def notes(self, a: int, b: int) -> bool:
        """Lines ``a..b`` that are a how-to's notes (:func:`command_notes`):
        its commands read as prompt lines, the rest as prose."""
        kinds = self.note_kinds(a, b)
        if not command_notes(kinds):
            return False
        self.mark(a, b, PROSE)
        for i, kind in enumerate(kinds, start=a):
            if kind == "command" and not _CJK.search(self.lines[i]):
                self.mark(i, i + 1, PROMPT)
        return True

    def note_kinds(self, a: int, b: int) -> list[str | None]:
        """What each of lines ``a..b`` is as a line of a how-to's notes
        (:func:`note_kind`, a quoted command's continuation lines included)."""
        lines = [self.lines[i] for i in range(a, b)]
        return continued_commands(
            lines, [note_kind(line, self.cls(i)) for i, line in enumerate(lines, start=a)]
        )

    def quoted_text(self, a: int, b: int, *, fenced: bool) -> bool:
        """Whether lines ``a..b`` are what a post quotes rather than what a host
        printed: its Markdown, a message's header (outside a fence), code or
        configuration (anywhere)."""
        lines = [self.lines[i] for i in range(a, b) if not self.blank(i)]
        above = self.lines[a - 1] if a > 0 else ""
        if not fenced and _post_markup(lines, above):
            return True
        return code_fragment(lines, above) or self.quoted_diff(a, b) or (not fenced and self.table_rows(a, b))

    def code_paragraph(self, a: int, b: int) -> bool:
        """Whether lines ``a..b`` are a piece of source code or configuration
        that its own comments or lines read as words cut apart (``server {``,
        ``listen 80 backlog=4096;``, then ``# The rest of server configuration``,
        then ``}``): :func:`code_fragment` holds on them with the lines around
        them that nothing read, up to a blank line or :data:`CODE_WINDOW_LINES`."""
        lo, hi = a, b
        while lo > 0 and a - lo < CODE_WINDOW_LINES and self.code_neighbour(lo - 1):
            lo -= 1
        while hi < len(self.lines) and hi - b < CODE_WINDOW_LINES and self.code_neighbour(hi):
            hi += 1
        if (lo, hi) == (a, b):
            return False
        lines = [self.lines[i] for i in range(lo, hi) if not self.blank(i)]
        return code_fragment(lines, self.lines[lo - 1] if lo > 0 else "") or configuration_fragment(lines)

    def configuration(self, a: int, b: int) -> bool:
        """Whether lines ``a..b``, which no command printed, are a configuration
        file a post quotes (:func:`configuration_fragment`)."""
        return configuration_fragment([self.lines[i] for i in range(a, b) if not self.blank(i)])

    def page_chrome(self, a: int, b: int) -> bool:
        """Whether lines ``a..b`` are a page's chrome or an issue template's short
        lines (:func:`chrome_line`), or one answer under its template's field
        (``win10`` under ``环境``, ``6.0.6`` under ``Redis版本``)."""
        lines = [i for i in range(a, b) if not self.blank(i)]
        if lines and all(chrome_line(self.lines[i].strip()) for i in lines):
            return True
        if len(lines) != 1 or not _BARE_ANSWER.fullmatch(self.lines[lines[0]].strip()):
            return False
        above = lines[0] - 1
        while above >= 0 and self.blank(above):
            above -= 1
        return above >= 0 and self.role[above] == PROSE and template_field(self.lines[above])

    def code_neighbour(self, i: int) -> bool:
        """A line next to a piece of code that may belong to it: not blank, and
        not read as an output, a prompt or an output not used."""
        return not self.blank(i) and self.role[i] not in (READ, PROMPT, UNUSED)

    def table_rows(self, a: int, b: int) -> bool:
        """Whether lines ``a..b`` are rows of a Markdown table whose rule row
        (``|---|---|``) is in the same run of rows, above or below them: the
        rows between that read as prose cut the table into pieces, each still
        the post's table (``| 内存 | 128GB DDR4 ECC | 3200MT/s |``)."""
        rows = [i for i in range(a, b) if not self.blank(i)]
        if not rows or not all(_pipe_row(self.lines[i]) for i in rows):
            return False
        return self.rule_in_rows(a - 1, -1) or self.rule_in_rows(b, 1)

    def rule_in_rows(self, i: int, step: int) -> bool:
        """Whether the run of table rows from line ``i`` on (``step`` a line up
        or down, at most :data:`TABLE_MAX_ROWS`) holds a Markdown rule row."""
        for _ in range(TABLE_MAX_ROWS):
            if not 0 <= i < len(self.lines) or not _pipe_row(self.lines[i]):
                return False
            if _MD_TABLE_RULE.fullmatch(self.lines[i].strip()):
                return True
            i += step
        return False

    def quoted_diff(self, a: int, b: int) -> bool:
        """Whether lines ``a..b`` are a change a review thread quotes: unified
        diff lines under its hunk header or its ``diff`` fence (:func:`diff_opened`),
        the post's text (what a change adds is no host's output)."""
        if not all(diff_line(self.lines[i]) for i in range(a, b)):
            return False
        return diff_opened(self.lines, b)

    def prose_run(self, a: int, b: int, *, host: str | None) -> None:
        kind = self.detect(self.head(a, b))
        if kind is None:
            self.mentions(a, b, host=host)
            return
        self.mark(a, b, READ)
        self.add_block(
            Block(
                command=None,
                text=self.text(a, b),
                start_line=a + 1,
                end_line=b,
                label=kind,
                kind=kind,
                host=host,
                prose=True,
            ),
            a,
            b,
        )

    def mentions(self, a: int, b: int, *, host: str | None) -> None:
        """Artifacts quoted inside a sentence ("... mariadb server version:
        10.4.14-MariaDB-log ..."): each Latin-script stretch of a line with a
        digit is tried from each of its first few words."""
        # One detection over every candidate (each suffix on its own line, so
        # anchored detectors see it at a line start) rules most paragraphs out.
        probes = _mention_probes(self.lines[a : min(b, a + MENTION_MAX_LINES)])
        if not probes or self.detect("\n".join(probes)) is None:
            return
        for i in range(a, b):
            hit = self.mention(self.lines[i])
            if hit is None:
                continue
            sub, kind = hit
            self.role[i] = READ
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

    def mention(self, line: str) -> tuple[str, str] | None:
        """``(text, kind)`` of the first artifact quoted inside ``line`` (one
        mention a line), or None."""
        for candidates in _mention_candidates(line):
            hit = next(((sub, kind) for sub in candidates if (kind := self.detect(sub))), None)
            if hit is not None:
                return hit
        return None


def _mention_probes(lines: list[str]) -> list[str]:
    """Every mention candidate of ``lines`` (:func:`_mention_candidates`), up to
    the line that brings them past 8000 characters."""
    probes: list[str] = []
    size = 0
    for line in lines:
        for candidates in _mention_candidates(line):
            probes.extend(candidates)
            size += sum(len(c) + 1 for c in candidates)
        if size > 8000:
            break
    return probes


# ------------------------------------------------------------- a how-to's notes

# a thematic break, or the underline of a heading above it ("logs" over "------------")
_MD_RULE_LINE = re.compile(r"(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,}|={3,}")
# what follows a command quoted in a how-to ("swapon --show   # 显示Swap信息"); what
# runs it ("sudo", "time") is _SUDO's
_TRAILING_COMMENT = re.compile(r"\s+(?:#(?:\s.*)?|//.*)$")
_ABSOLUTE_PATH = re.compile(r"/[\w.\-\[\]*/]{1,300}")
# what a how-to keeps before a command it quotes: a bare shell prompt ("bash$ ", "sh# "),
# the number ``history`` prints ("  179  tc qdisc del dev eth0 root"), the directory of a
# system command ("/sbin/tc qdisc ls")
_NOTE_COMMAND_LEAD = re.compile(
    r"^(?:(?:ba|z|k|da)?sh[$#][ \t]*|\d{1,6}[ \t]{2,})?(?:(?:/usr)?/s?bin/)?(?=[a-z])"
)


GUTTER_MIN_NUMBERS = 3
GUTTER_MAX_LINES = 1000
_GUTTER_RULES = frozenset({"|", "│", "¦"})


def _unread_line_numbers(result: object) -> set[int]:
    """The line numbers a parser's ``result`` (or list of results) reports as
    not read, leaving out the lines it reports as cut by the paste."""
    results = result if isinstance(result, list) else [result]
    return {
        e.line
        for r in results
        for e in getattr(r, "errors", ())
        if e.line and "not read" in e.message and "cut" not in e.message
    }


def listing_gutter(lines: list[str]) -> bool:
    """Whether ``lines`` are the line-number column of a web page's code listing,
    printed apart from the code (a highlighter's table lost its columns): the
    numbers 1, 2, 3 ... one a line, maybe closed by a ``|`` line of the rule
    between the columns.

    >>> listing_gutter(["1", "2", "3", "4", "|"]), listing_gutter(["1", "2", "2", "|"])
    (True, False)
    >>> listing_gutter(["17", "18"])
    False
    """
    cells = [line.strip() for line in lines if line.strip()]
    numbers = list(itertools.takewhile(str.isdigit, cells))
    rules = set(cells[len(numbers) :])
    return (
        len(numbers) >= GUTTER_MIN_NUMBERS
        and rules <= _GUTTER_RULES
        and numbers == [str(n) for n in range(1, len(numbers) + 1)]
    )


# a command keyword typed in capitals, as a client's commands are ("CONFIG SET ...",
# "SLOWLOG GET 10"); a sentence starts with one capital
_CAPITAL_KEYWORD = re.compile(r"[A-Z]{2,}[ \t]+[A-Z]{2,}\b")
# a line of a shell loop or test quoted in a how-to ("for CPU in /sys/.../cpu[0-9]*; do",
# "if [[ -d /proc/irq/$I ]]", "then", "done"): the shell's syntax, not a program's output
_SHELL_CONSTRUCT = re.compile(
    r"(?:for[ \t]+\w+[ \t]+in[ \t].{1,300}|(?:while|until)[ \t]+.{1,300}"
    r"|(?:el)?if[ \t]+(?:!\s*)?[\[(].{1,300}"
    r"|case[ \t]+\S+[ \t]+in)(?:;[ \t]*(?:do|then))?"
    r"|do|done(?:[ \t]*[<|>].{0,300})?|then|else|fi|esac|;;"
)


def quoted_command(line: str) -> bool:
    """A command quoted without a prompt in a how-to: a command Casebook knows
    by name (or whose output the catalogue of unused outputs names) after
    ``sudo``/``time``, a trailing comment allowed.

    >>> quoted_command("sudo sysctl -p             # 重新加载配置")
    True
    >>> quoted_command("time numactl -N 0 -m 0 ./a.out")
    True
    >>> quoted_command("Swap:          2.0Gi          0B       2.0Gi")
    False
    >>> quoted_command("  179  tc qdisc del dev eth0 root"), quoted_command("bash$ tc qdisc show dev eth0")
    (True, True)
    >>> quoted_command("sudo /sbin/tc qdisc ls dev eth0 //查看队列规则")
    True
    >>> quoted_command("CONFIG SET slowlog-max-len 500"), quoted_command("Config Set the limit")
    (True, False)
    >>> quoted_command("for CPU in /sys/devices/system/cpu/cpu[0-9]*; do"), quoted_command("done")
    (True, True)
    """
    s = _note_command(line)
    if _bare_command(s) or _SHELL_CONSTRUCT.fullmatch(s):
        return True
    return (
        bool(s)
        and (s[0].islower() or _CAPITAL_KEYWORD.match(s) is not None)
        and not _CJK.search(s)
        and unused_command(s) is not None
    )


def _note_command(line: str) -> str:
    """The command a how-to's ``line`` may quote: without its trailing comment,
    what it keeps before the command (:data:`_NOTE_COMMAND_LEAD`) and what runs
    it (``sudo``, ``time``)."""
    s = _TRAILING_COMMENT.sub("", line.strip())
    s = _NOTE_COMMAND_LEAD.sub("", s, count=1)
    while (unwrapped := _SUDO.sub("", s, count=1)) != s:
        s = _NOTE_COMMAND_LEAD.sub("", unwrapped, count=1)
    return s


def _names_a_command(value: str) -> bool:
    """Whether the value of a CJK label names a command or a path (a note,
    "查看node物理内存信息：cat /sys/devices/system/node/[nodeid]/meminfo",
    "cpu信息目录：/sys/devices/system/cpu/"), not a reading."""
    value = value.strip()
    return quoted_command(value) or _ABSOLUTE_PATH.fullmatch(value) is not None


def note_kind(line: str, cls: str) -> str | None:
    """What a line of a how-to's notes is: ``"command"`` (quoted without a
    prompt, or named after a CJK label), ``"comment"``, ``"prose"``,
    ``"label"`` (a CJK label and a value: a figure of a note, or the output
    of a tool in a CJK locale), ``"rule"`` (a Markdown thematic break),
    ``"blank"``; None for anything else."""
    s = line.strip()
    if not s:
        return "blank"
    kind = next((kind for test, kind in _NOTE_LINE_KINDS if test(s)), None)
    return kind or _labelled_note_kind(s, cls)


def _labelled_note_kind(s: str, cls: str) -> str | None:
    """What the stripped line ``s`` of a how-to's notes (of class ``cls``) is
    when its form alone does not say (:data:`_NOTE_LINE_KINDS`): a command
    named after a CJK label, prose, a CJK label and its value, or None."""
    kv = _KEY_VALUE_CJK.match(s) if _CJK.search(s) else None
    if kv is not None and _names_a_command(re.split(r"[:：]", s, maxsplit=1)[1]):
        return "command"
    if cls == "prose":
        return "prose"
    return "label" if kv is not None else None


def _step_in_words(s: str) -> bool:
    """Whether the stripped line ``s`` is a numbered step in words, maybe with
    its space lost (``2.change the delay to 300ms``)."""
    step = _STEP.match(s)
    return step is not None and _list_item_prose(f"{s[: step.end()].rstrip()} {s[step.end() :]}")


def _code_comment(s: str) -> bool:
    """Whether the stripped line ``s`` is a shell or C comment (or a Markdown heading)."""
    return s.startswith(("#", "//"))


# what a line of a how-to's notes is by its form alone, tried in order
_NOTE_LINE_KINDS: tuple[tuple[Callable[[str], object], str], ...] = (
    (_MD_RULE_LINE.fullmatch, "rule"),  # a thematic break
    (quoted_command, "command"),
    (_code_comment, "comment"),
    (_step_in_words, "prose"),
)


CONTINUATION_MAX_LINES = 12  # lines of one quoted command (a quoted filter, "\\" line ends)


def continued_commands(lines: list[str], kinds: list[str | None]) -> list[str | None]:
    """``kinds`` (:func:`note_kind`) with the lines that continue a quoted
    command made commands too: after a line ending in ``\\``, or after one that
    opens a double-quoted argument, up to the line that closes it.

    >>> continued_commands(['tc filter add dev eth0 basic match "cmp(u16 at 2 layer transport eq 3306)',
    ...     '        and cmp(u8 at 16 layer network eq 10)" flowid 1:4'], ["command", None])
    ['command', 'command']
    """
    kinds = list(kinds)
    i = 0
    while i < len(kinds):
        i = _continue_command(lines, kinds, i) if kinds[i] == "command" else i + 1
    return kinds


def _continue_command(lines: list[str], kinds: list[str | None], i: int) -> int:
    """Make the lines that continue the command quoted on line ``i`` commands
    in ``kinds`` (at most :data:`CONTINUATION_MAX_LINES` lines in all); the
    index after the command."""
    text, j = lines[i].rstrip(), i + 1
    while (text.endswith("\\") or text.count('"') % 2) and j < min(len(kinds), i + CONTINUATION_MAX_LINES):
        if kinds[j] not in (None, "prose"):
            break
        kinds[j] = "command"
        text = text.rstrip("\\") + " " + lines[j].strip()
        j += 1
    return j


def command_notes(kinds: list[str | None]) -> bool:
    """Whether lines of these kinds (:func:`note_kind`) are a how-to's notes
    rather than an output nothing read: commands quoted without their output,
    with comments and sentences between them, and fewer CJK "label：value"
    lines than commands and sentences (an output of a tool in a CJK locale is
    labels alone).

    >>> command_notes(["command", "comment", "command", "blank"])
    True
    >>> command_notes(["label", "label", "command"]), command_notes(["prose", None, "command"])
    (False, False)
    >>> command_notes(["blank", "rule", "blank"])
    True
    """
    if None in kinds:
        return False
    if "command" not in kinds:
        return "rule" in kinds and set(kinds) <= {"rule", "blank"}  # a Markdown thematic break
    return kinds.count("label") < kinds.count("command") + kinds.count("prose")


# a Markdown table's row: cells between pipes, the first or the last pipe kept (a
# page that flattened its table keeps "k | KB |"), maybe inside a quote ("> | 5 | 0.90 |")
_MD_TABLE_ROW = re.compile(r"(?:>[ \t]*)?(?:\|[^|\n]*(?:\|[^|\n]*)*|[^|\n]+(?:\|[^|\n]*)*\|)")
_MD_TABLE_RULE = re.compile(r"(?:>[ \t]*)?\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*\|?")


TABLE_MAX_ROWS = 200


def _pipe_row(line: str) -> bool:
    """A row of a Markdown table between its pipes (``| CPU | Intel Xeon Silver 4314 |``)
    or its rule row; never an SQL grid's border (``+----+``)."""
    s = line.strip()
    return len(s) >= 3 and s[0] == "|" and s[-1] == "|" and s.count("|") >= 3


def markdown_markup(lines: list[str]) -> bool:
    """Whether unrecognised ``lines`` (non-blank, outside a fence) are a post's
    Markdown: a table (its rule row ``|---|`` present, or every row ending in a
    pipe as a page flattened it: ``pswpin | |``), or a line alone that rules the
    page or underlines a heading. An SQL client's grid is never one (its rows
    start with a pipe and its rules with ``+``).

    >>> markdown_markup(["| |", "|---|", "pswpin | |", "pswpout | |"])
    True
    >>> markdown_markup(["| id | name |", "| 1  | db1  |"]), markdown_markup(["------------"])
    (False, True)

    Left alone, a table's rule row without its outer pipes (its rows read as
    the post's text) and the pipes of a table a page flattened (a lone ``|``):

    >>> markdown_markup(["----|:---- |-----|----"]), markdown_markup(["|", "|"])
    (True, True)
    """
    if len(lines) == 1 and _lone_markup(lines[0].strip()):
        return True
    if all(_PIPES_ONLY.fullmatch(line.strip()) for line in lines):
        return True
    return _markdown_table([line.strip() for line in lines])


# what is left of a table's cells when a page flattened it: pipes alone ("|", "| |")
_PIPES_ONLY = re.compile(r"\|(?:[ \t]{0,8}\|){0,16}")


def _lone_markup(s: str) -> bool:
    """A line alone that rules the page or underlines a heading, or a table's
    rule row (``----|:----|----``, its cells' rows elsewhere)."""
    return bool(_MD_RULE_LINE.fullmatch(s) or ("|" in s and _MD_TABLE_RULE.fullmatch(s)))


def _markdown_table(rows: list[str]) -> bool:
    """Whether the stripped ``rows`` are a Markdown table: rows of cells
    (:func:`_table_rows`), or a manual's parameter table, a cell of each row a
    sentence."""
    if not rows or not all(_MD_TABLE_ROW.fullmatch(row) for row in rows):
        return False
    return _table_rows(rows) or all(_row_with_sentence(row) for row in rows)


def _row_with_sentence(row: str) -> bool:
    """A table row of a manual's parameter table, a cell of it a sentence
    (``| Count | Specifies the number of echo requests to be sent ... |``): a
    cell of six words or more that reads as prose with short English words;
    an SQL grid's cells hold names and values.

    >>> _row_with_sentence("| Count | Specifies the number of echo requests to be sent. |")
    True
    >>> _row_with_sentence("| innodb_buffer_pool_size | 134217728 |")
    False
    """
    if not (row.startswith("|") and row.endswith("|")):
        return False
    return any(_reads_as_sentence(cell.strip(), 6) for cell in row.strip("|").split("|"))


def _table_rows(rows: list[str]) -> bool:
    """Rows of cells are a Markdown table: a rule row, or every row ending in a pipe
    and none starting with one (a flattened table, never an SQL grid's row)."""
    if any(_MD_TABLE_RULE.fullmatch(row) for row in rows):
        return True
    return all(row.endswith("|") and not row.startswith(("|", ">")) for row in rows)


# a unified diff's hunk header ("@@ -229,6 +229,143 @@ sudo systemctl start ntpd.service && \"),
# and what opens a diff: a fence that says so ("````diff"), git's header, a file's header
_DIFF_HUNK = re.compile(r"@@ -\d{1,9}(?:,\d{1,9})? \+\d{1,9}(?:,\d{1,9})? @@(?:[ \t][^\n]{0,300})?[ \t]*")
_DIFF_START = re.compile(
    r"[ \t]{0,3}(?:`{3,}|~{3,})[ \t]*(?i:diff|patch|udiff)\b[^\n]{0,100}"
    r"|diff --git [^\n]{1,600}|(?:---|\+\+\+) [ab]/[^\n]{1,600}"
)
DIFF_MAX_LINES = 400
CODE_WINDOW_LINES = 30  # lines looked at around a piece of code for the rest of it


def diff_line(line: str) -> bool:
    """A line of a unified diff's hunk: its header, or a line the change keeps
    (a space), adds (``+``) or removes (``-``), or a blank one.

    >>> diff_line("@@ -41,6 +43,8 @@"), diff_line("+    :rtype : dictionary"), diff_line("Power8:")
    (True, True, False)
    """
    return not line.strip() or line[0] in " +-\\" or _DIFF_HUNK.fullmatch(line) is not None


def diff_opened(lines: list[str], end: int) -> bool:
    """Whether the diff lines just above index ``end`` of ``lines`` (at most
    :data:`DIFF_MAX_LINES`) are a unified diff's: a hunk header or what opens a
    diff is among them or right above them.

    >>> diff_opened(["```diff", "+exec numactl --cpunodebind=0 --membind=0 bin/tidb-server"], 2)
    True
    >>> diff_opened(["Output:", "   node 0 cpus: 0 1"], 2)
    False
    """
    for k in range(end - 1, max(-1, end - 1 - DIFF_MAX_LINES), -1):
        line = lines[k]
        if _DIFF_START.fullmatch(line) or _DIFF_HUNK.fullmatch(line):
            return True
        if not diff_line(line):
            return False
    return False


CODE_SPAN_MAX_LINES = 3


def code_span_end(lines: list[str], above: str) -> bool:
    """Whether ``lines`` (non-blank) end the inline code a sentence opened on the
    line ``above`` (a backtick, then ``nping.exe -V``; ``nping v0.2.1`` and a backtick): the line
    above holds an odd number of backticks, these lines close the span on their
    last character and open no other.

    >>> code_span_end(["nping v0.2.1`"], "`nping.exe -V")
    True
    >>> code_span_end(["nping v0.2.1`"], "nping.exe -V")
    False
    """
    if not lines or len(lines) > CODE_SPAN_MAX_LINES or not lines[-1].rstrip().endswith("`"):
        return False
    return above.count("`") % 2 == 1 and sum(line.count("`") for line in lines) == 1


# a message's or a patch's header: git format-patch's first line, and the fields of a
# mail's header (English, or Chinese as Outlook writes them)
_PATCH_FROM = re.compile(r"From [0-9a-f]{40} Mon Sep 17 00:00:00 2001")
_MAIL_FIELD = re.compile(
    r"(?:From|To|Cc|Date|Subject|Sent|Reply-To|Message-I[Dd]|In-Reply-To"
    r"|发件人|收件人|抄送|主题|日期|发送时间)[:：][ \t]*\S.{0,300}"
)


def message_header(lines: list[str]) -> bool:
    """Whether unrecognised ``lines`` (non-blank) are the header of a mail or a
    patch a post quotes: its fields only, a sender or a subject among them.

    >>> message_header(["From fe35004fbf9eaf67482b074a2e032abb9c89b1dd Mon Sep 17 00:00:00 2001",
    ...     "From: Satoru Moriya", "Date: Tue, 29 May 2012 15:06:47 -0700",
    ...     "Subject: [PATCH] mm: avoid swapping out with swappiness==0"])
    True
    >>> message_header(["Date: Tue, 29 May 2012 15:06:47 GMT", "Server: nginx"])
    False
    """
    rows = [line.strip() for line in lines]
    if len(rows) < 2 or not all(_header_field(r) for r in rows):
        return False
    return any(r.startswith(("From", "Subject", "发件人", "主题")) for r in rows)


def _header_field(row: str) -> bool:
    """Whether the stripped ``row`` is a field of a mail's header or a patch's first line."""
    return _MAIL_FIELD.fullmatch(row) is not None or _PATCH_FROM.fullmatch(row) is not None


# source code and configuration a post quotes (code_fragment): C or awk, a block opened
# by "{" and closed by "}", with a statement (a keyword, or an assignment)
_C_LIKE = (
    re.compile(r"^\s*\{|\{\s*$"),
    re.compile(r"\}\s*;?\s*$"),
    re.compile(
        r"\b(?:if|else|for|while|return|static|int|void|char|unsigned|struct|function"
        r"|const|let|var|await|async|require)\b"
        r"|^\s*[A-Za-z_][\w.\[\]]*\s*[-+*/]?=\s*[^=\s]"
        # a directive ended by a semicolon (nginx's "listen 80 backlog=4096;", a C call)
        r"|^\s*[a-z_][\w.-]{0,60}[ \t(][^;{}\n]{0,300};\s*$"
    ),
)


def _c_like(rows: list[str]) -> bool:
    """C or awk: each of :data:`_C_LIKE` holds on one of the rows."""
    return all(any(rx.search(r) for r in rows) for rx in _C_LIKE)


_DOCKERFILE = re.compile(
    r"(?:FROM|RUN|CMD|ENTRYPOINT|COPY|ADD|ENV|EXPOSE|WORKDIR|USER|ARG|LABEL|VOLUME|HEALTHCHECK|SHELL)\s+\S"
)


def _dockerfile(rows: list[str]) -> bool:
    """A Dockerfile: its instructions (and their ``\\`` continuations)."""
    instructions = 0
    for prev, row in itertools.pairwise(["", *rows]):
        if _DOCKERFILE.match(row):
            instructions += 1
        elif not prev.rstrip().endswith("\\"):
            return False
    return instructions >= 2 or rows[0].startswith("FROM ")


_YAML_KEY = re.compile(r"[ \t]*(?:- )?[\w.\-\"']{1,64}:(?:[ \t].*)?")
_YAML_ITEM = re.compile(r"[ \t]*- \S.*")


def _yaml(rows: list[str], above: str) -> bool:
    """A YAML map (a key alone, then its more indented keys and items, or its
    items at its own indent: a TiUP topology's ``tidb_servers:`` over
    ``- host: ...``), or items under the key on the line above (a compose
    file's ``sysctls:``)."""
    if not all(_yaml_row(r) for r in rows):
        return False
    if _yaml_key_alone(above):
        return all(_YAML_ITEM.fullmatch(r) for r in rows)
    return any(r.rstrip().endswith(":") and _yaml_block_under(r, nxt) for r, nxt in itertools.pairwise(rows))


def _yaml_row(row: str) -> bool:
    """Whether ``row`` is a YAML key (its value after it or its block under it) or a sequence's item."""
    return _YAML_KEY.fullmatch(row) is not None or _YAML_ITEM.fullmatch(row) is not None


def _yaml_key_alone(line: str) -> bool:
    """Whether ``line`` is a YAML key alone, over its block (``sysctls:``)."""
    line = line.rstrip()
    return line.endswith(":") and _YAML_KEY.fullmatch(line) is not None


def _yaml_block_under(key: str, row: str) -> bool:
    """Whether ``row`` opens the block of the YAML ``key:`` line above it: more
    indented, or a sequence item at the key's own indent (``- host: ...``)."""
    indent, under = len(key) - len(key.lstrip()), len(row) - len(row.lstrip())
    return under > indent or (under == indent and row.lstrip().startswith("- "))


# Python: an import or an interpreter's prompt opens it; statements of its own (or the
# traceback the interpreter printed) follow
_PYTHON_START = re.compile(r"[ \t]*(?:import[ \t]+[\w.]|from[ \t]+[\w.]+[ \t]+import[ \t]|>>>[ \t])")
_PYTHON_LINE = re.compile(
    r"[ \t]*(?:import[ \t]+[\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+)*[ \t]*$"
    r"|from[ \t]+[\w.]+[ \t]+import[ \t]|>>>[ \t]|def[ \t]+\w+[ \t]*\(|class[ \t]+\w+[ \t]*[(:]"
    r"|(?:for|while|with|if|elif|try|except)\b[^\n]{0,300}:[ \t]*$"
    r"|Traceback \(most recent call last\):|File \"[^\"\n]{1,300}\", line \d)"
)


def _python(rows: list[str]) -> bool:
    """Python: a module's imports or an interpreter session (``>>> from x import y``,
    a traceback), two of its statements at least."""
    return _PYTHON_START.match(rows[0]) is not None and sum(1 for r in rows if _PYTHON_LINE.match(r)) >= 2


# a configuration file of directives, one a line: a lower-case keyword and its arguments
# (redis.conf's "maxmemory 512mb", grub.conf's "root (hd0,0)"), no column gap, no colon
_DIRECTIVE = re.compile(
    r"[ \t]*[a-z][a-z0-9]{0,40}(?:[-_][a-z0-9]{1,40}){0,6}[ \t]+(?P<value>[^\s:=#-][^\t:]{0,600})"
)
# an argument only a configuration holds: a switch, a size with its unit, an address, a
# path, a quoted string, a parenthesis (grub's "(hd0,0)")
_SETTING_VALUE = re.compile(
    r"(?i:yes|no|on|off|true|false)[ \t]*$|\d{1,6}(?:\.\d{1,3})?(?i:[kmgt]i?b?)[ \t]*$"
    r"|\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b|[/\"'(]"
)
# a shell variable an /etc/default or /etc/sysconfig file sets ("GRUB_CMDLINE_LINUX=\"...\"",
# "CONFIG_HUGETLBFS=y"), maybe under a label in parentheses ("(변경 후) GRUB_CMDLINE_LINUX=...")
_SHELL_SETTING = re.compile(
    r"[ \t]*(?:\([^()\n]{1,20}\)[ \t]*)?(?:export[ \t]+)?[A-Z][A-Z0-9_]{2,63}="
    r"(?:\"[^\"\n]{0,2000}\"|'[^'\n]{0,2000}'|[^\s\"']{0,600})[ \t]*"
)
# the units a configuration file's comments list ("1k => 1000 bytes", "1gb => 1024*1024*1024 bytes")
_UNIT_LEGEND = re.compile(
    r"[ \t]*\d{1,4}[ \t]?[kKmMgGtT][iI]?[bB]?[ \t]*(?:=>|->|=)[ \t]*[\d*x ,.]{1,40}[ \t]*bytes[ \t]*"
)


def _directives(rows: list[str], commented: bool) -> bool:
    """A configuration file of directives: each row a keyword and its arguments, and
    either comments among them (``timeout 0`` under ``# Close the connection after
    ...``) or two rows at least with a value only configuration holds (a path, a
    size, a switch); never rows of figures only (``/proc/vmstat``'s ``pswpin 0``)
    nor a mounted file system (``proc on /proc type proc (rw)``)."""
    matches = [_DIRECTIVE.fullmatch(r) for r in rows]
    if not rows or not all(matches) or any(_GAP.search(r.strip()) or " on /" in r for r in rows):
        return False
    if any(quoted_command(r) for r in rows):
        return False  # a how-to's commands (its notes), not a file's directives
    if commented:
        return True
    return len(rows) >= 2 and sum(1 for m in matches if m and _SETTING_VALUE.match(m["value"])) * 2 >= len(
        rows
    )


def _settings(rows: list[str]) -> bool:
    """Shell variables of a configuration file, or the units its comments list."""
    return all(_SHELL_SETTING.fullmatch(r) for r in rows) or all(_UNIT_LEGEND.fullmatch(r) for r in rows)


_ELISION = re.compile(r"\.{3,}|…+")
# an expression assigned to a name: an operator between two terms ("mem_free = a / b")
_EXPRESSION = re.compile(r"[A-Za-z_]\w*\s*=\s*[^=].*[\w)]\s+[-+*/]\s+[\w(]")


def _post_markup(lines: list[str], above: str) -> bool:
    """Whether unrecognised ``lines`` (non-blank, outside a fence; ``above`` the
    line before them) are a post's own text: its Markdown, a message's header,
    or the end of a code span opened above."""
    return markdown_markup(lines) or message_header(lines) or code_span_end(lines, above)


def code_fragment(lines: list[str], above: str = "") -> bool:
    """Whether unrecognised ``lines`` (non-blank; ``above`` is the line before
    them) are source code or configuration a post quotes rather than what a host
    printed: C or awk, a Dockerfile, a YAML map, expressions assigned to names,
    or only the comments of one (``##16gb to database``: no tool prints a run of
    comment lines alone). Elisions (``....``) and comments may stand between
    their lines; a JSON document (no statement) or a ``key = value`` dump (no
    operator) is none.

    >>> code_fragment(["   if (HugepagesTotal > 0) {",
    ...     "    HP_Used         = (HugepagesTotal - HugepagesFree) * Hugepagesize", "  }"])
    True
    >>> code_fragment(["- net.core.somaxconn=511"], above="      sysctls:")
    True
    >>> code_fragment(["{", '  "numa_hit": 1386436009', "}"]), code_fragment(["vm.swappiness = 60"])
    (False, False)
    >>> code_fragment(["##20gb physical memory", "##16gb to database", "##4 gb to OS"])
    True

    JavaScript, an nginx block, a Python module or interpreter session:

    >>> code_fragment(["const { exit } = require('process');", "(", "  async () => {", "}", ")();"])
    True
    >>> code_fragment(["server {", "    listen 80 backlog=4096;", "}"])
    True
    >>> code_fragment(["import random", "import redis", "r = redis.StrictRedis()"])
    True
    >>> code_fragment([">>> from virttest.libvirt_xml import capability_xml", ">>> cells[0].pages"])
    True
    """
    rows = _statement_rows(lines)
    if not rows:
        return any(_is_comment(r) for r in lines)
    if all(_EXPRESSION.match(r.strip()) for r in rows):
        return True
    return _c_like(rows) or _python(rows) or _dockerfile(rows) or _yaml(rows, above)


def configuration_fragment(lines: list[str]) -> bool:
    """Whether unrecognised ``lines`` (non-blank) that no command printed are a
    configuration file a post quotes: a file of directives (redis.conf,
    grub.conf), shell variables, the units listed in a configuration's comments;
    never rows of figures only, nor a how-to's commands. (A file a prompt's
    ``cat`` printed stays that command's output.)

    >>> configuration_fragment(["bind 0.0.0.0", "port 6379", "maxmemory 512mb", 'dir "/home/dy1/data"'])
    True
    >>> configuration_fragment(["root (hd0,0)", "kernel /vmlinuz-2.6.18 ro root=/dev/VolGroup00/LogVol00"])
    True
    >>> configuration_fragment(['GRUB_CMDLINE_LINUX="isolcpus=2-4"'])
    True
    >>> configuration_fragment(["1k => 1000 bytes", "1kb => 1024 bytes"])
    True
    >>> configuration_fragment(["pswpin 0", "pswpout 1"]), configuration_fragment(["proc on /proc type proc"])
    (False, False)
    >>> configuration_fragment(["timeout 0", "#一个客户端空闲多少秒后关闭连接。(0代表禁用,永不关闭)"])
    True
    >>> configuration_fragment(["# Disk I/O pressure metrics", "iostat -xmt 1"])
    False
    """
    rows = [r for r in lines if not _ELISION.fullmatch(r.strip()) and not _is_comment(r)]
    return _directives(rows, len(rows) < len(lines)) or _settings(rows)


def _statement_rows(lines: list[str]) -> list[str]:
    """The ``lines`` that are neither elisions (``....``) nor comments."""
    return [r for r in lines if not _ELISION.fullmatch(r.strip()) and not _is_comment(r)]


def _mention_candidates(line: str) -> list[list[str]]:
    """Per Latin-script stretch of ``line`` with a digit, the stretch from each
    of its first few words (what :meth:`_Splitter.mentions` tries)."""
    if len(line) > 4096 or not _DIGIT.search(line):
        return []
    return [
        _from_each_word(segment)
        for segment in _CJK_SPLIT.split(line)
        if len(segment) >= 8 and _DIGIT.search(segment)
    ]


def _from_each_word(segment: str) -> list[str]:
    """``segment`` from each of its first :data:`MENTION_MAX_WORDS` words on."""
    words = segment.split()
    return [" ".join(words[k:]) for k in range(min(MENTION_MAX_WORDS, len(words)))]


def _recognise(lines: list[str]) -> str | None:
    """The kind of artifact ``lines`` start, or ``"prompt"`` when they hold a
    prompt (what :func:`collectors.normalise.strip_log_prefixes` asks)."""
    if any(match_prompt(line) for line in lines):
        return "prompt"
    return detect_kind("\n".join(line[:DETECT_HEAD_CHARS] for line in lines)[:8192])


def _parses_as(kind: str, lines: list[str]) -> bool:
    """Whether ``lines`` parse as ``kind`` (a prompt is never a parse)."""
    spec = parsers.REGISTRY.get(kind)
    if spec is None:
        return False
    try:
        with parse_time_budget(parse_budget()[0]):
            parsers.parse(spec, "\n".join(lines))
    except ParseTimeout:
        return False
    except Exception as exc:  # ParseError, or a parser bug: not a parse either way
        if type(exc).__name__ == "SoftTimeLimitExceeded":
            raise
        return False
    return True


def _remap(block: Block, norm: Normalised) -> None:
    """Normalised line numbers of ``block`` -> lines of the original text."""
    a = block.start_line - 1
    count = block.text.count("\n") + 1
    first, last = norm.first, norm.last
    n = len(first)
    if a >= n:
        return
    end = max(min(block.end_line, n), a + 1)
    block.start_line = first[a] + 1
    block.end_line = max(last[end - 1] + 1, block.start_line)
    span = first[a : a + count]
    if span and span[-1] - span[0] != len(span) - 1:
        block.origins = [k + 1 for k in span]


def _run_length(first: list[int], last: list[int], k: int) -> int:
    """How many lines from ``k`` are consecutive original lines, none joined
    (0 when line ``k`` is a join). Slices are compared, growing then halving,
    so the run is measured at C speed."""
    a = first[k]
    if last[k] != a:
        return 0
    n = len(first) - k

    def kept(lo: int, hi: int) -> bool:  # are lines k+lo .. k+hi-1 in the run?
        part = first[k + lo : k + hi]
        return part == list(range(a + lo, a + hi)) and last[k + lo : k + hi] == part

    good, step = 1, 1
    while good < n:
        bad = min(n, good + step)
        if kept(good, bad):
            good, step = bad, step * 2
            continue
        while bad - good > 1:  # a line of good..bad is not in the run
            mid = (good + bad) // 2
            if kept(good, mid):
                good = mid
            else:
                bad = mid
        break
    return good


def _fold(role: bytearray, first: list[int], last: list[int], count: int) -> bytearray:
    """Roles of normalised lines -> roles of the original lines (the highest
    role wins where several pieces share a line). Normalised lines that are
    consecutive original lines are copied as one slice; only the lines at
    the edges of such runs (which pieces may share) and joined lines are
    compared one by one."""
    roles = bytearray(count)
    k, n = 0, len(first)
    while k < n:
        size = _run_length(first, last, k)
        if size:
            a = first[k]
            edge = roles[a]
            roles[a : a + size] = role[k : k + size]
            roles[a] = max(edge, role[k])
            k += size
            continue
        _raise_roles(roles, range(first[k], last[k] + 1), role[k])
        k += 1
    return roles


def _raise_roles(roles: bytearray, lines: range, role: int) -> None:
    """Give the original ``lines`` (those of one joined line) ``role`` where it
    is higher than theirs."""
    for o in lines:
        if role > roles[o]:
            roles[o] = role


def _unrecognised_runs(
    roles: bytearray, first: list[int], lines: list[str]
) -> Iterator[tuple[int, int, str]]:
    """Each run of unrecognised original lines: ``(first line, last line, the
    normalised line it starts at, cut to 200 characters)``, numbered from 1."""
    i, n = 0, len(roles)
    while (i := roles.find(UNRECOGNISED, i)) >= 0:
        j = i
        while j < n and roles[j] == UNRECOGNISED:
            j += 1
        k = bisect.bisect_left(first, i)
        line = lines[k] if k < len(lines) else ""
        yield i + 1, j, line.strip()[:200]
        i = j


def _unprefix_log_lines(norm: Normalised) -> None:
    """Remove, in place, the prefix a logger put before the normalised lines of
    a run (:func:`collectors.normalise.strip_log_prefixes`), noting how many
    lines lost one."""
    unprefixed = strip_log_prefixes(norm.lines, norm.joined, _recognise, _parses_as) if norm.lines else 0
    if unprefixed:
        norm.joined = None
        norm.notes.append(f"{unprefixed} {LOG_PREFIXES}")


def _original_roles(role: bytearray, norm: Normalised) -> bytearray:
    """The roles of the original lines from ``role``, those of the normalised
    lines (the same when normalising kept every line as it was)."""
    return role if norm.identity else _fold(role, norm.first, norm.last, norm.original_lines)


def _split_notes(norm: Normalised, *, truncated: bool) -> list[str]:
    """The notes of normalising the text, and whether the split stopped early."""
    notes = list(norm.notes)
    if truncated:
        notes.append(f"more than {MAX_SPLIT_BLOCKS} blocks: the rest was not split")
    return notes


def read_transcript(text: str, *, detect_lines: int = 5_000, detect_budget: int = 2_000) -> Split:
    """Normalise ``text`` (:mod:`collectors.normalise`), split it, and account
    for every original line (see :class:`Split`).

    ``detect_lines`` bounds the per-line content detection on long runs of
    output without prompts (beyond it a run is recognised from its head only);
    ``detect_budget`` bounds the number of mid-run detections in the whole text.
    """
    ensure_parsers()
    norm = normalise(text)
    _unprefix_log_lines(norm)
    splitter = _Splitter(norm.lines, detect_lines, detect_budget, norm.joined)
    blocks = splitter.run()
    for block in blocks:
        _remap(block, norm)
    first, last = norm.first, norm.last
    roles = _original_roles(splitter.role, norm)
    unrecognised = list(_unrecognised_runs(roles, first, norm.lines))
    unused = [(first[a] + 1, last[b - 1] + 1, what) for a, b, what in splitter.unused if b > a]
    segments = [(first[k] if k < len(first) else 0, host) for k, host in splitter.segments]
    return Split(
        blocks=blocks,
        roles=roles,
        unrecognised=unrecognised,
        segments=segments,
        notes=_split_notes(norm, truncated=splitter.truncated),
        unused=unused,
        parsed=splitter.parsed,
    )


def split_transcript(text: str, *, detect_lines: int = 5_000, detect_budget: int = 2_000) -> list[Block]:
    """Blocks of a transcript in order (see the module docstring and
    :func:`read_transcript`, which also accounts for every line)."""
    return read_transcript(text, detect_lines=detect_lines, detect_budget=detect_budget).blocks


def prompt_hosts(blocks: list[Block]) -> list[str]:
    """Hostnames named by prompts, first seen first."""
    seen: list[str] = []
    for block in blocks:
        if block.host and block.host not in seen:
            seen.append(block.host)
    return seen


__all__ = [
    "PROMPT",
    "PROSE",
    "READ",
    "UNRECOGNISED",
    "UNUSED",
    "Block",
    "Split",
    "detect_kind",
    "host_key",
    "kind_for_command",
    "kind_for_path",
    "line_class",
    "match_prompt",
    "prompt_hosts",
    "read_transcript",
    "same_host",
    "split_transcript",
]
