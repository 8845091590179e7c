"""free parser: this machine's procps-ng output in every unit, and published old-layout outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.facts import ParseError
from collectors.parsers import REGISTRY
from collectors.parsers.free import parse_free, parse_free_mb
from collectors.transcript import kind_for_command
from tests.collectors.parsers.lookup import detect
from tests.collectors.parsers.machine import paste, run
from tests.conftest import FIXTURES

PUBLISHED = FIXTURES / "commands"


def _meminfo() -> dict[str, int]:
    out = {}
    for line in Path("/proc/meminfo").read_text().splitlines():
        key, _, rest = line.partition(":")
        out[key] = int(rest.split()[0])
    return out


@pytest.mark.parametrize(
    ("command", "kind", "tolerance_kb"),
    [
        ("free", "free_kb", 0),
        ("free -k", "free_kb", 0),
        ("free -w", "free_kb", 0),
        ("free -m", "free_mb", 1024),
        ("free -g", "free_gb", 1024 * 1024),
        ("free -b", "free_bytes", 1),
        ("free -h", "free_kb", 0.06),  # -h rounds to 3 significant digits
        ("free -mt", "free_mb", 1024),
        ("free --mebi", "free_mb", 1024),
        ("free --mega", "free_mb_si", 1000),
    ],
)
def test_this_machine_every_unit(command, kind, tolerance_kb):
    out = run(command, package="procps")
    assert kind_for_command(command) == kind
    info = REGISTRY[kind].func(out)
    assert info.origin == "free"
    total = _meminfo()["MemTotal"]
    if isinstance(tolerance_kb, float):
        assert info.values["MemTotal"] == pytest.approx(total, rel=tolerance_kb)
    else:
        assert abs(info.values["MemTotal"] - total) <= tolerance_kb
    assert {"MemFree", "MemAvailable", "BuffCache", "SwapTotal", "SwapFree"} <= set(info.values)
    # the output alone is recognised
    assert detect(out).kind == "free"


def test_wide_layout_keeps_buffers_and_cache_apart():
    info = parse_free(run("free -w", package="procps"))
    assert info.values["BuffCache"] == info.values["Buffers"] + info.values["Cached"]


def test_old_layout_rhel6_free_m():
    text = (PUBLISHED / "free_m_rhel6.txt").read_text()
    info = parse_free_mb(text)
    assert info.values["MemTotal"] == 1877 * 1024
    assert info.values["Buffers"] == 70 * 1024 and info.values["Cached"] == 557 * 1024
    assert info.values["SwapTotal"] == 4031 * 1024 and info.values["SwapFree"] == 4031 * 1024
    assert "MemAvailable" not in info.values  # procps 3.2 has no "available"
    # the published paste, "# free -m" prompt included, reads in MiB
    host = paste(prose=text)
    assert host.meminfo.values["MemTotal"] == 1877 * 1024


def test_old_layout_kb_after_user_prompt():
    host = paste(prose=(PUBLISHED / "free_baenre.txt").read_text())
    assert not host.errors
    assert host.meminfo.origin == "free"
    assert host.meminfo.values["MemTotal"] == 515792
    assert host.meminfo.values["MemFree"] == 14420
    assert host.hostname == "baenre"


def test_unprompted_indented_output_guesses_mib():
    text = (PUBLISHED / "free_m_indented.txt").read_text()
    table = "\n".join(text.splitlines()[1:])
    assert detect(table).kind == "free"
    assert parse_free(table).values["MemTotal"] == 15298 * 1024


def test_free_never_replaces_proc_meminfo():
    whole = Path("/proc/meminfo").read_text()
    host = paste(("free -g", run("free -g", package="procps")), ("cat /proc/meminfo", whole))
    assert host.meminfo.origin == "proc"
    assert host.meminfo.values["MemTotal"] == _meminfo()["MemTotal"]


def test_prompted_free_reaches_host_facts():
    out = run("free -m", package="procps")
    host = paste(("free -m", out))
    assert not host.errors
    assert host.meminfo.origin == "free"
    assert abs(host.meminfo.values["MemTotal"] - _meminfo()["MemTotal"]) <= 1024
    assert host.meminfo.lines["MemTotal"] == 3  # prompt on line 1, header on 2


def test_not_free():
    with pytest.raises(ParseError):
        parse_free("Mem: 1 2 3\n")
