"""Benchmark results: STREAM, BenchmarkSQL (jTPCC) and timed SQL statements.

STREAM 5.10::

    Function    Best Rate MB/s  Avg time     Min time     Max time
    Copy:           11175.7     0.014502     0.014317     0.014721
    Triad:          12439.0     0.019526     0.019294     0.019836

BenchmarkSQL (progress line and final report)::

    Term-00, Running Average tpmTOTAL: 138777.38 Current tpmTOTAL: 1522932 Memory Usage: 630MB / 3786MB
    17:25:31,311 [Thread-4] INFO   jTPCC : Term-00, Measured tpmC (NewOrders) = 61981.56

A MySQL/MariaDB/obclient session with the client's timings::

    MariaDB [infoplus-v2]> create index Form_Remarks_Timestamp_IX on Form_Remarks (Timestamp);
    Query OK, 0 rows affected (58.371 sec)

MariaDB prints long timings as ``(1 min 58.37 sec)``. With ``-v`` (batch mode) the
client echoes each statement between two ``--------------`` lines instead of a prompt.
"""

from __future__ import annotations

import re

from collectors.facts import Benchmark, BenchmarkResults, ParseError
from collectors.numbers import finite
from collectors.parsers import register

_STREAM_ROW = re.compile(r"^\s*(?P<name>Copy|Scale|Add|Triad):\s+(?P<rate>\d+(?:\.\d+)?)\b")
_STREAM_HEADER = re.compile(r"^\s*Function\s+(Best\s+)?Rate\s*\(?MB/s\)?", re.M)


def _named_results(found: dict[str, Benchmark]) -> BenchmarkResults:
    """The results kept by name (the last of each), each name's line in ``lines``."""
    out = BenchmarkResults(results=list(found.values()))
    out.lines = {b.name: b.line for b in out.results if b.line}
    return out


@register(
    "stream",
    commands=(r"(^|/)stream(_c)?(\.exe)?(\s|$)", r"(^|/)stream\.\w+(\s|$)"),
    prose_lines=(
        # STREAM's own sentences around its results
        r"STREAM version .*",
        r"This system uses \d+ bytes per array element\.",
        r"Each kernel will be executed \d+ times\.",
        r"The \*best\* time for each kernel.*",
        r"will be used to compute the reported bandwidth\.",
        r"Your clock granularity.*",
        r"Each test below will take on the order of .*",
        r"Increase the size of the arrays if this shows that",
        r"you are not getting at least \d+ clock ticks per test\.",
        r"WARNING -- The above is only a rough guideline\.",
        r"For best results, please be sure you know the",
        r"precision of your system timer\.",
        r"Solution Validates: .*",
    ),
    detect=lambda head: bool(
        "Triad:" in head and _STREAM_HEADER.search(head) and re.search(r"^\s*Triad:", head, re.M)
    ),
    priority=10,
)
def parse_stream(text: str) -> BenchmarkResults:
    """Best rate (MB/s) of each STREAM kernel; a repeated run keeps its last result.

    >>> parse_stream("Triad:          12439.0     0.019526     0.019294     0.019836").results[0].value
    12439.0
    """
    found: dict[str, Benchmark] = {}
    for number, line in enumerate(text.splitlines(), 1):
        m = _STREAM_ROW.match(line)
        if m:
            found[m.group("name")] = Benchmark(
                kind="stream",
                name=m.group("name"),
                value=finite(m.group("rate"), number),
                unit="MB/s",
                line=number,
            )
    if not found:
        raise ParseError("no STREAM Copy/Scale/Add/Triad result lines")
    return _named_results(found)


_TPM_RUNNING = re.compile(
    r"Running Average tpmTOTAL:\s*(?P<avg>\d+(?:\.\d+)?)(?:\s+Current tpmTOTAL:\s*(?P<cur>\d+(?:\.\d+)?))?"
)
_TPM_MEASURED = re.compile(
    r"Measured (?P<name>tpmC|tpmTOTAL)(?:\s*\(NewOrders\))?\s*=\s*(?P<value>\d+(?:\.\d+)?)"
)


