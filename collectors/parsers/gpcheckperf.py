"""Greenplum ``gpcheckperf`` reports -> :class:`BenchmarkResults`, one result per host.

``gpcheckperf -f hostfile -r ds -D -d /data`` ends with a RESULT section (the
format is fixed by ``printResult`` in gpMgmt/bin/gpcheckperf)::

    ====================
    ==  RESULT 2021-07-20T15:59:11.754871
    ====================

     disk write avg time (sec): 41.56
     disk write tot bytes: 65454604288
     disk write tot bandwidth (MB/s): 1501.99
     disk write min bandwidth (MB/s): 749.73 [gp-node2]
     disk write max bandwidth (MB/s): 752.26 [gp-node1]
     -- per host bandwidth --
        disk write bandwidth (MB/s): 749.73 [gp-node2]
        disk write bandwidth (MB/s): 752.26 [gp-node1]

     stream tot bandwidth (MB/s): 23051.70
     stream min bandwidth (MB/s): 9154.40 [gp-node1]
     stream max bandwidth (MB/s): 13897.30 [gp-node2]

The ``stream`` figure of a host is STREAM's Copy rate (gpcheckperf keeps the
``Copy:`` line of each host's run), so it becomes ``Benchmark(kind="stream",
name="Copy", unit="MB/s", host=...)``; disk tests become ``kind="disk_write"`` /
``"disk_read"``, ``name="bandwidth"``. Every host gets one result per test:
from the ``-D`` per-host lines when present, else from the min and max lines
(the two hosts that bound the spread). With ``-v`` the raw per-host STREAM rows
(``[sdw1] Triad:  12345.6 ...``) add Copy, Scale, Add and Triad per host.
The netperf part is not read. ``Benchmark.host`` is the host name as printed.
"""

from __future__ import annotations

import re

from collectors.facts import Benchmark, BenchmarkResults, ParseError
from collectors.numbers import finite
from collectors.parsers import register

_NUM = r"(\d{1,15}(?:\.\d{1,6})?)"
_LINE = re.compile(
    rf"^\s*(?P<test>stream|disk write|disk read)\s+(?P<what>min|max)?\s*bandwidth \(MB/s\):\s*{_NUM}"
    r"\s*\[\s*(?P<host>[^\]\s]{1,253})\s*\]\s*$"
)
_RAW = re.compile(rf"^\s*\[\s*(?P<host>[^\]\s]{{1,253}})\s*\]\s+(?P<name>Copy|Scale|Add|Triad):\s+{_NUM}\b")
_KIND = {"stream": "stream", "disk write": "disk_write", "disk read": "disk_read"}


@register(
    "gpcheckperf",
    commands=(r"(^|/)gpcheckperf(\s|$)",),
    paths=(r"(^|/)gpcheckperf[\w.\-]*\.(out|txt|log)$",),
    detect=lambda head: (
        "bandwidth (MB/s):" in head
        and re.search(r"^\s*(stream|disk write|disk read) (tot|min|max) bandwidth \(MB/s\):", head, re.M)
        is not None
    ),
    priority=15,
    prose_lines=(
        r"Netperf bisection bandwidth test",
        r"Full matrix netperf bandwidth test",
        r"Per host (?:transfer|receive) rates",
        r"Summary:",
    ),
)
def parse_gpcheckperf(text: str) -> BenchmarkResults:
    """Per-host STREAM and disk bandwidth of a ``gpcheckperf`` report.

    Sample input::

         stream tot bandwidth (MB/s): 36280.66
         stream min bandwidth (MB/s): 8890.95 [gpsdw2]
         stream max bandwidth (MB/s): 18413.74 [gpsdw3]
    """
    results = _chosen(*_read_lines(text))
    if not results:
        raise ParseError("no gpcheckperf bandwidth lines with a host ([name]) found")
    results.sort(key=lambda b: b.line or 0)
    return BenchmarkResults(results=results)


_Figures = dict[tuple[str, str], Benchmark]


def _read_lines(text: str) -> tuple[_Figures, _Figures, _Figures]:
    """The report's figures, each host's first of a kind: per-host lines by
    (kind, host), min/max lines by (kind, host), raw STREAM rows by (name, host)."""
    per_host: _Figures = {}
    bounds: _Figures = {}
    raw: _Figures = {}
    for idx, line in enumerate(text.splitlines(), start=1):
        m = _LINE.match(line)
        if m:
            bench = _bandwidth(m, idx)
            target = bounds if m.group("what") else per_host
            target.setdefault((bench.kind, bench.host or ""), bench)
            continue
        m = _RAW.match(line)
        if m:
            host = m.group("host")
            raw.setdefault(
                (m.group("name"), host),
                Benchmark("stream", m.group("name"), finite(m.group(3), idx), "MB/s", line=idx, host=host),
            )
    return per_host, bounds, raw


def _bandwidth(m: re.Match[str], idx: int) -> Benchmark:
    """The figure of a summary bandwidth line (STREAM's is its Copy rate)."""
    kind = _KIND[m.group("test")]
    name = "Copy" if kind == "stream" else "bandwidth"
    return Benchmark(kind, name, finite(m.group(3), idx), "MB/s", line=idx, host=m.group("host"))


def _chosen(
    per_host: dict[tuple[str, str], Benchmark],
    bounds: dict[tuple[str, str], Benchmark],
    raw: dict[tuple[str, str], Benchmark],
) -> list[Benchmark]:
    """The per-host figures; a test's min/max lines when it has none, and the raw
    STREAM figures of hosts without a summary one."""
    results: list[Benchmark] = []
    kinds_with_hosts = {kind for kind, _host in per_host}
    results.extend(per_host.values())
    results.extend(b for (kind, _h), b in bounds.items() if kind not in kinds_with_hosts)
    have = {(b.name, b.host) for b in results if b.kind == "stream"}
    results.extend(b for key, b in raw.items() if key not in have)
    return results
