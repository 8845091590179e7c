"""/proc/softirqs parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.facts import ParseError
from collectors.parsers import detect, for_path
from collectors.parsers.softirqs import parse_softirqs


def test_corpus(corpus):
    soft = parse_softirqs((corpus / "softirqs" / "node_exporter_proc_softirqs.txt").read_text())
    assert soft.cpus == ["CPU0", "CPU1"]
    assert soft.rows["NET_RX"] == [43066, 104508]
    assert soft.lines["NET_RX"] == 5


def test_errors():
    with pytest.raises(ParseError):
        parse_softirqs("NET_RX: 1 2\n")


def test_registry(corpus):
    assert for_path("proc/softirqs").kind == "softirqs"
    assert detect((corpus / "softirqs" / "node_exporter_proc_softirqs.txt").read_text()).kind == "softirqs"


def test_this_machine():
    soft = parse_softirqs(Path("/proc/softirqs").read_text())
    assert {"TIMER", "NET_RX", "SCHED"} <= set(soft.rows)
    assert all(len(v) == len(soft.cpus) for v in soft.rows.values())
