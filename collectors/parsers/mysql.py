"""MySQL / MariaDB / Percona Server: variables, status, server version and error logs.

``SHOW GLOBAL VARIABLES`` is read in every form engineers paste:

* the client's table (also ``mysqladmin variables``)::

    +-------------------------+-----------+
    | Variable_name           | Value     |
    +-------------------------+-----------+
    | innodb_buffer_pool_size | 134217728 |
    +-------------------------+-----------+

* tab-separated (``mysql -B``, ``-N``, or the client writing to a pipe)::

    Variable_name	Value
    innodb_buffer_pool_size	134217728

* vertical (``\\G``)::

    *************************** 1. row ***************************
    Variable_name: innodb_buffer_pool_size
            Value: 134217728

``SHOW GLOBAL STATUS`` prints the same ``Variable_name | Value`` table (and the
same tab-separated rows, often without the header once copied from a result
grid)::

    Innodb_buffer_pool_pages_total	2621440
    Innodb_page_size	16384

Its counters are printed capitalised and go to ``DatabaseFacts.status``, never to
``variables``: a status dump is no list of the server's variables.

The version parser reads ``Server version: 10.4.14-MariaDB-log MariaDB Server``,
``mysqld  Ver 5.7.22-22 for Linux on x86_64 (Percona Server (GPL), Release 22)``,
``SELECT VERSION()`` output and the error log's ``Version: '5.7.16' ...`` line.

Error logs: ``2019-01-01T00:00:00.000000Z 0 [Note] InnoDB: ...`` (MySQL 5.7/8.0),
``2022-07-26 11:38:32 0 [Note] InnoDB: ...`` (MariaDB), ``190101 12:00:00 [Note] ...``
(5.5 and older) and syslog/journal lines of a mysqld program::

    Jul 7 12:00:44 mysqld-3301[95109]: InnoDB: Initializing buffer pool, total size = 432G, ...
    Jul 7 12:00:44 mysqld-3301[95109]: InnoDB: Setting NUMA memory policy to MPOL_INTERLEAVE
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from collectors.facts import ArtifactError, DatabaseFacts, DbEvent, ParseError
from collectors.parsers import register
from collectors.sizes import size_bytes

# ------------------------------------------------------------------ result tables


@dataclass
class ResultTable:
    """One client result set: lower-cased column names, rows of cell strings and the
    1-based line of each row within the parsed text."""

    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    row_lines: list[int] = field(default_factory=list)
    header_line: int = 0
    # rows cut mid-paste (the last row, short of the header's cells and of its
    # closing "|"): (1-based line, text); kept out of ``rows``
    cut_rows: list[tuple[int, str]] = field(default_factory=list)


_BORDER = re.compile(r"^\s*\+-[-+]*\s*$")
# mycli (and other clients' "psql-like" tables) rule the header off with "|----+----|"
_INNER_BORDER = re.compile(r"^\s*\|-[-+|]*\s*$")
_VERTICAL_SEP = re.compile(r"^\*{5,}\s*(\d+)\.\s*row\s*\*{5,}\s*$")
# the name starts with a non-space so "\s*" and the name never compete for spaces
_VERTICAL_FIELD = re.compile(r"^\s*([^:\s][^:]*?):\s?(.*)$")


def _split_bordered(line: str) -> list[str]:
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") else body
    return [cell.strip() for cell in body.split("|")]


def parse_result_tables(text: str) -> list[ResultTable]:
    """Every ``+---+`` bordered or ``\\G`` vertical result set in ``text``.

    A bordered table starts at a border line followed by a ``| col | col |`` header;
    rows whose cell count differs from the header (a value that itself contains
    ``|``) keep the header's first columns and join the rest into the last one.
    """
    tables: list[ResultTable] = []
    if "*****" not in text and ("+-" not in text or "|" not in text):
        return tables  # neither a border nor a vertical record separator
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if _starts_bordered_table(lines, i):
            table, i = _bordered_table(lines, i)
            tables.append(table)
        elif _VERTICAL_SEP.match(line.strip()):
            table, i = _vertical_table(lines, i)
            tables.append(table)
        else:
            i += 1
    return tables


def _starts_bordered_table(lines: list[str], i: int) -> bool:
    """Whether line ``i`` is a border with a ``| col | col |`` line under it."""
    return bool(_BORDER.match(lines[i])) and i + 1 < len(lines) and lines[i + 1].lstrip().startswith("|")


def _bordered_table(lines: list[str], i: int) -> tuple[ResultTable, int]:
    """The bordered table whose top border is line ``i``, and the index after it."""
    columns = [c.lower() for c in _split_bordered(lines[i + 1])]
    table = ResultTable(columns=columns, header_line=i + 2)
    i += 2
    while i < len(lines):
        row = lines[i]
        if _BORDER.match(row):
            i += 1
            # the closing border is followed by "N rows in set" or the next prompt
            if i < len(lines) and not lines[i].lstrip().startswith("|"):
                break
            continue
        if not row.lstrip().startswith("|"):
            break
        if not _INNER_BORDER.match(row):
            _bordered_row(table, lines, i)
        i += 1
    return table, i


def _bordered_row(table: ResultTable, lines: list[str], i: int) -> None:
    """Line ``i``'s cells as a row of ``table``: extra cells joined into the last
    column, missing ones padded, a row cut where the paste ends kept apart."""
    row = lines[i]
    columns = table.columns
    cells = _split_bordered(row)
    if len(cells) > len(columns) > 0:
        cells = [*cells[: len(columns) - 1], " | ".join(cells[len(columns) - 1 :])]
    elif len(cells) < len(columns):
        last = i + 1 >= len(lines) or not lines[i + 1].lstrip().startswith(("|", "+"))
        if (last and not row.rstrip().endswith("|")) or len(cells) < 2 <= len(columns):
            # "| innodb_autoextend_increment   |" where the paste ends: cut
            table.cut_rows.append((i + 1, row.strip()))
            return
        cells += [""] * (len(columns) - len(cells))
    table.rows.append(cells)
    table.row_lines.append(i + 1)


def _vertical_table(lines: list[str], i: int) -> tuple[ResultTable, int]:
    """The ``\\G`` records starting at separator line ``i``, and the index after them."""
    table = ResultTable(columns=[], header_line=i + 1)
    while i < len(lines) and _VERTICAL_SEP.match(lines[i].strip()):
        first_line = i + 2
        record, i = _vertical_record(lines, i + 1)
        _add_record(table, record, first_line)
        if i < len(lines) and not _VERTICAL_SEP.match(lines[i].strip()):
            break
    # rows read before a later record introduced a column get padded
    for padded in table.rows:
        padded += [""] * (len(table.columns) - len(padded))
    return table, i


def _add_record(table: ResultTable, record: dict[str, str], line: int) -> None:
    """A ``\\G`` record as the next row of ``table``; a field no record before had adds a column."""
    table.columns += [name for name in record if name not in table.columns]
    table.rows.append([record.get(c, "") for c in table.columns])
    table.row_lines.append(line)


def _vertical_record(lines: list[str], i: int) -> tuple[dict[str, str], int]:
    """The ``name: value`` fields from line ``i`` to the next separator."""
    record: dict[str, str] = {}
    while i < len(lines) and not _VERTICAL_SEP.match(lines[i].strip()):
        m = _VERTICAL_FIELD.match(lines[i])
        if not m or re.match(r"^\d+ rows? in set|^Empty set", lines[i].strip()):
            break
        record[m.group(1).strip().lower()] = m.group(2).strip()
        i += 1
    return record, i


# ------------------------------------------------------------------ kind & version


def classify(version: str | None, comment: str | None = None) -> str | None:
    """mysql / mariadb / percona from ``version`` and ``version_comment``."""
    blob = f"{version or ''} {comment or ''}".lower()
    if not blob.strip():
        return None
    if "mariadb" in blob:
        return "mariadb"
    if "percona" in blob:
        return "percona"
    return "mysql"


# ------------------------------------------------------------------ variables

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
# client chatter around a result set, never a variable
_CLIENT_NOISE = re.compile(r"^\s*(\d+ rows? in set\b.*|Empty set\b.*|Query OK\b.*|Variable_name\s+Value)\s*$")
_KNOWN_VARIABLE = re.compile(
    r"^(innodb_|binlog_|character_set_|collation_|auto_increment_|aria_|max_connections|"
    r"autocommit|datadir|basedir|large_pages|version)",
    re.M,
)
# SHOW GLOBAL STATUS: counters are printed capitalised ("Innodb_buffer_pool_reads",
# "Com_select", "Uptime"); variables never are
_STATUS_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*$")
_KNOWN_STATUS = re.compile(
    r"^(innodb_|com_|threads_|handler_|bytes_|aborted_|created_tmp_|key_|qcache_|select_|"
    r"open_|table_|uptime|questions|connections|slow_queries)",
    re.M | re.I,
)
_STATUS_LINE = re.compile(r"^([A-Z][a-z0-9]*(?:_[A-Za-z0-9]+)+)\t", re.M)
_SNAKE_LINE = re.compile(r"^([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?:\t| {2,}|[ \t]*$)(?![ \t]*[=:])", re.M)


class _Skipped:
    """Lines a variables parse passed over, reported as one partial-parse error."""

    def __init__(self, form: str):
        self.form = form
        self.count = 0
        self.first: tuple[int, str] | None = None

    def add(self, number: int, line: str) -> None:
        self.count += 1
        if self.first is None:
            self.first = (number, line.strip()[:60])

    def errors(self) -> list[ArtifactError]:
        if not self.count or self.first is None:
            return []
        number, line = self.first
        plural = "line" if self.count == 1 else "lines"
        return [
            ArtifactError(
                "", f"variables: {self.count} {plural} not in {self.form} form (first: {line!r})", number
            )
        ]


@dataclass
class _Read:
    """What a variables/status parse collected: variables (lower-case names),
    status counters (names printed capitalised: ``Innodb_buffer_pool_pages_total``,
    ``Uptime``), the line of each, and the lines passed over."""

    skipped: _Skipped
    values: dict[str, str] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    status: dict[str, str] = field(default_factory=dict)
    status_lines: dict[str, int] = field(default_factory=dict)

    def add(self, raw_name: str, value: str, line: int) -> bool:
        """One ``name value`` row; False when ``raw_name`` is not a name."""
        name = raw_name.strip()
        if not _NAME.match(name):
            return False
        if _STATUS_NAME.match(name):
            # SHOW STATUS shares SHOW VARIABLES' "Variable_name | Value" header;
            # the server prints status names capitalised and variables in lower case
            self.status[name.lower()] = value
            self.status_lines[name.lower()] = line
        else:
            self.values[name.lower()] = value
            self.lines[name.lower()] = line
        return True

    def __len__(self) -> int:
        return len(self.values) + len(self.status)


def _variables_from_tables(text: str, cut: list[ArtifactError] | None = None) -> _Read:
    """Variables (and status counters) of ``| Variable_name | Value |`` tables;
    rows cut mid-paste are added to ``cut`` as errors."""
    cut = [] if cut is None else cut
    read = _Read(_Skipped("| Variable_name | Value |"))
    for table in parse_result_tables(text):
        cols = table.columns
        if "variable_name" in cols and "value" in cols:
            _read_name_value_table(read, table, cut)
        elif len(cols) == 2 and cols[0].startswith("@@") and table.rows:
            _read_selected_variable(read, table)
    return read


def _read_selected_variable(read: _Read, table: ResultTable) -> None:
    """``SELECT @@innodb_numa_interleave``: the header names the variable, the first row holds its value."""
    name = table.columns[0][2:].removeprefix("global.").removeprefix("session.")
    read.values[name] = table.rows[0][0]
    read.lines[name] = table.row_lines[0]


def _read_name_value_table(read: _Read, table: ResultTable, cut: list[ArtifactError]) -> None:
    """The rows of a ``| Variable_name | Value |`` table; its cut rows go to ``cut``."""
    name_i, value_i = table.columns.index("variable_name"), table.columns.index("value")
    for ln, row_text in table.cut_rows:
        cut.append(ArtifactError("", f"variables: row cut mid-paste: {row_text[:60]!r}", ln))
    for row, ln in zip(table.rows, table.row_lines, strict=True):
        if not read.add(row[name_i], row[value_i], ln):
            read.skipped.add(ln, " | ".join(row))


def _variables_from_plain(text: str) -> _Read:
    """``NAME<TAB>VALUE`` lines (``mysql -B``/``-e``), or the same with the tabs
    turned into spaces. A variable with an empty value is its name alone once a
    paste has trimmed the trailing tab (``init_connect``)."""
    tabbed = "\t" in text
    read = _Read(_Skipped("NAME<TAB>VALUE" if tabbed else "NAME VALUE"))
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or _CLIENT_NOISE.match(line):
            continue
        pair = _name_and_value(line, tabbed)
        if pair is None or not read.add(pair[0], pair[1].strip(), number):
            read.skipped.add(number, line)
    return read


def _name_and_value(line: str, tabbed: bool) -> tuple[str, str] | None:
    """A line's name and value: split at its tab, else at its first spaces
    ("name   value", tabs turned into spaces) or a bare name (empty value);
    None when it starts with no variable name."""
    if tabbed and "\t" in line:
        name, _, value = line.partition("\t")
        return name, value
    parts = line.split(None, 1)
    if not _NAME.match(parts[0]) or (tabbed and len(parts) > 1):
        return None
    return parts[0], parts[1] if len(parts) > 1 else ""


def _finish(values: dict[str, str], lines: dict[str, int], read: _Read | None = None) -> DatabaseFacts:
    version = values.get("version") or None
    facts = DatabaseFacts(
        kind=classify(version, values.get("version_comment")),
        version=version,
        variables=values,
        variable_sources=dict.fromkeys(values, "server"),
        lines=dict(lines),
    )
    if read is not None:
        facts.status = dict(read.status)
        facts.lines.update({f"status.{name}": line for name, line in read.status_lines.items()})
    return facts


def _looks_like_variables(head: str) -> bool:
    """``SHOW VARIABLES`` in one of its forms, headers and tabs possibly lost."""
    if "Variable_name" in head and _VARIABLES_HEADER.search(head):
        return True
    if head.count("_", 0, 4096) < 8:
        return False  # fewer than 8 snake_case names
    return _headerless_variables(head[:4096]) or _headerless_status(head[:4096])


# the header of SHOW VARIABLES: bordered, tab-separated (-B) or vertical (\G)
_VARIABLES_HEADER = re.compile(
    r"\|\s*Variable_name\s*\|\s*Value\s*\||^Variable_name\tValue\s*$"
    r"|^[ \t]*Variable_name:[ \t]*\w+[ \t]*\n[ \t]*Value:",
    re.M,
)


def _headerless_variables(head: str) -> bool:
    """-N (no header) or tabs turned into spaces: many snake_case names first on
    their line, some of them names every server has."""
    rows = _SNAKE_LINE.findall(head)
    return len(rows) >= 8 and len(_KNOWN_VARIABLE.findall("\n".join(rows))) >= 2


def _headerless_status(head: str) -> bool:
    """SHOW GLOBAL STATUS with -N, or rows copied from a result grid: tab-separated
    capitalised counter names, several of them counters every server has."""
    counters = _STATUS_LINE.findall(head)
    return len(counters) >= 8 and len(_KNOWN_STATUS.findall("\n".join(counters))) >= 2


@register(
    "mysql_variables",
    commands=(
        # "SHOW /*!50000 GLOBAL */ VARIABLES" is what tools and copied scripts send
        r"(?i)\bshow\s+(?:/\*.{0,40}?\*/\s*)?(global\s+|session\s+)?variables\b",
        # SHOW STATUS prints the same table; its counters go to DatabaseFacts.status
        r"(?i)\bshow\s+(?:/\*.{0,40}?\*/\s*)?(global\s+|session\s+)?status\b",
        r"(?i)\bselect\s+@@(?!(global\.)?version\b)",
        r"\b(mysqladmin|mariadb-admin)\b.*\bvariables\b",
    ),
    paths=(
        r"mysql-variables$",
        r"(?i)show_global_variables[^/]*$",
        r"sos_commands/mysql/mysqladmin_-uroot_-pXXX_variables$",
    ),
    detect=_looks_like_variables,
    priority=10,
    prose_lines=(
        # a variable with an empty value once its trailing tab is gone
        # ("init_connect"), or any row once tabs became spaces ("version_comment
        # mariadb.org binary distribution"): a snake_case name, then nothing or a
        # column gap (prose separates words with single spaces)
        r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+",
        r"[a-z][a-z0-9_]*(?:\t| {2,}).*",
        r"Variable_name\s+Value",
        # an empty value in the vertical (\G) form
        r"Value:",
    ),
)
def parse_mysql_variables(text: str) -> DatabaseFacts:
    """Server variables (lower-case names), version and kind from SHOW GLOBAL VARIABLES.

    Lines that are not variables are skipped and reported in ``errors`` ("variables:
    3 lines not in NAME<TAB>VALUE form"); the variables read are kept.

    >>> f = parse_mysql_variables("version\\t10.4.14-MariaDB-log\\ninnodb_buffer_pool_size\\t134217728\\n")
    >>> (f.kind, f.version, f.variables["innodb_buffer_pool_size"])
    ('mariadb', '10.4.14-MariaDB-log', '134217728')
    """
    cut: list[ArtifactError] = []
    read = _variables_from_tables(text, cut)
    if not len(read):
        empty = re.search(r"^\s*Empty set \(", text, re.M)
        if empty:
            # e.g. SHOW GLOBAL VARIABLES LIKE '%numa%' on MariaDB 10.4: a valid answer
            # ("no such variable") and exactly the evidence that the server lacks it.
            # It says nothing about other variables, so the result is simply empty.
            return _finish({}, {"empty_set": text.count("\n", 0, empty.start()) + 1})
        read = _variables_from_plain(text)
    if not len(read):
        raise ParseError("no server variables found")
    _check_variables_look_real(read)
    facts = _finish(read.values, read.lines, read)
    facts.errors = read.skipped.errors() + cut
    return facts


# a few of the names every server has
_KNOWN_VARIABLES = frozenset(
    {"version", "datadir", "basedir", "port", "innodb_buffer_pool_size", "max_connections", "socket"}
)


def _check_variables_look_real(read: _Read) -> None:
    """ParseError unless what was read looks like server variables: a handful of
    names could be any "word value" prose; a variables dump has many known names,
    a single SELECT @@x has its one; a status dump has several counters every
    server has. Most lines must have been read."""
    values, skipped = read.values, read.skipped
    plausible = (
        len(values) >= 3
        or _KNOWN_VARIABLES & values.keys()
        or any(k.startswith("innodb_") for k in values)
        or len(_KNOWN_STATUS.findall("\n".join(read.status))) >= 2
    )
    if not plausible:
        raise ParseError("text does not look like server variables")
    if skipped.count > len(read):
        raise ParseError(
            f"text does not look like server variables: {skipped.count} of "
            f"{skipped.count + len(read)} lines are not"
        )


# ------------------------------------------------------------------ option files


# The line shapes of an error log: (words one of which the head must hold, the
# pattern then searched), so that each search runs only when the words it needs
# are there. One optional leading field ("2022-07-26 11:38:32 0 [Note]"), written
# so that a long line without spaces is not re-scanned from every position; the
# old "YYMMDD hh:mm:ss" stamp; a syslog line of mysqld or mariadbd.
_ERROR_LOG_SHAPES = (
    (
        ("[Note]", "[Warning]", "[ERROR]", "[System]"),
        re.compile(r"^(?:\S+[ \t]+)?\S+ \d+ \[(Note|Warning|ERROR|System)\]", re.M),
    ),
    (
        ("[Note]", "[Warning]", "[ERROR]", "InnoDB:"),
        re.compile(r"^\d{6}\s+\d{1,2}:\d{2}:\d{2}\s+(\[(Note|Warning|ERROR)\]|InnoDB:)", re.M),
    ),
    (("mysqld", "mariadbd"), re.compile(r"(mysqld|mariadbd)[\w-]*(\[\d+\])?:\s*(InnoDB:|\d{4}-\d\d-\d\d)")),
)


def _looks_like_error_log(head: str) -> bool:
    return any(
        any(word in head for word in words) and pattern.search(head) for words, pattern in _ERROR_LOG_SHAPES
    )


_SERVER_VERSION = re.compile(r"(?i)^\s*Server version:\s*\d", re.M)
# Option-file groups the server reads (MySQL, MariaDB, Percona), with an optional
# version suffix ([mysqld-8.0], [mariadb-10.11])
_SERVER_GROUP = re.compile(r"(?i)^(mysqld|server|mariadb|mariadbd|galera|client-server)(-[\d.]+)?$")
_GROUP_LINE = re.compile(r"^\s*\[\s*([^\]]+?)\s*\]\s*$")
_OPTION = re.compile(r"^\s*(?:--)?([A-Za-z][\w.-]*)\s*(?:=\s*(.*?))?\s*$")
_SIZE_SUFFIX = re.compile(r"^(\d+)([KMGTPE])$", re.IGNORECASE)


def _option_name(raw: str) -> str:
    name = raw.strip().lower().replace("-", "_")
    return name.removeprefix("loose_")


def _option_value(raw: str | None) -> str:
    """Value as the server would hold it: quotes removed, a trailing ``# comment``
    dropped, ``8G``-style sizes in bytes, a bare flag ``ON``."""
    if raw is None:
        return "ON"
    value = raw.strip()
    if value[:1] in ("'", '"'):
        end = value.find(value[0], 1)
        return value[1:end] if end > 0 else value[1:]
    value = re.split(r"\s+#", value, maxsplit=1)[0].strip()
    m = _SIZE_SUFFIX.match(value)
    if m:
        return str(int(m.group(1)) * 1024 ** (" KMGTPE".index(m.group(2).upper())))
    return value


# options only a MySQL/MariaDB server reads (postgresql.conf and php.ini share
# max_connections, sysctl.conf names hold dots)
_SERVER_ONLY_OPTION = re.compile(
    r"^[ \t]*(?:loose[-_])?(?:innodb[-_]\w+|key[-_]buffer[-_]size|thread[-_]cache[-_]size|"
    r"query[-_]cache[-_]\w+|max[-_]allowed[-_]packet|table[-_]open[-_]cache|table[-_]definition[-_]cache|"
    r"skip[-_]name[-_]resolve|large[-_]pages|myisam[-_]\w+|binlog[-_]\w+|log[-_]bin|server[-_]id|"
    r"max[-_]heap[-_]table[-_]size|join[-_]buffer[-_]size|sort[-_]buffer[-_]size|read[-_]rnd[-_]buffer[-_]size)"
    r"[ \t]*(?:=|$)",
    re.M,
)
_OPTION_LINE = re.compile(r"^[ \t]*[A-Za-z][\w-]*[ \t]*(?:=[^\n]*)?$", re.M)


def _config_fragment_looking(text: str) -> bool:
    """Option lines pasted without their ``[mysqld]`` line: no group at all, only
    option lines (a sentence among them is prose quoting advice), at least three
    ``name = value`` lines, two of them options only the server has."""
    if re.search(r"^[ \t]*\[[^\]\n]+\][ \t]*$", text, re.M):
        return False
    lines = _setting_lines(text)
    options = [line for line in lines if _OPTION_LINE.match(line)]
    # (three "name = value" lines make three options)
    if len(options) < len(lines) or sum("=" in line for line in options) < 3:
        return False
    return len(_SERVER_ONLY_OPTION.findall("\n".join(options))) >= 2


def _setting_lines(text: str) -> list[str]:
    """The lines of an option file that are neither blank nor comments (``#``, ``;``)."""
    return [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith(("#", ";"))]


def _config_groups_looking(head: str) -> bool:
    if "[" not in head:
        return _config_fragment_looking(head)
    groups = re.findall(r"^[ \t]*\[[ \t]*([\w.-]+)[ \t]*\][ \t]*$", head, re.M)
    return any(_SERVER_GROUP.match(g) or g.lower() in ("client", "client-server", "mysql") for g in groups)


@register(
    "mysql_config",
    commands=(
        r"\b(cat|more|less|head|tail|grep|egrep|sed|awk|tee|vi|vim)\b.*(my\.cnf|my\.cnf\.d/|mysql/\S*\.cnf|\.cnf\b)",
        r"\bmy_print_defaults\b",
        r"\b(mysqld|mariadbd)\b.*--print-defaults",
    ),
    paths=(
        r"(^|/)etc/my\.cnf$",
        r"(^|/)etc/my\.cnf\.d/[^/]+\.cnf$",
        r"(^|/)etc/mysql/(.+/)?[^/]+\.cnf$",
        # an uploaded option file keeps only its base name ("server.cnf"); other
        # .cnf files (openssl.cnf) have no server group and yield nothing
        r"(^|/)[^/]+\.cnf$",
    ),
    detect=_config_groups_looking,
    needles=("[", "="),
    priority=5,
)
def parse_mysql_config(text: str) -> DatabaseFacts | list[DatabaseFacts]:
    """Settings of the server groups of a MySQL/MariaDB option file (``my.cnf``,
    ``/etc/my.cnf.d/*.cnf``, ``/etc/mysql/**/*.cnf``), several files concatenated,
    or ``my_print_defaults mysqld`` / ``mysqld --print-defaults`` output::

        [mysqld]
        innodb_buffer_pool_size = 8G
        loose-innodb-numa-interleave = 1
        large-pages
        !includedir /etc/my.cnf.d

    Groups read: ``[mysqld]``, ``[server]``, ``[mariadb]``, ``[mariadbd]``,
    ``[galera]``, ``[client-server]`` and their ``-VERSION`` forms; ``[client]``, ``[mysqld_safe]`` and
    the other programs' groups are skipped. Names are normalised (lower case, ``_`` for
    ``-``, no ``loose-``); a bare option is ``ON``; ``8G`` becomes bytes in
    ``variables`` and stays as written in ``config``; the last setting of a name
    wins; ``!include``/``!includedir`` are not followed. Every variable's source
    is ``config``: a live ``SHOW VARIABLES`` value replaces it when both are read.
    A file with no server group yields no facts; option lines pasted without
    any group line are the server's when two of them are options only the server
    has (``innodb_buffer_pool_size = 48G``, ``thread_cache_size = 128``).

    >>> f = parse_mysql_config("[mysqld]\\ninnodb-buffer-pool-size = 8G\\nlarge-pages\\n")
    >>> (f.variables, f.config["innodb_buffer_pool_size"])
    ({'innodb_buffer_pool_size': '8589934592', 'large_pages': 'ON'}, '8G')
    """
    facts = DatabaseFacts()
    skipped = _Skipped("NAME = VALUE")
    option_lines = _ServerOptionLines(text)
    for number, line, tokens in option_lines:
        if not all(_store_option(facts, token, number) for token in tokens):
            skipped.add(number, line)
    if not facts.variables:
        if not option_lines.printed and option_lines.group is None:
            raise ParseError("no [group] header or --option lines: not a MySQL option file")
        return []
    facts.errors = skipped.errors()
    return facts


class _ServerOptionLines:
    """The option lines of an option file's server groups, as (line number,
    line, options); after the iteration, the last group seen (None when there
    was no ``[group]`` line and the text is no fragment of a server group) and
    whether options were printed (``my_print_defaults``: ``--name=value``)."""

    def __init__(self, text: str) -> None:
        self.text = text
        # server options pasted without their group line ("the InnoDB section of my.cnf")
        self.group: str | None = "mysqld" if _config_fragment_looking(text) else None
        self.printed = False

    def __iter__(self) -> Iterator[tuple[int, str, list[str]]]:
        for number, raw in enumerate(self.text.splitlines(), 1):
            line = raw.strip().lstrip("\ufeff")
            if _holds_no_option(line):
                continue
            m = _GROUP_LINE.match(line)
            if m:
                self.group = m.group(1)
                continue
            tokens = _server_options(line, self.group)
            if tokens is not None:
                self.printed = self.printed or line.startswith("--")
                yield number, line, tokens


def _holds_no_option(line: str) -> bool:
    """A blank line, a comment, an include (not followed), a ``==> file <==``
    header of ``tail``, the banner of ``--print-defaults``."""
    return (
        not line
        or line[0] in "#;"
        or line.startswith(("!include", "==>"))
        or line.endswith("would have been started with the following arguments:")
    )


def _server_options(line: str, group: str | None) -> list[str] | None:
    """The options of a line of a server group (or of printed ``--options``
    outside any group); None for another program's group or a line outside any."""
    if group is not None and not _SERVER_GROUP.match(group):
        return None
    if line.startswith("--"):
        # one option per line (my_print_defaults) or all on one (--print-defaults)
        return re.split(r"\s+(?=--)", line)
    return None if group is None else [line]


def _store_option(facts: DatabaseFacts, token: str, number: int) -> bool:
    """One ``name = value`` (or bare ``name``) into the facts; False when it is none."""
    om = _OPTION.match(token)
    if not om:
        return False
    name = _option_name(om.group(1))
    raw_value = om.group(2)
    facts.config[name] = "ON" if raw_value is None else raw_value.strip().strip("'\"")
    facts.variables[name] = _option_value(raw_value)
    facts.variable_sources[name] = "config"
    facts.lines[name] = number
    return True


# ------------------------------------------------------------------ version

_VERSION_PATTERNS = (
    # mysql client banner: "Server version: 10.4.14-MariaDB-log MariaDB Server"
    re.compile(r"(?i)\bserver\s+version\s*:\s*(?P<version>\d+\.\d+[\w.+~-]*)(?P<comment>[^\n。]*)"),
    # mysqld --version: "mysqld  Ver 5.7.22-22 for Linux on x86_64 (Percona Server (GPL), Release 22)"
    re.compile(r"\b(?:mysqld|mariadbd)(?:\.exe)?\s+Ver\s+(?P<version>\d+\.\d+[\w.+~-]*)(?P<comment>[^\n]*)"),
    # error log: "Version: '5.7.16'  socket: '/var/lib/mysql/mysql.sock'  port: 3306  MySQL Community ..."
    re.compile(r"\bVersion:\s*'(?P<version>\d+\.\d+[^']*)'(?P<comment>[^\n]*)"),
    # MariaDB start-up: "Starting MariaDB 10.11.19-MariaDB-0+deb12u1 source revision ..."
    re.compile(r"\bStarting MariaDB (?P<version>\d+\.\d+[\w.+~-]*)(?P<comment>)"),
    # MySQL 8 start-up: "/usr/sbin/mysqld (mysqld 8.0.32) starting as process 1"
    re.compile(r"\(mysqld (?P<version>\d+\.\d+[\w.+~-]*)\)(?P<comment>[^\n]*)"),
)


def _find_version(text: str) -> tuple[str, str, int] | None:
    for pattern in _VERSION_PATTERNS:
        m = pattern.search(text)
        if m:
            return m.group("version"), m.group("comment").strip(), text.count("\n", 0, m.start()) + 1
    return None


_VERSION_QUERIES = ("version()", "@@version", "@@global.version")


def _version_in_table(text: str) -> tuple[str, str, int] | None:
    """A ``SELECT VERSION()`` result table's value."""
    for table in parse_result_tables(text):
        if table.columns and table.columns[0] in _VERSION_QUERIES and table.rows:
            return table.rows[0][0], "", table.row_lines[0]
    return None


def _bare_version(text: str) -> tuple[str, str, int] | None:
    """Tab-separated ``VERSION()\n10.11.19-MariaDB-0+deb12u1`` or a bare ``-N`` value."""
    plain = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if plain and plain[0].lower() in _VERSION_QUERIES:
        plain = plain[1:]
    if len(plain) != 1 or not re.fullmatch(r"\d+\.\d+\.\d+[\w.+~-]*", plain[0]):
        return None
    return plain[0], "", _line_of(text, plain[0])


def _line_of(text: str, value: str) -> int:
    """The 1-based number of the first line of ``text`` that holds ``value`` alone (it has one)."""
    return next(i for i, ln in enumerate(text.splitlines(), 1) if ln.strip() == value)


@register(
    "mysql_version",
    commands=(
        r"(?i)\bselect\s+(version\(\)|@@(global\.)?version\b)",
        r"\b(mysqld|mariadbd)\s+(-V|--version)\b",
    ),
    prose_lines=(
        # the mysql client's banner, which holds "Server version: ..."
        r"Welcome to the (MariaDB|MySQL) monitor\..*",
        r"Your (MariaDB|MySQL) connection id is \d+",
        r"Copyright \(c\) .*",
        r"Oracle is a registered trademark .*",
        r"affiliates\. Other names may be trademarks.*",
        r"owners\.",
        r"Type 'help;' or '\\h' for help\..*",
    ),
    detect=lambda head: bool(
        len(head) < 2000
        and (
            # a case-blind search is slow: an ASCII head holds the words in some case first
            ((not head.isascii() or "server version:" in head.lower()) and _SERVER_VERSION.search(head))
            or (" Ver" in head and re.search(r"\b(mysqld|mariadbd)\s+Ver\s+\d", head))
            or ("|" in head and re.search(r"^\|\s*(VERSION\(\)|@@version)\s*\|", head, re.M))
        )
    ),
    priority=5,
)
def parse_mysql_version(text: str) -> DatabaseFacts:
    """Server kind and version from a version string.

    >>> f = parse_mysql_version("Server version: 10.4.14-MariaDB-log MariaDB Server")
    >>> (f.kind, f.version)
    ('mariadb', '10.4.14-MariaDB-log')
    >>> parse_mysql_version("mysqld  Ver 5.7.22-22 for Linux on x86_64 (Percona Server (GPL))").kind
    'percona'
    """
    for find in (_find_version, _version_in_table, _bare_version):
        found = find(text)
        if found is not None:
            break
    else:
        raise ParseError("no MySQL/MariaDB server version string")
    version, comment, line = found
    return DatabaseFacts(kind=classify(version, comment), version=version, lines={"version": line})


# ------------------------------------------------------------------ error log

_ISO = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2})[T ]\s*(?P<time>\d{1,2}:\d{2}:\d{2})(?P<frac>\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?"
    r"\s+(?:(?P<thread>\d+)\s+)?(?:\[(?P<level>[A-Za-z]+)\]\s*)?(?:\[MY-\d+\]\s*\[\w+\]\s*)?(?P<msg>.*)$"
)
_OLD = re.compile(
    r"^(?P<date>\d{6})\s+(?P<time>\d{1,2}:\d{2}:\d{2})\s+(?:(?P<thread>\d+)\s+)?(?:\[(?P<level>[A-Za-z]+)\]\s*)?(?P<msg>.*)$"
)
_MONTHS = {m: i for i, m in enumerate(calendar.month_abbr) if m}
_SYSLOG = re.compile(
    r"^(?:\S+\s+)?(?P<mon>[A-Z][a-z]{2})\s+(?P<day>\d{1,2})\s+(?P<time>\d{2}:\d{2}:\d{2})\s+"
    r"(?:(?P<host>[^\s\[\]:]+)\s+)?(?P<prog>[\w./-]+)(?:\[(?P<pid>\d+)\])?:\s*(?P<msg>.*)$"
)
_DB_PROGRAM = re.compile(r"(?i)mysql|mariadb|percona")
_LEVEL_NAMES = {"warning": "Warning", "note": "Note", "error": "ERROR", "system": "System"}

