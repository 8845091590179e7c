"""The cpuidle sysfs dump (``grep . .../cpuidle/state*/*``): this machine's
(a KVM guest with the haltpoll driver, captured into
``tests/fixtures/published/roundg/``) and a published one of an Amazon host
(SAP/arp142-hana issue 383, round G 1130)."""

from __future__ import annotations

import pytest

from collectors.facts import ParseError
from collectors.parsers.cpuidle import parse_cpuidle_sysfs
from collectors.transcript import detect_kind
from tests.conftest import FIXTURES

ROUND_G = FIXTURES / "published" / "roundg"


def test_this_machines_grep_of_every_state_file():
    text = (ROUND_G / "this-machine-kvm-guest-cpuidle-grep.txt").read_text()
    out = parse_cpuidle_sysfs(text)
    assert [(s.name, s.latency_us, s.disabled) for s in out.idle_states] == [
        ("POLL", 0, False),
        ("haltpoll idle", 1, False),
    ]
    assert out.idle_driver == "haltpoll"
    assert out.idle_states[0].line == 7  # state0/name
    assert detect_kind(text) == "cpuidle_sysfs"


def test_states_listed_out_of_order_come_in_state_order_with_the_disabled_one():
    text = (ROUND_G / "arp142-383-cpuidle-sysfs-idle-info-cut.txt").read_text().split("\n\n")[0]
    out = parse_cpuidle_sysfs(text)
    assert [(s.name, s.latency_us, s.disabled) for s in out.idle_states] == [
        ("POLL", 0, False),
        ("C1", 1, False),
        ("C1E", 4, False),
        ("C6", 170, True),
    ]


def test_tail_headers_and_a_second_cpu():
    """``tail -n +1`` of the same files: the value under its ``==> path <==``
    header; a second CPU's lines do not add states."""
    lines = (ROUND_G / "this-machine-kvm-guest-cpuidle-grep.txt").read_text().splitlines()
    tailed = []
    for line in lines:
        path, value = line.split(":", 1)
        tailed += [f"==> {path} <==", value, ""]
    tailed += [line.replace("/cpu0/", "/cpu1/") for line in lines if "/cpu0/" in line]
    out = parse_cpuidle_sysfs("\n".join(tailed))
    assert [s.name for s in out.idle_states] == ["POLL", "haltpoll idle"]


def test_garbage_raises_parse_error():
    with pytest.raises(ParseError):
        parse_cpuidle_sysfs("/sys/devices/system/cpu/cpu0/cpuidle/state0/usage:0\nhello")