@register(
    "jtpcc",
    commands=(r"runBenchmark\.sh\b", r"\bjTPCC\b"),
    detect=lambda head: bool("tpm" in head and re.search(r"Running Average tpmTOTAL:|Measured tpmC", head)),
    priority=10,
)
def parse_jtpcc(text: str) -> BenchmarkResults:
    """tpmTOTAL (last running average and current) and the final measured tpmC/tpmTOTAL.

    >>> r = parse_jtpcc("Term-00, Running Average tpmTOTAL: 138777.38 Current tpmTOTAL: 1522932")
    >>> [(b.name, b.value) for b in r.results]
    [('tpmTOTAL', 138777.38), ('tpmTOTAL current', 1522932.0)]
    """
    found: dict[str, Benchmark] = {}
    for number, line in enumerate(text.splitlines(), 1):
        for m in _TPM_RUNNING.finditer(line):
            found["tpmTOTAL"] = Benchmark("tpmc", "tpmTOTAL", finite(m.group("avg"), number), "tpm", number)
            if m.group("cur"):
                found["tpmTOTAL current"] = Benchmark(
                    "tpmc", "tpmTOTAL current", finite(m.group("cur"), number), "tpm", number
                )
        for m in _TPM_MEASURED.finditer(line):
            name = f"measured {m.group('name')}"
            found[name] = Benchmark("tpmc", name, finite(m.group("value"), number), "tpm", number)
    if not found:
        raise ParseError("no BenchmarkSQL tpmTOTAL/tpmC lines")
    return _named_results(found)


_PROMPT = re.compile(r"^\s*(?:MariaDB|MySQL|mysql|obclient|oceanbase)\s*(?:\[[^\]]*\])?>\s*(?P<sql>.*)$")
# "mysql -v" echoes each statement between two lines of 14 dashes
_ECHO_FENCE = re.compile(r"^-{14}$")
_CONTINUATION = re.compile(r"^\s*->\s*(?P<sql>.*)$")
_TIMING = re.compile(
    r"^\s*(?:Query OK,\s*\d+\s+rows?\s+affected|(?:\d+\s+)?rows?\s+in\s+set|Empty set)"
    r"(?:,\s*\d+\s+warnings?)?\s*\((?:(?P<min>\d+)\s+min\s+)?(?P<sec>\d+(?:\.\d+)?)\s+sec\)"
)


class _Timings:
    """A SQL client session line by line: the statement typed at a prompt (or
    echoed by ``mysql -v``) and the timing line after it."""

    def __init__(self) -> None:
        self.out = BenchmarkResults()
        self.statement: list[str] = []
        self.statement_open = False
        self.echo: list[str] | None = None  # inside the client's -v statement echo

    def read(self, line: str, number: int) -> None:
        readers = (self._fence, self._echoed, self._prompt, self._continued, self._timing)
        if not any(read(line, number) for read in readers) and line.strip():
            self.statement_open = False

    def _fence(self, line: str, number: int) -> bool:
        """The ``----`` around ``-v``'s echo: the statement is what it encloses."""
        if not _ECHO_FENCE.match(line):
            return False
        if self.echo is None:
            self.echo = []
        else:
            self.statement, self.echo, self.statement_open = self.echo, None, False
        return True

    def _echoed(self, line: str, number: int) -> bool:
        if self.echo is None:
            return False
        self.echo.append(line.strip())
        return True

    def _prompt(self, line: str, number: int) -> bool:
        m = _PROMPT.match(line)
        if m is None:
            return False
        self.statement = [m.group("sql").strip()]
        self.statement_open = True
        return True

    def _continued(self, line: str, number: int) -> bool:
        m = _CONTINUATION.match(line) if self.statement_open else None
        if m is None:
            return False
        self.statement.append(m.group("sql").strip())
        return True

    def _timing(self, line: str, number: int) -> bool:
        m = _TIMING.match(line)
        if m is None:
            return False
        seconds = finite(m.group("sec"), number) + 60 * int(m.group("min") or 0)
        name = " ".join(s for s in self.statement if s).rstrip(";").strip()
        name = re.sub(r"(\\G|;)$", "", name).strip()[:200]
        self.out.results.append(Benchmark("statement", name, round(seconds, 6), "s", number))
        self.out.lines[f"results[{len(self.out.results) - 1}]"] = number
        self.statement, self.statement_open = [], False
        return True


@register(
    "sql_timing",
    commands=(r"(?i)^\s*(create|alter|insert|update|delete|replace|optimize|truncate|drop|load|call)\b",),
    detect=lambda head: bool(
        "Query OK" in head and re.search(r"^\s*Query OK, \d+ rows? affected \(", head, re.M)
    ),
    priority=1,
)
def parse_sql_timing(text: str) -> BenchmarkResults:
    """Each client timing (``Query OK ... (58.371 sec)``, ``N rows in set (0.01 sec)``)
    as a ``statement`` benchmark in seconds, named after the statement typed at the
    prompt before it (empty when the block has no prompt).

    >>> r = parse_sql_timing("MariaDB [db]> create index i on t (c);\\n"
    ...                      "Query OK, 0 rows affected (1 min 58.37 sec)")
    >>> (r.results[0].name, r.results[0].value, r.results[0].unit)
    ('create index i on t (c)', 118.37, 's')
    """
    reader = _Timings()
    for number, line in enumerate(text.splitlines(), 1):
        reader.read(line, number)
    out = reader.out
    if not out.results:
        raise ParseError("no SQL client timing lines ('Query OK, ... (N sec)' or 'N rows in set (N sec)')")
    return out