_BP_INIT = re.compile(
    r"Initializing buffer pool,\s*(?:total\s+)?size\s*=\s*(?P<size>[\d.]+\s*[KMGTP]?)"
    r"(?:,\s*instances\s*=\s*(?P<instances>\d+))?(?:,\s*chunk size\s*=\s*(?P<chunk>[\d.]+\s*[KMGTP]?))?",
    re.IGNORECASE,
)
_BP_SIZE_MARIADB = re.compile(r"innodb_buffer_pool_size=(?P<size>\d+[kmgtp]?)\b", re.IGNORECASE)
_NUMA_POLICY = re.compile(r"Setting NUMA memory policy to (?P<policy>MPOL_\w+)")
_BP_READY = re.compile(r"Completed initialization of buffer pool")
_SIGNAL = re.compile(r"mysqld got signal (?P<signal>\d+)")
_READY = re.compile(r"ready for connections")
_SHUTDOWN = re.compile(r"Shutdown complete")


def _seconds_iso(date: str, time: str, frac: str | None) -> float:
    y, mo, d = (int(x) for x in date.split("-"))
    h, mi, s = (int(x) for x in time.split(":"))
    if not (1 <= mo <= 12 and 1 <= d <= 31 and h < 24 and mi < 60 and s < 62):
        raise ValueError("out of range")
    return calendar.timegm((y, mo, d, h, mi, s, 0, 0, 0)) + (float(frac) if frac else 0.0)


