"""tc qdisc parser: seed 004's netem line, this machine's qdiscs, and a scratch
network namespace where real qdiscs (netem when the kernel has it) are created."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from collectors.facts import ParseError
from collectors.parsers.tc import parse_tc_qdisc, time_to_ms
from tests.collectors.parsers.lookup import detect, for_command
from tests.conftest import SEEDS, service_unavailable


def run(*cmd: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=60, check=False)


def tc(*args: str) -> str:
    if shutil.which("tc") is None:
        service_unavailable("tc (iproute2) is not installed")
    proc = run("tc", *args)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture
def netns():
    """A scratch network namespace; needs root and ``ip netns``."""
    if shutil.which("ip") is None or os.geteuid() != 0:
        service_unavailable("creating a network namespace needs root and iproute2")
    name = f"cbtest{os.getpid()}"
    proc = run("ip", "netns", "add", name)
    if proc.returncode != 0:
        service_unavailable(f"ip netns add failed: {proc.stderr.strip()}")
    try:
        yield name
    finally:
        run("ip", "netns", "del", name)


def test_seed_004_netem_delay_on_bond0():
    seed = next(SEEDS.glob("004_*.txt"), None)
    if seed is None:
        service_unavailable("seed 004 missing")
    lines = seed.read_text(encoding="utf-8").splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.strip() == "$tc qdisc list")
    block = "\n".join(ln for ln in lines[start + 1 : start + 4])
    facts = parse_tc_qdisc(block)
    assert [(q.kind, q.device) for q in facts.qdiscs] == [("mq", "eth0"), ("mq", "eth1"), ("netem", "bond0")]
    netem = facts.qdiscs[2]
    assert (netem.handle, netem.parent, netem.delay_ms, netem.jitter_ms) == ("8004:", "root", 1.0, None)
    assert netem.line == 3 and facts.lines["qdiscs[2]"] == 3
    assert detect(block).kind == "tc_qdisc"
    assert for_command(lines[start].lstrip("$")).kind == "tc_qdisc"


@pytest.mark.parametrize("args", [("qdisc", "show"), ("-s", "qdisc", "show"), ("qdisc", "list")])
def test_this_machine_text(args):
    out = tc(*args)
    facts = parse_tc_qdisc(out)
    expected = [ln for ln in out.splitlines() if ln.startswith("qdisc ")]
    assert len(facts.qdiscs) == len(expected)
    assert all(q.device for q in facts.qdiscs)
    assert {q.device for q in facts.qdiscs} <= set(os.listdir("/sys/class/net"))


def test_this_machine_json_matches_text():
    as_json = parse_tc_qdisc(tc("-j", "qdisc", "show"))
    as_text = parse_tc_qdisc(tc("qdisc", "show"))
    key = [(q.kind, q.device, q.handle, q.parent) for q in as_text.qdiscs]
    assert [(q.kind, q.device, q.handle, q.parent) for q in as_json.qdiscs] == key


def test_namespace_tbf_qdisc_text_and_json(netns):
    proc = run("ip", "netns", "exec", netns, "tc", "qdisc", "add", "dev", "lo", "root", "tbf",
               "rate", "1mbit", "burst", "32kbit", "latency", "400ms")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    text = run("ip", "netns", "exec", netns, "tc", "-s", "qdisc", "show").stdout
    (q,) = parse_tc_qdisc(text).qdiscs
    assert (q.kind, q.device, q.parent, q.delay_ms) == ("tbf", "lo", "root", None)
    (qj,) = parse_tc_qdisc(run("ip", "netns", "exec", netns, "tc", "-j", "qdisc", "show").stdout).qdiscs
    assert (qj.kind, qj.device, qj.handle) == ("tbf", "lo", q.handle)
    # "show dev lo" omits the device from the line: parsed, with the device unknown
    (qd,) = parse_tc_qdisc(
        run("ip", "netns", "exec", netns, "tc", "qdisc", "show", "dev", "lo").stdout
    ).qdiscs
    assert (qd.kind, qd.device) == ("tbf", "")


# No test adds a real netem qdisc: these machines' kernels lack sch_netem ("Specified
# qdisc kind is unknown"), so it could only ever skip. netem text is covered by seed
# 004's line and the real sosreport fixtures, netem JSON by the iproute2 shape below.


def test_netem_json_shape_from_iproute2():
    # iproute2's q_netem.c prints delay/jitter in seconds and loss as a fraction in -j mode
    entry = {
        "kind": "netem",
        "handle": "8004:",
        "dev": "bond0",
        "root": True,
        "refcnt": 17,
        "options": {
            "limit": 1000,
            "delay": {"delay": 0.001, "jitter": 0, "correlation": 0},
            "loss-random": {"loss": 0.005, "correlation": 0},
            "ecn": False,
            "gap": 0,
        },
    }
    (q,) = parse_tc_qdisc(json.dumps([entry])).qdiscs
    assert (q.kind, q.device, q.parent, q.delay_ms, q.jitter_ms, q.loss_pct) == (
        "netem",
        "bond0",
        "root",
        1.0,
        None,
        0.5,
    )


@pytest.mark.parametrize(("token", "ms"), [("1.0ms", 1.0), ("100us", 0.1), ("2s", 2000.0), ("500", 0.5)])
def test_time_units(token, ms):
    assert time_to_ms(token) == ms


def test_netem_parent_jitter_and_loss_text():
    line = "qdisc netem 8005: dev eth1 parent 1:1 limit 1000 delay 100ms  10ms loss 0.5%"
    (q,) = parse_tc_qdisc(line).qdiscs
    assert (q.parent, q.delay_ms, q.jitter_ms, q.loss_pct) == ("1:1", 100.0, 10.0, 0.5)


@pytest.mark.parametrize(
    "text",
    [
        'Cannot find device "bond0"',
        '{"kind": "netem"}',
        '[{"kind": 3}]',
        "[1, 2",
        "qdisc netem 8004: dev bond0 root loss lots",
    ],
)
def test_unusable_text_raises_parse_error(text):
    with pytest.raises(ParseError):
        parse_tc_qdisc(text)


# facebookarchive/augmented-traffic-control#164: one line of "tc qdisc show dev X"
# (no "dev" on it) quoted inside a pull-request description
ATC_NETEM = (
    "qdisc netem 800b: parent 1:5 limit 1000 delay 10.0ms  15.0ms 1% loss 10% 6.3% reorder 6% 0.6%"
    " corrupt 3.4% gap 1"
)
# tum-lkn/tcgui#12: "tc qdisc show  dev eth1" on a Raspberry Pi, the excerpt cut mid-line
TCGUI = (
    "qdisc pfifo_fast 0: root refcnt 2 bands 3 priomap  1 2 2 2 1 2 0 0 1 1 1 1 1 1 1 1\n"
    "qdisc netem 8003: root refcnt"
)


def test_lines_of_tc_qdisc_show_dev_are_detected_without_a_dev():
    assert detect(ATC_NETEM).kind == "tc_qdisc"
    assert detect(TCGUI.splitlines()[0]).kind == "tc_qdisc"
    q = parse_tc_qdisc(ATC_NETEM).qdiscs[0]
    assert (q.kind, q.device, q.parent) == ("netem", "", "1:5")
    assert (q.delay_ms, q.jitter_ms, q.loss_pct) == (10.0, 15.0, 10.0)


def test_prose_about_qdiscs_is_not_tc_output():
    assert detect("qdisc netem is what we use to add delay: see tc-netem(8)") is None


def test_a_qdisc_line_cut_before_its_options_end_is_reported():
    out = parse_tc_qdisc(TCGUI)
    assert [q.kind for q in out.qdiscs] == ["pfifo_fast", "netem"]
    assert out.qdiscs[1].delay_ms is None
    assert [(e.line, "cut" in e.message) for e in out.errors] == [(2, True)]
    assert not parse_tc_qdisc(TCGUI.splitlines()[0]).errors
