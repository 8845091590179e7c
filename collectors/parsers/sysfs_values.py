"""Small sysfs files as engineers print them, several at once: kernel
same-page merging (``/sys/kernel/mm/ksm/*`` -> :class:`KsmState`), the block
devices' I/O schedulers (``/sys/block/*/queue/scheduler`` and ``rotational``
-> :class:`IoSchedulers`) and the CPUs' frequency governors
(``/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor`` -> :class:`CpuPower`).

Three printed forms, the same for each family::

    $ grep . /sys/kernel/mm/ksm/*
    /sys/kernel/mm/ksm/pages_sharing:0
    /sys/kernel/mm/ksm/run:1

    $ tail -n +1 /sys/block/*/queue/scheduler
    ==> /sys/block/sda/queue/scheduler <==
    noop deadline [cfq]

    $ for f in /sys/block/*/queue/scheduler; do echo "$f $(cat $f)"; done
    /sys/block/nvme0n1/queue/scheduler [none] mq-deadline kyber bfq

A copy of one file in an archive (``sys/kernel/mm/ksm/run``,
``sys/block/sda/queue/scheduler``) holds the value alone; its path names it.
pt-summary's "Disk Schedulers And Queue Size" section (``  sda | [cfq] 128``)
is read too, and the raw ``summary`` file's ``internal::sda    [cfq] 128`` rows
it is printed from (:mod:`collectors.parsers.pt_summary`). ``lines`` keys:
``ksm.<file>``, ``scheduler.<device>``, ``governor.<cpu>``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from collectors.facts import CpuPower, IoSchedulers, KsmState, ParseError
from collectors.parsers import register

_KSM_FILES = (
    "run",
    "pages_shared",
    "pages_sharing",
    "pages_unshared",
    "pages_volatile",
    "full_scans",
    "merge_across_nodes",
    "pages_to_scan",
    "sleep_millisecs",
    "max_page_sharing",
    "use_zero_pages",
    "stable_node_chains",
    "stable_node_dups",
    "general_profit",
)
_PATH = (
    r"/sys/(?:kernel/mm/ksm/(?P<ksm>\w+)"
    r"|block/(?P<dev>[\w.\-]+)/queue/(?P<queue>scheduler|rotational)"
    r"|devices/system/cpu/(?P<cpu>cpu\d{1,5}|cpufreq/policy\d{1,5})/(?:cpufreq/)?scaling_governor)"
)
# "path:value" (grep .), "path value" (a loop), or "==> path <==" (tail/head) then the value
_INLINE = re.compile(rf"^\s*{_PATH}\s*[:\s]\s*(?P<value>\S[^\n]*?)\s*$")
_HEADER = re.compile(rf"^\s*(?:==>\s*)?{_PATH}(?:\s*<==)?\s*:?\s*$")
_PT_SUMMARY_ROW = re.compile(
    r"^\s{0,16}(?P<dev>[a-z][\w\-]{0,31})\s+\|\s+(?P<value>\S.*?)\s*(?P<depth>\d+)?\s*$"
)
_SCHEDULER_VALUE = re.compile(r"^(?:[\w\-]+\s+)*\[[\w\-]+\](?:\s+[\w\-]+)*$|^none$")
_GOVERNORS = ("performance", "powersave", "ondemand", "conservative", "schedutil", "userspace")


def _which(m: re.Match[str]) -> tuple[str, str]:
    """(family, key) named by a matched sysfs path."""
    if m.group("ksm"):
        return "ksm", m.group("ksm")
    if m.group("dev"):
        return m.group("queue"), m.group("dev")
    return "governor", m.group("cpu").replace("cpufreq/", "")


def _rows(text: str) -> list[tuple[str, str, str, int]]:
    """(family, key, value, line) of every file the text shows."""
    rows: list[tuple[str, str, str, int]] = []
    pending: tuple[str, str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        m = _INLINE.match(line)
        if m is not None:
            rows.append((*_which(m), m.group("value"), number))
            pending = None
            continue
        m = _HEADER.match(line)
        if m is not None:
            pending = _which(m)
            continue
        if pending is not None:
            rows.append((*pending, line.strip(), number))
            pending = None
    return rows


def _selected(value: str) -> tuple[str | None, list[str]]:
    """``noop deadline [cfq]`` -> ("cfq", ["noop", "deadline", "cfq"]); ``none`` alone is selected."""
    names = [t.strip("[]") for t in value.split()]
    chosen = re.search(r"\[([\w\-]+)\]", value)
    if chosen:
        return chosen.group(1), names
    return (names[0], names) if len(names) == 1 else (None, names)


def _to_int(value: str) -> int | None:
    return int(value) if re.fullmatch(r"-?\d{1,20}", value) else None


def _ksm(rows: list[tuple[str, str, str, int]]) -> KsmState:
    out = KsmState()
    for family, key, value, number in rows:
        number_value = _to_int(value)
        if family == "ksm" and number_value is not None:
            out.values[key] = number_value
            out.lines[f"ksm.{key}"] = number
    return out


def _schedulers(rows: list[tuple[str, str, str, int]]) -> IoSchedulers:
    out = IoSchedulers()
    for family, key, value, number in rows:
        if family == "scheduler":
            _add_scheduler(out, key, value, number)
        elif family == "rotational" and value in ("0", "1"):
            out.rotational[key] = value == "1"
            out.lines[f"rotational.{key}"] = number
    return out


def _add_scheduler(out: IoSchedulers, device: str, value: str, number: int) -> None:
    """``device``'s scheduler line (``noop deadline [cfq]``) added, when one is selected."""
    chosen, names = _selected(value)
    if chosen:
        out.active[device] = chosen
        out.available[device] = names
        out.lines[f"scheduler.{device}"] = number


