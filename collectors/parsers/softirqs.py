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

from collectors.facts import ArtifactError, Interrupts, ParseError, Softirqs
from collectors.parsers import register
from collectors.parsers.interrupts import SOFTIRQ_NAMES, parse_counter_table


def _detect(head: str) -> bool:
    if "NET_RX:" not in head or "CPU0" not in head:
        return False
    return (
        re.search(r"^\s*CPU0\b", head, re.M) is not None and re.search(r"^\s*NET_RX:", head, re.M) is not None
    )


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
    if not isinstance(text, str):
        raise ParseError("softirqs: not text")
    table = Interrupts()
    parse_counter_table(text, table)
    if not table.rows:
        raise ParseError("no softirq rows after the CPU header")
    if not SOFTIRQ_NAMES & set(table.rows):
        raise ParseError("no softirq names (HI, TIMER, NET_RX, ...): this is not /proc/softirqs")
    # every softirq row has a count per CPU: a shorter one is a paste cut mid-row, and
    # its counts would misstate the share of the CPUs it lost (kept out, reported)
    cut = {name: len(counts) for name, counts in table.rows.items() if len(counts) < len(table.cpus)}
    rows = {name: counts for name, counts in table.rows.items() if name not in cut}
    out = Softirqs(cpus=table.cpus, rows=rows, lines=table.lines)
    for name, count in cut.items():
        out.errors.append(
            ArtifactError("", f"row {name} cut: {count} of {len(table.cpus)} CPUs", table.lines.get(name))
        )
    return out
