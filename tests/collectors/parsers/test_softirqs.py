"""/proc/softirqs parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.facts import ParseError
from collectors.parsers.softirqs import parse_softirqs
from tests.collectors.parsers.lookup import detect, for_path


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


# lzh2nix/articles#34 (2020-05-31): 8 CPUs, the stored excerpt cut inside TASKLET
CUT_TASKLET = """        CPU0       CPU1       CPU2       CPU3       CPU4       CPU5       CPU6       CPU7
          HI:       2122       1218       1226       1272       1253       1285     884591       1311
      NET_RX:      22882      20528      17850      17211      17574     464428      27584      23753
     TASKLET:       3375         43         27         22         12        776
"""


def test_a_row_cut_mid_paste_is_left_out_and_reported():
    out = parse_softirqs(CUT_TASKLET)
    assert sorted(out.rows) == ["HI", "NET_RX"]
    assert out.rows["NET_RX"][5] == 464428
    assert [(e.line, e.message) for e in out.errors] == [(4, "row TASKLET cut: 6 of 8 CPUs")]
