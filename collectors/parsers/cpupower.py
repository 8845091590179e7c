"""``cpupower frequency-info`` / ``cpufreq-info`` and ``cpupower idle-info``
-> :class:`CpuPower`.

Sample input (``cpupower frequency-info``)::

    analyzing CPU 0:
      driver: intel_pstate
      available cpufreq governors: performance powersave
      current policy: frequency should be within 1.20 GHz and 3.10 GHz.
                      The governor "powersave" may decide which speed to use
                      within this range.

Sample input (``cpupower idle-info``)::

    CPUidle driver: intel_idle
    CPUidle governor: menu
    analyzing CPU 0:

    Number of idle states: 4
    Available idle states: POLL C1 C1E C6
    C6 (DISABLED) :
    Flags/Description: MWAIT 0x20
    Latency: 190

``cpufreq-info`` (cpufrequtils, the tool before cpupower) prints the same
lines under its banner, with lines of its own that read like prose::

    cpufrequtils 007: cpufreq-info (C) Dominik Brodowski 2004-2009
    Report errors and bugs to cpufreq@vger.kernel.org, please.
    analyzing CPU 0:
      driver: acpi-cpufreq
      current policy: frequency should be within 2.00 GHz and 2.20 GHz.
                      The governor "performance" may decide which speed to use
                      within this range.
      current CPU frequency is 1.20 GHz (asserted by call to hardware).
      cpufreq stats: 2.20 GHz:6.50%, 2.10 GHz:0.34%, 1.20 GHz:92.66%  (8080636)

One report may hold several ``analyzing CPU n:`` blocks (``-c all``): each
CPU's governor is kept (``cpu<n>``). ``lines`` keys: ``driver``,
``governor.cpu<n>``, ``idle_driver``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from collectors.facts import CpuPower, IdleState, ParseError
from collectors.parsers import register

_ANALYZING = re.compile(r"^\s*analyzing CPU (\d{1,5}):")
_DRIVER = re.compile(r"^\s*driver:\s*(\S+)")
_GOVERNOR = re.compile(r'The governor "(\w+)" may decide')
_IDLE_DRIVER = re.compile(r"^\s*CPUidle driver:\s*(\S+)")
_STATE = re.compile(r"^\s*([A-Z][\w\-]{0,15})(\s*\(DISABLED\))?\s*:\s*$")
# lines only cpupower prints: a report that shows none of the facts above is still its output
_MARKER = re.compile(
    r"^\s*(analyzing CPU \d+:|hardware limits:|available cpufreq governors:|current policy:|"
    r"maximum transition latency:|CPUs which (run|need))",
    re.M,
)
# cpufrequtils' banner: its output without the command line starts there
_CPUFREQUTILS = re.compile(r"^\s*cpufrequtils \d{1,4}: cpufreq-info \(C\)", re.M)
_LATENCY = re.compile(r"^\s*Latency:\s*(\d{1,9})\s*$")
# idle-info's two summary lines: what a paste that starts below the driver lines still shows
_IDLE_SUMMARY = re.compile(r"^\s*Number of idle states: \d{1,3}\s*\n\s*Available idle states:", re.M)


def _detect(head: str) -> bool:
    return bool(
        _GOVERNOR.search(head)
        or _CPUFREQUTILS.search(head)
        or (_IDLE_DRIVER.search(head) and "Available idle states" in head)
        or _IDLE_SUMMARY.search(head)
    )


def _read_driver(out: CpuPower, line: str, number: int, cpu: str) -> bool:
    m = _DRIVER.match(line)
    if m is None or out.driver is not None or line.lstrip().startswith("CPUidle"):
        return False
    out.driver = m.group(1)
    out.lines["driver"] = number
    return True


def _read_governor(out: CpuPower, line: str, number: int, cpu: str) -> bool:
    m = _GOVERNOR.search(line)
    if m is None:
        return False
    out.governors[cpu] = m.group(1)
    out.lines[f"governor.{cpu}"] = number
    return True


def _read_idle_driver(out: CpuPower, line: str, number: int, cpu: str) -> bool:
    m = _IDLE_DRIVER.match(line)
    if m is None:
        return False
    out.idle_driver = m.group(1)
    out.lines["idle_driver"] = number
    return True


def _read_idle_state(out: CpuPower, line: str, number: int, cpu: str) -> bool:
    m = _STATE.match(line)
    if m is None or line.strip().startswith(("analyzing", "Available", "Number")):
        return False
    out.idle_states.append(IdleState(name=m.group(1), disabled=bool(m.group(2)), line=number))
    return True


def _read_latency(out: CpuPower, line: str, number: int, cpu: str) -> bool:
    """The latency of the idle state above."""
    m = _LATENCY.match(line)
    if m is None or not out.idle_states or out.idle_states[-1].latency_us is not None:
        return False
    out.idle_states[-1].latency_us = int(m.group(1))
    return True


# what a line of cpupower may be, tried in order until one reads it
_LINE_READERS: tuple[Callable[[CpuPower, str, int, str], bool], ...] = (
    _read_driver,
    _read_governor,
    _read_idle_driver,
    _read_idle_state,
    _read_latency,
)


def _read_line(out: CpuPower, line: str, number: int, cpu: str) -> None:
    """The first of ``_LINE_READERS`` that takes the line reads it."""
    for read in _LINE_READERS:
        if read(out, line, number, cpu):
            return


def _read_anything(out: CpuPower) -> bool:
    return any((out.governors, out.driver, out.idle_states, out.idle_driver))


@register(
    "cpupower",
    commands=(r"^(cpupower\s+(-c\s+\S+\s+)?(frequency-info|idle-info)|cpufreq-info)\b",),
    paths=(r"sos_commands/processor/cpupower_(frequency|idle)-info\w*$",),
    detect=_detect,
    needles=('The governor "', "Available idle states", "cpufrequtils "),
    priority=5,
    # the state headers ("POLL:", "C6 (DISABLED) :", "C1E-SKX:", ARM's "WFI:") and section
    # lines read like prose; only an idle state's name (never "Before:" or "Summary:" over a
    # post's code block)
    prose_lines=(
        r"(?:POLL|HLT|WFI|MWAIT|C\d{1,2}[\w\-]{0,12})(\s*\(DISABLED\))?\s*:",
        r"analyzing CPU \d{1,5}:",
        r"boost state support:",
        r"within this range\.",
        # cpufreq-info's banner, its address line and the policy's sentences
        r"cpufrequtils \d{1,4}: cpufreq-info \(C\) [A-Z][\w .\-]{0,60}",
        r"Report errors and bugs to [^\s,]{1,200}(?: [^\s,]{1,200}){0,2}, please\.",
        r"current policy: frequency should be within \d{1,5}(?:\.\d{1,3})? [kMG]Hz"
        r" and \d{1,5}(?:\.\d{1,3})? [kMG]Hz\.",
        r'The governor "\w{1,40}" may decide which speed to use(?: within this range\.?)?',
        r"current CPU frequency is \d{1,5}(?:\.\d{1,3})? [kMG]Hz(?: \(asserted by call to hardware\))?\.",
    ),
)
def parse_cpupower(text: str) -> CpuPower:
    """Parse ``cpupower frequency-info`` and/or ``cpupower idle-info``.

    Sample input::

        analyzing CPU 0:
          driver: acpi-cpufreq
          current policy: frequency should be within 1.20 GHz and 2.60 GHz.
                          The governor "ondemand" may decide which speed to use
    """
    out = CpuPower()
    cpu = "cpu0"
    seen_idle_cpu = False
    for number, line in enumerate(text.splitlines(), start=1):
        m = _ANALYZING.match(line)
        if m:
            cpu = f"cpu{m.group(1)}"
            if out.idle_driver is not None:
                # idle-info analyses one CPU: its states stand for the host's
                if seen_idle_cpu:
                    break
                seen_idle_cpu = True
            continue
        _read_line(out, line, number, cpu)
    if not (_read_anything(out) or _MARKER.search(text)):
        raise ParseError("no cpupower frequency-info or idle-info lines found")
    return out
