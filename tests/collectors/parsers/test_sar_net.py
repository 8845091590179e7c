"""sar -n DEV: per-interface rates from this machine's sysstat."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.facts import ParseError
from collectors.parsers.sar_net import parse_sar_net_dev
from collectors.transcript import kind_for_command
from tests.collectors.parsers.lookup import detect
from tests.collectors.parsers.machine import paste, run


def _ifaces() -> set[str]:
    return {line.split(":")[0].strip() for line in Path("/proc/net/dev").read_text().splitlines()[2:]}


def test_this_machine_average_rows():
    out = run("sar -n DEV 1 2", tool="sar", package="sysstat")
    stats = parse_sar_net_dev(out)
    names = {r.iface for r in stats.interfaces}
    assert names == _ifaces()
    for rate in stats.interfaces:
        assert rate.rxpck_s is not None and rate.txkb_s is not None
        assert "Average" in out.splitlines()[rate.line - 1]
    assert detect(out).kind == "sar_net_dev"


def test_without_average_rows_the_intervals_are_averaged():
    out = run("sar -n DEV 1 2", tool="sar", package="sysstat")
    cut = "\n".join(line for line in out.splitlines() if not line.startswith("Average"))
    stats = parse_sar_net_dev(cut)
    assert {r.iface for r in stats.interfaces} == _ifaces()


def test_prompted():
    assert kind_for_command("sar -n DEV 1 5") == "sar_net_dev"
    assert kind_for_command("sar -n DEV,EDEV 1 5") == "sar_net_dev"
    out = run("sar -n DEV 1 1", tool="sar", package="sysstat")
    host = paste(("sar -n DEV 1 1", out))
    assert not host.errors
    assert {r.iface for r in host.net_dev.interfaces} == _ifaces()


def test_not_sar():
    with pytest.raises(ParseError):
        parse_sar_net_dev("IFACE foo bar\n")