def _pool_init(m: re.Match[str], msg: str) -> dict[str, Any] | None:
    """``Initializing buffer pool, total size = 128G, instances = 8, chunk size = 128M``."""
    size_text = m.group("size").replace(" ", "")
    data: dict[str, Any] = {"size_text": size_text, "size_bytes": size_bytes(size_text)}
    if m.group("instances"):
        data["instances"] = int(m.group("instances"))
    if m.group("chunk"):
        chunk = m.group("chunk").replace(" ", "")
        data["chunk_size"] = chunk
        data["chunk_size_bytes"] = size_bytes(chunk)
    return data


def _mariadb_pool_size(m: re.Match[str], msg: str) -> dict[str, Any] | None:
    """MariaDB's ``InnoDB: ... innodb_buffer_pool_size=...`` (not another program's)."""
    if "InnoDB" not in msg:
        return None
    return {"size_text": m.group("size"), "size_bytes": size_bytes(m.group("size"))}


def _numa_policy(m: re.Match[str], msg: str) -> dict[str, Any] | None:
    return {"policy": m.group("policy")}


def _signal(m: re.Match[str], msg: str) -> dict[str, Any] | None:
    return {"signal": int(m.group("signal"))}


def _no_data(m: re.Match[str], msg: str) -> dict[str, Any] | None:
    return {}