def _governors(rows: list[tuple[str, str, str, int]]) -> CpuPower:
    out = CpuPower()
    for family, key, value, number in rows:
        if family == "governor" and value in _GOVERNORS:
            out.governors[key] = value
            out.lines[f"governor.{key}"] = number
    return out


def _detect(family: str) -> Callable[[str], bool]:
    pattern = {
        "ksm": r"/sys/kernel/mm/ksm/\w+",
        "scheduler": r"/sys/block/[\w.\-]+/queue/scheduler",
        "governor": r"/sys/devices/system/cpu/\S+scaling_governor",
    }[family]
    return lambda head: (
        len(re.findall(rf"^\s*(?:==>\s*)?{pattern}", head, re.M)) >= 1
        and any(r[0] == family for r in _rows(head[:4096]))
    )


@register(
    "ksm",
    commands=(r"/sys/kernel/mm/ksm/(\*|\s|$)",),
    detect=_detect("ksm"),
    needles=("/sys/kernel/mm/ksm/",),
    priority=5,
)
def parse_ksm(text: str) -> KsmState:
    """``grep . /sys/kernel/mm/ksm/*`` (or ``tail -n +1``, or a loop).

    Sample input::

        /sys/kernel/mm/ksm/merge_across_nodes:1
        /sys/kernel/mm/ksm/pages_sharing:0
        /sys/kernel/mm/ksm/run:1
    """
    out = _ksm(_rows(text))
    if not out.values:
        raise ParseError("no /sys/kernel/mm/ksm/<file> values found")
    return out


def _ksm_file(name: str) -> Callable[[str], KsmState]:
    def parse(text: str) -> KsmState:
        value = _to_int(text.strip())
        if value is None:
            raise ParseError(f"/sys/kernel/mm/ksm/{name}: not a number: {text.strip()[:40]!r}")
        return KsmState(values={name: value}, lines={f"ksm.{name}": 1})

    parse.__doc__ = f"""``/sys/kernel/mm/ksm/{name}`` alone: one number, e.g. ``1``."""
    return parse


for _name in _KSM_FILES:
    register(
        f"ksm_{_name}",
        commands=(rf"^cat\s+/sys/kernel/mm/ksm/{_name}\s*$",),
        paths=(rf"(^|/)sys/kernel/mm/ksm/{_name}$",),
    )(_ksm_file(_name))


# pt-summary's raw "summary" file: "internal::sda    [cfq] 128" (scheduler, then
# the queue's nr_requests); a device without a scheduler ("internal::dm-0     128") has none
_PT_INTERNAL_ROW = re.compile(
    r"^internal::(?P<dev>[a-z][\w\-]{0,31})[ \t]+(?P<value>\S.*?)[ \t]+\d{1,6}[ \t]*$"
)


