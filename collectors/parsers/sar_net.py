"""``sar -n DEV`` -> :class:`NetDevStats` (per-interface packet and byte rates).

Sample input::

    16:25:30        IFACE   rxpck/s   txpck/s    rxkB/s    txkB/s   rxcmp/s   txcmp/s  rxmcst/s   %ifutil
    16:25:31         eth0   1520.00   1498.00    210.40    190.22      0.00      0.00      0.00      0.02
    Average:         eth0   1520.00   1498.00    210.40    190.22      0.00      0.00      0.00      0.02

Columns are read by their header (older sysstat has no ``%ifutil``; ``rxbyt/s``
style headers of very old versions are converted to kB/s), and the values are
taken from the end of each row, so 12-hour times (``04:25:31 PM``) parse too.
``Average:`` rows win; without them each interface's rows are averaged.
Other ``sar -n`` reports (``EDEV``, ``TCP`` ...) in the same text are skipped.
``lines`` keys: ``header``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from collectors.facts import NetDevRate, NetDevStats, ParseError
from collectors.numbers import decimal, set_means
from collectors.parsers import register

_COLUMNS = {
    "rxpck/s": "rxpck_s",
    "txpck/s": "txpck_s",
    "rxkb/s": "rxkb_s",
    "txkb/s": "txkb_s",
    "rxbyt/s": "rxkb_s",
    "txbyt/s": "txkb_s",
    "rxcmp/s": "rxcmp_s",
    "txcmp/s": "txcmp_s",
    "rxmcst/s": "rxmcst_s",
    "%ifutil": "ifutil_pct",
}


@register(
    "sar_net_dev",
    commands=(r"^sar\s+(?:.*\s)?-n\s*(?:\S*,)?DEV\b",),
    paths=(r"(^|/)sar_-n_DEV\w*(\.txt)?$",),
    detect=lambda head: "IFACE" in head and re.search(r"\sIFACE\s+rxpck/s\s+txpck/s\s", head) is not None,
    priority=10,
)
def parse_sar_net_dev(text: str) -> NetDevStats:
    """Per-interface rates of ``sar -n DEV [interval count]``.

    Sample input::

        Average:        IFACE   rxpck/s   txpck/s    rxkB/s    txkB/s   rxcmp/s   txcmp/s  rxmcst/s   %ifutil
        Average:         eth0   1520.00   1498.00    210.40    190.22      0.00      0.00      0.00      0.02
    """
    out = NetDevStats()
    averages: dict[str, NetDevRate] = {}
    series: dict[str, list[NetDevRate]] = {}
    for first, rate in _rates(text, out.lines):
        if first.lower().startswith(("average", "平均时间")):
            averages[rate.iface] = rate
        else:
            series.setdefault(rate.iface, []).append(rate)
    chosen = _averaged(averages, series)
    if not chosen:
        raise ParseError("no sar -n DEV table (IFACE rxpck/s txpck/s ...) found")
    out.interfaces = sorted(chosen.values(), key=lambda r: r.line or 0)
    return out


def _rates(text: str, lines: dict[str, int]) -> Iterator[tuple[str, NetDevRate]]:
    """(the row's first cell, its rates) for every row of a ``-n DEV`` table; the
    first table header's line goes to ``lines``."""
    columns: list[str] | None = None
    for idx, line in enumerate(text.splitlines(), start=1):
        tokens = line.split()
        if "IFACE" in tokens:
            columns = _header_columns(tokens)
            if columns:
                lines.setdefault("header", idx)
            continue
        if columns is None or len(tokens) < len(columns) + 2:
            if _is_other_header(tokens, columns):
                columns = None
            continue
        rate = _rate_row(tokens, columns, idx)
        if rate is not None:
            yield tokens[0], rate


def _header_columns(tokens: list[str]) -> list[str] | None:
    """The lower-cased column names after ``IFACE``; None when none is a rate of ``-n DEV``."""
    rest = tokens[tokens.index("IFACE") + 1 :]
    return [t.lower() for t in rest] if any(t.lower() in _COLUMNS for t in rest) else None


def _is_other_header(tokens: list[str], columns: list[str] | None) -> bool:
    """A short row without a number after its time, under a table: another report's header."""
    return bool(tokens) and columns is not None and all(decimal(t) is None for t in tokens[1:])


def _averaged(averages: dict[str, NetDevRate], series: dict[str, list[NetDevRate]]) -> dict[str, NetDevRate]:
    """Each interface's ``Average:`` row, or the mean of its samples when it has none."""
    chosen = dict(averages)
    for iface, rows in series.items():
        if iface not in chosen:
            chosen[iface] = _mean_rate(iface, rows)
    return chosen


def _rate_row(tokens: list[str], columns: list[str], idx: int) -> NetDevRate | None:
    """One interface's rates from a data row (the last ``columns`` cells, all
    numbers, after the interface's name); None for any other row."""
    cells = tokens[-len(columns) :]
    values = [v for c in cells if (v := decimal(c)) is not None]
    if len(values) < len(cells):
        return None
    rate = NetDevRate(iface=tokens[-len(columns) - 1], line=idx)
    for name, value in zip(columns, values, strict=True):
        attr = _COLUMNS.get(name)
        if attr:
            setattr(rate, attr, value / 1024 if name.endswith("byt/s") else value)
    return rate


def _mean_rate(iface: str, rows: list[NetDevRate]) -> NetDevRate:
    """The mean of an interface's samples (a report without its Average lines)."""
    mean = NetDevRate(iface=iface, line=rows[-1].line)
    set_means(mean, rows, set(_COLUMNS.values()))
    return mean