# the messages of an error log that are events: (pattern, event kind, its data),
# tried in order; a data function may return None to let the next ones try
_EVENTS: tuple[tuple[re.Pattern[str], str, Callable[[re.Match[str], str], dict[str, Any] | None]], ...] = (
    (_BP_INIT, "buffer_pool_init", _pool_init),
    (_BP_SIZE_MARIADB, "buffer_pool_init", _mariadb_pool_size),
    (_NUMA_POLICY, "numa_policy", _numa_policy),
    (_BP_READY, "buffer_pool_ready", _no_data),
    (_SIGNAL, "crash", _signal),
    (_READY, "ready", _no_data),
    (_SHUTDOWN, "shutdown", _no_data),
)


def _classify_message(msg: str) -> tuple[str, dict[str, Any]] | None:
    for pattern, kind, data_of in _EVENTS:
        m = pattern.search(msg)
        data = data_of(m, msg) if m else None
        if data is not None:
            return kind, data
    return None


def _note_version(facts: DatabaseFacts, found: tuple[str, str, int], event: DbEvent) -> None:
    """The latest start-up's version wins (a log spans upgrades). MariaDB names the
    version twice per start-up (``Starting MariaDB`` and ``Version:``): a repeat of
    the same version is an event again only after a ``Shutdown complete``."""
    version, comment, _ = found
    if _starts_up_again(facts.events, version):
        event.data = {"version": version}
        facts.events.append(event)
    facts.version, facts.kind = version, classify(version, comment) or facts.kind
    facts.lines["version"] = event.line or 0


