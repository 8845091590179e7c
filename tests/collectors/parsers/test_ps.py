"""ps -eo pid,psr,pcpu,comm and friends: the process list with PSR."""

from __future__ import annotations

import os

import pytest

from collectors.facts import ParseError
from collectors.parsers.ps import parse_ps
from collectors.transcript import kind_for_command
from tests.collectors.parsers.lookup import detect
from tests.collectors.parsers.machine import paste, run
from tests.conftest import ROOT


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


@pytest.mark.parametrize("command", ["ps aux", "ps -ef", "ps auxww"])
def test_rows_whose_header_grep_dropped_are_read_by_shape(command):
    # "ps aux | grep qemu" as pasted: every row, no header
    out = run(command, package="procps")
    rows = out.strip().splitlines()[1:]
    procs = parse_ps("\n".join(rows)).processes
    assert len(procs) == len(rows)
    one = next(p for p in procs if p.pid == 1)
    assert one.user == "root" and one.command
    if "aux" in command:
        assert one.cpu_pct is not None and one.mem_pct is not None


# kubevirt issue 10126, comment by chenxinlong (tests/evaluation/87-*/SOURCE.md):
# the stored copy breaks the QEMU command line before " -cpu" and cuts it in -smp
KUBEVIRT_PS_GREP = (ROOT / "tests/evaluation/87-kubevirt-ps-qemu-kvm-cmdline-cut/comment.txt").read_text(
    encoding="utf-8"
)


def test_ps_aux_grep_qemu_with_a_wrapped_command_line():
    host = paste(("ps aux | grep qemu-kvm", KUBEVIRT_PS_GREP.split("\n", 2)[2]))
    assert not host.errors
    grep, qemu = host.processes.processes
    assert (grep.pid, grep.user, grep.cpu_pct) == (3293, "root", 0.0)
    assert (qemu.pid, qemu.user, qemu.cpu_pct, qemu.mem_pct) == (24485, "uuidd", 159.0, 17.8)
    assert qemu.command.startswith("/usr/libexec/qemu-kvm -name guest=hc-zone-cz-2-10291_vm-s2qh4m65")
    assert qemu.command.endswith(
        "-accel kvm -cpu host,migratable=on -m 11445 -object "
        '{"qom-type":"memory-backend-ram","id":"pc.ram","size":12000952320} '
        "-overcommit mem-lock=off -smp 8,sockets=1,dies=1,cores=8,thre"
    )


def test_prose_is_not_a_headerless_row():
    with pytest.raises(ParseError):
        parse_ps("the guest is slow since 10:27\n  and nothing else\n")
