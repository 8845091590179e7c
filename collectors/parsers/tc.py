"""Traffic-control queueing disciplines: ``tc qdisc show``, ``tc -s qdisc show`` and
``tc -j qdisc show``.

Text form (``-s`` adds indented statistics lines under each qdisc)::

    qdisc mq 0: dev eth0 root
    qdisc netem 8004: dev bond0 root refcnt 17 limit 1000 delay 1.0ms
    qdisc netem 8005: dev eth1 parent 1:1 limit 1000 delay 100ms  10ms loss 0.5%
    qdisc tbf 8001: root refcnt 2 rate 1Mbit burst 4Kb lat 400ms     (tc qdisc show dev lo)
     Sent 312925 bytes 2595 pkt (dropped 0, overlimits 0 requeues 0)

JSON form: a list of ``{"kind", "handle", "dev", "root"|"parent", "options"}``; netem's
``options.delay`` is ``{"delay": seconds, "jitter": seconds, ...}`` and loss is
``options["loss-random"]["loss"]`` as a fraction (iproute2 ``q_netem.c``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from collectors.facts import ArtifactError, ParseError, Qdisc, TcQdiscs
from collectors.parsers import register

_QDISC = re.compile(r"^qdisc\s+(?P<kind>\S+)\s+(?P<handle>\S+:\S*)\s+(?P<rest>.*)$")
_DETECT = re.compile(
    r"^qdisc\s+\S+\s+[0-9a-f]+:[0-9a-f]*\s+(?:dev\s+\S+|root\b|parent\s+[0-9a-f]*:[0-9a-f]*|ingress\b)", re.M
)
# options that take a value: a line ending in one of them was cut
_VALUED = frozenset(
    {"dev", "parent", "refcnt", "limit", "delay", "loss", "rate", "duplicate", "corrupt", "reorder"}
)
_TIME = re.compile(r"^(?P<num>\d+(?:\.\d+)?)(?P<unit>s|sec|secs|ms|msec|msecs|us|usec|usecs|µs|ns|nsec)?$")
_TO_MS = {
    None: 1e-3,  # tc prints bare numbers in microseconds
    "s": 1e3,
    "sec": 1e3,
    "secs": 1e3,
    "ms": 1.0,
    "msec": 1.0,
    "msecs": 1.0,
    "us": 1e-3,
    "usec": 1e-3,
    "usecs": 1e-3,
    "µs": 1e-3,
    "ns": 1e-6,
    "nsec": 1e-6,
}


def time_to_ms(token: str) -> float | None:
    """``1.0ms`` -> 1.0, ``100us`` -> 0.1, ``1s`` -> 1000.0; None when not a time."""
    m = _TIME.match(token)
    if not m:
        return None
    return round(float(m.group("num")) * _TO_MS[m.group("unit")], 6)


def _read_device(q: Qdisc, tokens: list[str], value: int, number: int) -> int:
    q.device = tokens[value]
    return value + 1


def _read_parent(q: Qdisc, tokens: list[str], value: int, number: int) -> int:
    q.parent = tokens[value]
    return value + 1


def _read_delay(q: Qdisc, tokens: list[str], value: int, number: int) -> int:
    """``delay 100ms`` with an optional jitter (and correlation percentage) after it."""
    q.delay_ms = time_to_ms(tokens[value])
    after = value + 1
    if after < len(tokens) and time_to_ms(tokens[after]) is not None:
        q.jitter_ms = time_to_ms(tokens[after])
        after += 1
    return after


def _read_loss(q: Qdisc, tokens: list[str], value: int, number: int) -> int:
    """``loss 0.5%`` or ``loss random 0.5%``."""
    if tokens[value] == "random" and value + 1 < len(tokens):
        value += 1
    try:
        q.loss_pct = float(tokens[value].rstrip("%"))
    except ValueError:
        raise ParseError(f"bad netem loss {tokens[value]!r}", line=number) from None
    return value + 1


# an option of a qdisc line -> (its reader, whether only netem has it); a reader gets the
# index of the option's value and returns the index of the token after what it read
_OPTIONS: dict[str, tuple[Callable[[Qdisc, list[str], int, int], int], bool]] = {
    "dev": (_read_device, False),
    "parent": (_read_parent, False),
    "delay": (_read_delay, True),
    "loss": (_read_loss, True),
}


def _parse_text_line(line: str, number: int) -> Qdisc:
    m = _QDISC.match(line.strip())
    if not m:
        raise ParseError(f"not a qdisc line: {line.strip()[:80]!r}", line=number)
    tokens = m.group("rest").split()
    q = Qdisc(kind=m.group("kind"), device="", handle=m.group("handle"), raw=line.strip(), line=number)
    i = 0
    while i < len(tokens):
        if tokens[i] == "root":
            q.parent = "root"
        option = _OPTIONS.get(tokens[i])
        if option and i + 1 < len(tokens) and (q.kind == "netem" or not option[1]):
            i = option[0](q, tokens, i + 1, number)
        else:
            i += 1
    # "tc qdisc show dev eth0" leaves "dev eth0" out of every line: device stays ""
    # (unknown here; the caller knows it from the command)
    return q


def _seconds_field(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return round(float(value) * 1000.0, 6)


def _netem_from_json(q: Qdisc, options: dict[str, Any]) -> None:
    """netem's delay, jitter and loss from ``options``."""
    delay = options.get("delay")
    if isinstance(delay, dict):
        q.delay_ms = _seconds_field(delay.get("delay"))
        q.jitter_ms = _seconds_field(delay.get("jitter")) or None
    else:
        q.delay_ms = _seconds_field(delay)
    loss = options.get("loss-random")
    if isinstance(loss, dict) and isinstance(loss.get("loss"), int | float):
        q.loss_pct = round(float(loss["loss"]) * 100.0, 6)