def _starts_up_again(events: list[DbEvent], version: str) -> bool:
    """Whether a version line is a new start-up's: the first, one after a shutdown, or another version."""
    last = next((e for e in reversed(events) if e.kind in ("version", "shutdown")), None)
    return last is None or last.kind == "shutdown" or last.data.get("version") != version


class _LogEntry(NamedTuple):
    """A line of a mysqld log: its time (as printed, and in seconds), level and message."""

    stamp: str | None = None
    seconds: float | None = None
    level: str | None = None
    msg: str | None = None  # None: a line without a timestamp


class _LogClock:
    """Reads the timestamp of each line of a log; syslog lines carry no year,
    so a month that goes backwards is taken as the next year."""

    def __init__(self) -> None:
        self.syslog_year, self.last_month = 2000, 0

    def read(self, line: str) -> _LogEntry | None:
        """The entry of ``line``, or None when it is not a mysqld log line."""
        try:
            return self._read(line)
        except ValueError:
            return None  # a timestamp out of range is not a log line

    def _read(self, line: str) -> _LogEntry | None:
        m = _ISO.match(line)
        if m:
            stamp = f"{m.group('date')}T{m.group('time')}{m.group('frac') or ''}"
            seconds = _seconds_iso(m.group("date"), m.group("time"), m.group("frac"))
            return _LogEntry(stamp, seconds, m.group("level"), m.group("msg"))
        if (m := _OLD.match(line)) is not None:
            dd = m.group("date")
            date = f"20{dd[0:2]}-{dd[2:4]}-{dd[4:6]}"
            seconds = _seconds_iso(date, m.group("time"), None)
            return _LogEntry(f"{date}T{m.group('time')}", seconds, m.group("level"), m.group("msg"))
        if (m := _SYSLOG.match(line)) is not None and m.group("mon") in _MONTHS:
            return self._syslog(m)
        return _LogEntry()

    def _syslog(self, m: re.Match[str]) -> _LogEntry | None:
        if not _DB_PROGRAM.search(m.group("prog")):
            return None
        month = _MONTHS[m.group("mon")]
        if month < self.last_month:
            self.syslog_year += 1
        self.last_month = month
        stamp = f"{m.group('mon')} {m.group('day')} {m.group('time')}"
        seconds = _seconds_iso(
            f"{self.syslog_year}-{month:02d}-{int(m.group('day')):02d}", m.group("time"), None
        )
        msg = m.group("msg")
        inner = _ISO.match(msg)  # mysqld's own timestamped line inside the journal
        if inner:
            return _LogEntry(stamp, seconds, inner.group("level"), inner.group("msg"))
        return _LogEntry(stamp, seconds, None, msg)


