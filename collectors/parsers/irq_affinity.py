"""IRQ -> CPU affinity from ``/proc/irq/*/smp_affinity_list`` as engineers print it.

``grep . /proc/irq/*/smp_affinity_list`` (``grep -H``; with a device directory
in the glob the action name is in the path)::

    /proc/irq/24/smp_affinity_list:0-1
    /proc/irq/68/idpf-eth1-TxRx-1/../smp_affinity_list:0

a shell loop (``for i in $(ls /proc/irq/ | grep -v default); do echo $i $(cat
/proc/irq/$i/smp_affinity_list); done``, with or without a colon)::

    24 0-1
    25: 2

``smp_affinity`` hex masks (``00000000,00000003``) are read as CPU ids too;
``effective_affinity[_list]`` lines go to ``effective``.
"""

from __future__ import annotations

import re

from collectors.cpulist import MAX_CPU_ID, mask_cpus, parse_cpulist
from collectors.facts import IrqAffinity, ParseError
from collectors.parsers import register, skipped_lines

_PATH_ROW = re.compile(
    r"^\s*/proc/irq/(\d+)/(?:([^\n]+?)/\.\./)?(smp_affinity_list|smp_affinity|effective_affinity_list|"
    r"effective_affinity):\s*(\S*)\s*$"
)
_LOOP_ROW = re.compile(r"^\s*(\d+)(?:\s*:\s*|\s+)([0-9a-fA-F,\-]+)\s*$")
_MASK = re.compile(r"^[0-9a-fA-F]{8}(,[0-9a-fA-F]{8})*$|^[0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*$")


def mask_to_cpus(mask: str) -> list[int]:
    """``"00000000,00000003"`` (comma-separated 32-bit words, high first) -> [0, 1].

    >>> mask_to_cpus("00000000,00000a03")
    [0, 1, 9, 11]
    """
    digits = mask.replace(",", "")
    if len(digits.lstrip("0")) > (MAX_CPU_ID + 1) // 4:  # (before a huge number is built)
        raise ValueError(f"CPU mask too wide: {mask[:20]!r}")
    return mask_cpus(int(digits, 16))


def _cpus(value: str, *, mask: bool) -> list[int]:
    return mask_to_cpus(value) if mask else parse_cpulist(value)


@register(
    "irq_affinity",
    commands=(r"/proc/irq/\S*(smp|effective)_affinity",),
    detect=lambda head: (
        "/proc/irq/" in head
        and len(re.findall(r"^[ \t]*/proc/irq/\d+/\S*affinity(?:_list)?:", head, re.M)) >= 2
    ),
    priority=10,
)
def parse_irq_affinity(text: str) -> IrqAffinity:
    """IRQ number (as a string, like ``Interrupts.rows``) -> CPU ids.

    >>> parse_irq_affinity("/proc/irq/24/smp_affinity_list:0-1\\n25 3\\n").cpus
    {'24': [0, 1], '25': [3]}
    """
    out = IrqAffinity()
    skipped: list[int] = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip() and not _read_row(out, line, number):
            skipped.append(number)
    if not out.cpus and not out.effective:
        raise ParseError("no '/proc/irq/N/smp_affinity_list:CPUS' or 'IRQ CPUS' lines")
    if len(skipped) > len(out.cpus) + len(out.effective):
        raise ParseError(
            f"not IRQ affinities: {len(skipped)} of {len(skipped) + len(out.cpus)} lines are not"
        )
    out.errors += skipped_lines("irq affinity", "'IRQ CPUS'", skipped)
    return out


def _read_row(out: IrqAffinity, line: str, number: int) -> bool:
    """A ``/proc/irq/N/<file>:CPUS`` line (grep's) or an ``IRQ CPUS`` one (a
    shell loop's) into ``out``; False when the line is neither."""
    m = _PATH_ROW.match(line)
    if m:
        irq, name, kind, value = m.groups()
        if not value:
            return False
        try:
            cpus = _cpus(value, mask=not kind.endswith("_list"))
        except ValueError:
            return False
        target = out.effective if kind.startswith("effective") else out.cpus
        target[irq] = cpus
        if name:
            out.names[irq] = name
        out.lines[irq if target is out.cpus else f"effective[{irq}]"] = number
        return True
    m = _LOOP_ROW.match(line)
    if not m:
        return False
    irq, value = m.groups()
    try:
        out.cpus[irq] = _cpus(value, mask=bool(_MASK.match(value)))
    except ValueError:
        return False
    out.lines[irq] = number
    return True
