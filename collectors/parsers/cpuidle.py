"""The cpuidle sysfs files of a CPU as engineers print them, several at once
(``/sys/devices/system/cpu/cpu<N>/cpuidle/state<M>/{name,latency,disable}``)
-> :class:`CpuPower` (``idle_states``, the facts ``cpupower idle-info`` gives).

Two printed forms::

    $ grep . /sys/devices/system/cpu/cpu0/cpuidle/state*/*
    /sys/devices/system/cpu/cpu0/cpuidle/state3/disable:1
    /sys/devices/system/cpu/cpu0/cpuidle/state3/latency:170
    /sys/devices/system/cpu/cpu0/cpuidle/state3/name:C6

    $ tail -n +1 /sys/devices/system/cpu/cpu0/cpuidle/state*/name
    ==> /sys/devices/system/cpu/cpu0/cpuidle/state0/name <==
    POLL

The states are those of the first CPU shown (idle states are set for the
whole host, as ``cpupower idle-info`` analyses one CPU), in state order
whatever order the lines come in. ``/sys/devices/system/cpu/cpuidle/current_driver``
gives the idle driver. ``lines`` keys: ``idle_driver``, ``idle_state.<M>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from collectors.facts import CpuPower, IdleState, ParseError
from collectors.parsers import register

_PATH = (
    r"/sys/devices/system/cpu/(?:cpu(?P<cpu>\d{1,5})/cpuidle/state(?P<state>\d{1,3})/(?P<file>\w{1,32})"
    r"|cpuidle/(?P<driver>current_driver))"
)
# "path:value" (grep .), "path value" (a loop), or "==> path <==" (tail/head) with the value below
_INLINE = re.compile(rf"^\s*{_PATH}\s*[:\s]\s*(?P<value>\S[^\n]*?)\s*$")
_HEADER = re.compile(rf"^\s*(?:==>\s*)?{_PATH}(?:\s*<==)?\s*:?\s*$")
_STATE_LINE = re.compile(r"^\s*(?:==>\s*)?/sys/devices/system/cpu/cpu\d{1,5}/cpuidle/state\d", re.M)
DETECT_MIN_LINES = 2  # lines of state files in a head before it is taken for this dump


@dataclass
class _State:
    name: str | None = None
    latency_us: int | None = None
    disabled: bool = False
    line: int | None = None


@dataclass
class _Reader:
    """The states of the first CPU shown, filled file by file."""

    cpu: str | None = None
    states: dict[int, _State] = field(default_factory=dict)
    driver: tuple[str, int] | None = None

    def read(self, m: re.Match[str], value: str, number: int) -> None:
        if m.group("driver"):
            self.driver = (value.strip(), number)
            return
        self.cpu = self.cpu or m.group("cpu")
        if m.group("cpu") != self.cpu:
            return
        state = self.states.setdefault(int(m.group("state")), _State())
        _set_state_file(state, m.group("file"), value.strip(), number)

    def result(self) -> CpuPower:
        out = CpuPower()
        for index in sorted(self.states):
            state = self.states[index]
            if state.name is not None:
                out.idle_states.append(IdleState(state.name, state.latency_us, state.disabled, state.line))
                out.lines[f"idle_state.{index}"] = state.line or 0
        if self.driver is not None:
            out.idle_driver, out.lines["idle_driver"] = self.driver
        return out


def _set_state_file(state: _State, name: str, value: str, number: int) -> None:
    """Take the value of a state's ``name``, ``latency`` or ``disable`` file (a malformed one is passed)."""
    if name == "name" and value:
        state.name, state.line = value, number
    elif name == "latency" and value.isdigit():
        state.latency_us = int(value)
    elif name == "disable" and value in ("0", "1"):
        state.disabled = value == "1"


def _detect(head: str) -> bool:
    return len(_STATE_LINE.findall(head)) >= DETECT_MIN_LINES


@register(
    "cpuidle_sysfs",
    commands=(r"/sys/devices/system/cpu/cpu[\d*?\[\]]*/cpuidle/",),
    detect=_detect,
    needles=("/cpuidle/state",),
    priority=5,
)
def parse_cpuidle_sysfs(text: str) -> CpuPower:
    """``grep . /sys/devices/system/cpu/cpu0/cpuidle/state*/*`` (or ``tail -n +1``,
    or a loop) -> the idle states of the first CPU shown.

    Sample input::

        /sys/devices/system/cpu/cpu0/cpuidle/state1/disable:0
        /sys/devices/system/cpu/cpu0/cpuidle/state1/latency:1
        /sys/devices/system/cpu/cpu0/cpuidle/state1/name:C1
    """
    reader = _Reader()
    pending: re.Match[str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        m = _INLINE.match(line)
        if m is not None:
            reader.read(m, m.group("value"), number)
            pending = None
            continue
        m = _HEADER.match(line)
        if m is not None:
            pending = m
        elif pending is not None:
            reader.read(pending, line, number)
            pending = None
    out = reader.result()
    if not out.idle_states:
        raise ParseError("no /sys/devices/system/cpu/cpu<N>/cpuidle/state<M>/name found")
    return out