def _read_bare_line(facts: DatabaseFacts, line: str, number: int) -> int:
    """A line without a timestamp: a ``Version:`` line or a crash signal (1), else 0."""
    found = _find_version(line)
    if found and line.startswith("Version:"):
        _note_version(facts, found, DbEvent(kind="version", message=line, line=number))
        return 1
    if _SIGNAL.search(line):
        facts.events.append(DbEvent(kind="crash", message=line, data={}, line=number))
        return 1
    return 0


def _read_entry(facts: DatabaseFacts, entry: _LogEntry, number: int) -> None:
    """A timestamped line: counted by level, and an event when it says one."""
    stamp, seconds, level, msg = entry
    assert msg is not None
    if level:
        key = _LEVEL_NAMES.get(level.lower(), level)
        facts.log_counts[key] = facts.log_counts.get(key, 0) + 1
    found = _find_version(msg)
    if found:
        _note_version(
            facts, found, DbEvent(kind="version", timestamp=stamp, seconds=seconds, message=msg, line=number)
        )
    classified = _classify_message(msg)
    if classified:
        kind, data = classified
        facts.events.append(
            DbEvent(kind=kind, timestamp=stamp, seconds=seconds, message=msg, data=data, line=number)
        )
        facts.lines.setdefault(kind, number)
    elif level and level.upper() == "ERROR":
        facts.events.append(DbEvent(kind="error", timestamp=stamp, seconds=seconds, message=msg, line=number))


