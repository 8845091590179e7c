"""/proc/PID/numa_maps summarised per node."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.facts import ParseError
from collectors.parsers.numa_maps import parse_numa_maps
from tests.collectors.parsers.lookup import detect, for_command
from tests.collectors.parsers.machine import paste


def _expected(text: str) -> dict[int, float]:
    """Per-node MiB computed independently from the N<node>= fields."""
    kb: dict[int, int] = {}
    for line in text.splitlines():
        fields = dict(f.split("=", 1) for f in line.split()[2:] if "=" in f)
        page = int(fields.get("kernelpagesize_kB", "4"))
        for key, value in fields.items():
            if key[:1] == "N" and key[1:].isdigit():
                kb[int(key[1:])] = kb.get(int(key[1:]), 0) + int(value) * page
    return {n: round(v / 1024, 2) for n, v in kb.items()}


def test_this_process():
    text = Path("/proc/self/numa_maps").read_text()
    usage = parse_numa_maps(text)
    (proc,) = usage.processes
    assert proc.tool == "numa_maps" and proc.pid is None
    assert proc.node_mb == _expected(text)
    assert proc.total_mb == pytest.approx(sum(proc.node_mb.values()), abs=0.05)
    assert "default" in proc.categories
    assert detect(text).kind == "numa_maps"


def test_commands_and_paste():
    for command in (
        "cat /proc/1234/numa_maps",
        "cat /proc/$(pidof mysqld)/numa_maps",
        "sudo cat /proc/self/numa_maps",
    ):
        assert for_command(command).kind == "numa_maps", command
    text = Path("/proc/self/numa_maps").read_text()
    host = paste(("cat /proc/4321/numa_maps", text))
    assert not host.errors
    (proc,) = host.process_numa
    assert proc.tool == "numa_maps" and proc.node_mb == _expected(text)


def test_grep_prefix_names_the_pid():
    text = Path("/proc/self/numa_maps").read_text().splitlines()[0]
    proc = parse_numa_maps(f"/proc/777/numa_maps:{text}\n").processes[0]
    assert proc.pid == 777


def test_not_numa_maps():
    with pytest.raises(ParseError):
        parse_numa_maps("default N0=1\n")
