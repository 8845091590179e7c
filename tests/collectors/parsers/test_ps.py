"""ps -eo pid,psr,pcpu,comm and friends: the process list with PSR."""

from __future__ import annotations

import os

import pytest

from collectors.facts import ParseError
from collectors.parsers import detect
from collectors.parsers.ps import parse_ps
from collectors.transcript import kind_for_command
from tests.collectors.parsers.machine import paste, run


@pytest.mark.parametrize(
    "command",
    [
        "ps -eo pid,psr,pcpu,comm",
        "ps -eo pid,user,psr,pcpu,pmem,args",
        "ps -eLo pid,tid,psr,pcpu,comm",
        "ps -eo pid,psr,comm --sort=-pcpu",
    ],
)
def test_this_machine(command):
    out = run(command, package="procps")
    procs = parse_ps(out).processes
    assert len(procs) == len(out.strip().splitlines()) - 1
    assert all(p.psr is not None and p.psr < os.cpu_count() for p in procs)
    one = next(p for p in procs if p.pid == 1)
    assert one.command
    if "args" in command:
        assert one.user == "root" and one.mem_pct is not None
    assert detect(out).kind == "ps"


def test_args_keep_their_spaces():
    out = run(f"ps -o pid,psr,args -p {os.getpid()}", package="procps")
    (proc,) = parse_ps(out).processes
    assert proc.pid == os.getpid() and " " in proc.command


def test_prompted_ps_aux_without_psr():
    out = run("ps aux", package="procps")
    assert kind_for_command("ps aux") == "ps"
    host = paste(("ps aux", out))
    assert not host.errors
    assert len(host.processes.processes) == len(out.strip().splitlines()) - 1
    assert all(p.psr is None for p in host.processes.processes)


def test_not_ps():
    with pytest.raises(ParseError):
        parse_ps("PID\nabc\n")