@register(
    "mysql_error_log",
    commands=(
        r"(?i)\b(cat|tail|head|less|more|grep)\b.*(\.err\b|/var/log/\S*(mysql|mariadb)|(mysql|mariadb)\S*\.log\b)",
        r"(?i)journalctl\b.*(mysql|mariadb)",
    ),
    paths=(
        r"var/log/(mysql|mariadb)/[^/]*\.(log|err)$",
        r"var/log/mysqld?\.log$",
        r"var/lib/mysql/[^/]*\.err$",
    ),
    detect=_looks_like_error_log,
    priority=5,
)
def parse_mysql_error_log(text: str) -> DatabaseFacts:
    """Events and ``[Warning]``/``[Note]``/``[ERROR]`` line counts from a mysqld log.

    Events: ``buffer_pool_init`` (``size_bytes``, ``size_text``, ``instances``,
    ``chunk_size``), ``numa_policy`` (``policy``), ``buffer_pool_ready``, ``version``,
    ``ready``, ``shutdown``, ``crash`` and ``error`` (one per ``[ERROR]`` line). ``seconds`` is
    comparable within one log; syslog lines carry no year, so a month that goes
    backwards is taken as the next year.

    >>> log = parse_mysql_error_log(
    ...     "Jul 7 12:00:44 mysqld-3301[95109]: InnoDB: Setting NUMA memory policy to MPOL_INTERLEAVE\\n"
    ...     "Jul 7 12:08:04 mysqld-3301[95109]: InnoDB: Setting NUMA memory policy to MPOL_DEFAULT\\n")
    >>> log.events[1].seconds - log.events[0].seconds
    440.0
    """
    facts = DatabaseFacts(log_counts={"Warning": 0, "Note": 0, "ERROR": 0})
    recognised = 0
    clock = _LogClock()
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        entry = clock.read(line) if line else None
        if entry is None:
            continue
        if entry.msg is None:
            recognised += _read_bare_line(facts, line, number)
        else:
            recognised += 1
            _read_entry(facts, entry, number)
    if recognised == 0:
        raise ParseError("no mysqld log lines (timestamped [Note]/[Warning]/[ERROR] or mysqld syslog lines)")
    return facts
