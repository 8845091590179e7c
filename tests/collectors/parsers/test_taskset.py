"""taskset -cp / -p: a task's CPU affinity."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from collectors.cpulist import parse_cpulist
from collectors.facts import ParseError
from collectors.parsers.taskset import parse_taskset
from collectors.transcript import kind_for_command
from tests.collectors.parsers.lookup import detect
from tests.collectors.parsers.machine import paste, run


def _allowed() -> list[int]:
    for line in Path(f"/proc/{os.getpid()}/status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return parse_cpulist(line.split(":", 1)[1].strip())
    raise AssertionError("no Cpus_allowed_list")


def test_list_and_mask_this_machine():
    pid = os.getpid()
    out = run(f"taskset -cp {pid}; taskset -p {pid}", tool="taskset", package="util-linux")
    (aff,) = parse_taskset(out)
    assert aff.pid == pid
    assert aff.cpus == _allowed()
    assert aff.mask is not None and int(aff.mask.replace(",", ""), 16) == sum(1 << c for c in aff.cpus)
    assert detect(out).kind == "taskset"


def test_mask_alone_expands_to_cpus():
    pid = os.getpid()
    (aff,) = parse_taskset(run(f"taskset -p {pid}", tool="taskset", package="util-linux"))
    assert aff.cpus == _allowed()


def test_new_affinity_wins():
    pid = os.getpid()
    first = _allowed()[0]
    out = run(
        f"taskset -cp {first} {pid}; taskset -cp {','.join(map(str, _allowed()))} {pid}", tool="taskset"
    )
    (aff,) = parse_taskset(out)
    assert "new" in out.splitlines()[1]
    assert aff.cpus == _allowed()


def test_prompted_loop_over_pids():
    assert kind_for_command("taskset -cp 1234") == "taskset"
    assert kind_for_command("taskset -c 1 ./bench") is None
    out = run("for p in 1 $$; do taskset -cp $p; done", tool="taskset")
    host = paste(("for p in 1 $$; do taskset -cp $p; done", out), ("taskset -cp 1", run("taskset -cp 1")))
    assert len(host.affinities) == 3
    assert host.affinities[0].pid == 1


def test_not_taskset():
    with pytest.raises(ParseError):
        parse_taskset("affinity: 0-3\n")
