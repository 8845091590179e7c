"""``/proc/softirqs`` -> :class:`Softirqs`.

Sample input::

                        CPU0       CPU1
              HI:          7          1
           TIMER:     424191     108342
          NET_TX:       2301       2430
          NET_RX:      43066     104508

Row name -> one count per CPU column. ``lines`` keys: the row names and
``header``.
"""

from __future__ import annotations

import re

from collectors.facts import ArtifactError, Interrupts, ParseError, Softirqs, TableCut
from collectors.parsers import register
from collectors.parsers.interrupts import SOFTIRQ_NAMES, parse_counter_table

# the kernel's last softirq vector (include/linux/interrupt.h): /proc/softirqs ends with it
LAST_SOFTIRQ = "RCU"


def _detect(head: str) -> bool:
    if "NET_RX:" not in head or "CPU0" not in head:
        return False
    return (
        re.search(r"^\s*CPU0\b", head, re.M) is not None and re.search(r"^\s*NET_RX:", head, re.M) is not None
    )


def _mark_stopped_early(out: Softirqs) -> None:
    """The kernel prints every vector down to RCU: a table that stops before it
    (with no row cut short) was cut after its last row."""
    last = max(out.rows, key=lambda name: out.lines.get(name, 0), default=LAST_SOFTIRQ)
    if last == LAST_SOFTIRQ or (out.cut is not None and out.cut.rows):
        return
    out.cut = out.cut or TableCut()
    out.cut.truncated_after = last
    out.cut.line = out.cut.line or out.lines.get(last)


@register(
    "softirqs",
    commands=(r"cat\s+/proc/softirqs",),
    paths=(r"proc/softirqs$",),
    detect=_detect,
    priority=10,
)
def parse_softirqs(text: str) -> Softirqs:
    """Parse ``/proc/softirqs``.

    Sample input::

                            CPU0       CPU1
                  HI:          7          1
              NET_RX:      43066     104508
    """
    table = Interrupts()
    parse_counter_table(text, table)
    if not table.rows and table.cut is None:
        raise ParseError("no softirq rows after the CPU header")
    if not SOFTIRQ_NAMES & (set(table.rows) | set(table.cut.rows if table.cut else [])):
        raise ParseError("no softirq names (HI, TIMER, NET_RX, ...): this is not /proc/softirqs")
    # every softirq row has a count per CPU: a shorter one is a paste cut mid-row, and
    # its counts would misstate the share of the CPUs it lost (kept out, reported)
    out = Softirqs(cpus=table.cpus, rows=table.rows, lines=table.lines, cut=table.cut)
    _mark_stopped_early(out)
    cut = out.cut or TableCut()
    for name in cut.rows:
        message = f"row {name} cut: {cut.shown.get(name, 0)} of {len(table.cpus)} CPUs"
        out.errors.append(ArtifactError("", message, cut.lines.get(name)))
    return out