def pt_summary_internal_schedulers(text: str) -> IoSchedulers:
    """The schedulers of pt-summary's raw ``summary`` file (what its report's
    "Disk Schedulers And Queue Size" section prints from).

    >>> pt_summary_internal_schedulers("internal::disks    dm-0 hda\\ninternal::dm-0     128\\n"
    ...     "internal::hda    [cfq] 128").active
    {'hda': 'cfq'}
    """
    out = IoSchedulers()
    for number, line in enumerate(text.splitlines(), start=1):
        m = _PT_INTERNAL_ROW.match(line) if line.startswith("internal::") else None
        if m is not None and _SCHEDULER_VALUE.match(m["value"]):
            _add_scheduler(out, m["dev"], m["value"], number)
    return out


def _pt_summary_schedulers(text: str) -> IoSchedulers:
    """pt-summary's section, its ``# Disk Schedulers ...`` line included or not
    (the section's rows alone when the line named them)."""
    out = IoSchedulers()
    inside = not text.lstrip().startswith("#")
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("#"):
            inside = "Disk Schedulers" in line
            continue
        m = _PT_SUMMARY_ROW.match(line) if inside else None
        if m is not None and _SCHEDULER_VALUE.match(m["value"]):
            _add_scheduler(out, m["dev"], m["value"], number)
    return out


_CARET_LINE = re.compile(r"^[ \t]*[\^~]{2,}[ \t]*$\n?", re.M)


@register(
    "io_scheduler",
    commands=(r"/sys/block/\S*queue/(scheduler|rotational)", r'^pt-summary section "Disk Schedulers'),
    detect=lambda head: _detect("scheduler")(head) or "# Disk Schedulers And Queue Size" in head,
    needles=("/queue/scheduler", "# Disk Schedulers And Queue Size"),
    priority=5,
)
def parse_io_scheduler(text: str, *, device: str | None = None) -> IoSchedulers:
    """``grep . /sys/block/*/queue/scheduler`` (or ``tail -n +1``, a loop,
    pt-summary's section); ``device`` names the device of a lone value (an
    archive's ``sys/block/<device>/queue/scheduler``).

    Sample input::

        /sys/block/sda/queue/scheduler:noop deadline [cfq]
        /sys/block/nvme0n1/queue/scheduler:[none] mq-deadline kyber bfq
    """
    if device is not None:
        # an author's marks under the selected one ("^^^^^") are not the file's
        text = _CARET_LINE.sub("", text)
        chosen, names = _selected(text.strip())
        if chosen is None or not _SCHEDULER_VALUE.match(text.strip()):
            raise ParseError(f"/sys/block/{device}/queue/scheduler: no selected scheduler")
        return IoSchedulers(
            active={device: chosen}, available={device: names}, lines={f"scheduler.{device}": 1}
        )
    out = _schedulers(_rows(text))
    if not out.active:
        out = _pt_summary_schedulers(text)
    if not out.active:
        raise ParseError("no /sys/block/<device>/queue/scheduler value found")
    return out


# an author's elision of output lines: ":", "...", "…" (readk)
_ELIDED = re.compile(r":|\.{2,}|…|⋮")


@register(
    "scaling_governor",
    commands=(r"scaling_governor",),
    paths=(r"(^|/)sys/devices/system/cpu/cpu\d+/cpufreq/scaling_governor$",),
    detect=_detect("governor"),
    needles=("scaling_governor",),
    priority=5,
)
def parse_scaling_governor(text: str) -> CpuPower:
    """``grep . /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor``, or a
    ``cat`` of them (one governor a line, the CPUs in glob order unknown:
    named ``cpu?N`` by position).

    Sample input::

        /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor:powersave
        /sys/devices/system/cpu/cpu1/cpufreq/scaling_governor:powersave

    A ``cat`` of them with lines an author elided (``:``) keeps the governors shown:

    >>> sorted(parse_scaling_governor("powersave\\n:\\npowersave").governors.values())
    ['powersave', 'powersave']
    """
    out = _governors(_rows(text))
    if out.governors:
        return out
    values = [
        (n, line.strip())
        for n, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not _ELIDED.fullmatch(line.strip())
    ]
    if values and all(v in _GOVERNORS for _n, v in values):
        for position, (number, value) in enumerate(values):
            out.governors[f"cpu?{position}"] = value
            out.lines[f"governor.cpu?{position}"] = number
        return out
    raise ParseError("no scaling_governor value found")