def _qdisc_from_json(index: int, item: Any) -> Qdisc:
    if (
        not isinstance(item, dict)
        or not isinstance(item.get("kind"), str)
        or not isinstance(item.get("dev"), str)
    ):
        raise ParseError(f"qdisc entry {index} has no kind/dev")
    handle = item.get("handle")
    parent = "root" if item.get("root") is True else item.get("parent")
    q = Qdisc(
        kind=item["kind"],
        device=item["dev"],
        handle=handle if isinstance(handle, str) else None,
        parent=parent if isinstance(parent, str) else None,
        raw=json.dumps(item, sort_keys=True)[:500],
    )
    options = item.get("options")
    if q.kind == "netem" and isinstance(options, dict):
        _netem_from_json(q, options)
    return q


def _parse_json(text: str) -> TcQdiscs:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"malformed tc JSON: {exc}") from None
    if not isinstance(data, list):
        raise ParseError("tc -j output is a JSON list of qdiscs")
    out = TcQdiscs()
    for index, item in enumerate(data):
        out.qdiscs.append(_qdisc_from_json(index, item))
        out.lines[f"qdiscs[{index}]"] = 1
    return out


@register(
    "tc_qdisc",
    commands=(r"^tc\s+(-\S+\s+)*qdisc(\s+(show|list|ls))?\b",),
    paths=(r"sos_commands/networking/tc_-s_qdisc_show$", r"(^|/)tc_qdisc[^/]*$"),
    # "tc qdisc show dev eth0" prints no "dev": its lines start "root" or "parent"
    detect=lambda head: bool("qdisc" in head and _DETECT.search(head)),
    priority=10,
)
def parse_tc_qdisc(text: str) -> TcQdiscs:
    """Qdiscs per device, with netem delay/jitter/loss.

    >>> q = parse_tc_qdisc("qdisc netem 8004: dev bond0 root refcnt 17 limit 1000 delay 1.0ms").qdiscs[0]
    >>> (q.kind, q.device, q.parent, q.delay_ms)
    ('netem', 'bond0', 'root', 1.0)
    """
    stripped = text.strip()
    if stripped.startswith("["):
        return _parse_json(stripped)
    out = TcQdiscs()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.startswith("qdisc"):
            # -s statistics, blank lines and the shell's own lines belong to no qdisc
            continue
        q = _parse_text_line(line, number)
        tokens = line.split()
        if tokens[-1] in _VALUED:
            # "qdisc netem 8003: root refcnt" (a paste cut mid-line): its options are unknown
            out.errors.append(
                ArtifactError("", f"qdisc line cut before its options end: {line.strip()[:80]!r}", number)
            )
        out.lines[f"qdiscs[{len(out.qdiscs)}]"] = number
        out.qdiscs.append(q)
    if not out.qdiscs and stripped:
        raise ParseError("no 'qdisc <kind> <handle> dev <device>' lines")
    return out
