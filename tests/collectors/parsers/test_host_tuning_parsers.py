"""Parsers of /proc/vmstat, the KSM and block-scheduler sysfs files, cpupower
and a grep of /proc/interrupts, on real outputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.facts import ParseError
from collectors.parsers.cpupower import parse_cpupower
from collectors.parsers.interrupts import parse_interrupts_grep
from collectors.parsers.proc_vmstat import parse_proc_vmstat
from collectors.parsers.sysfs_values import parse_io_scheduler, parse_ksm, parse_scaling_governor
from tests.conftest import FIXTURES

HOST = FIXTURES / "published" / "host"


def _body(name: str) -> str:
    """The output of a one-command fixture (its prompt line dropped)."""
    return (HOST / name).read_text(encoding="utf-8").split("\n", 1)[1]


def test_proc_vmstat_published_and_this_machine():
    v = parse_proc_vmstat(_body("collectd-1307-proc-vmstat.txt"))
    assert v.values["allocstall"] == 3281736 and v.values["compact_fail"] == 6550462
    assert v.lines["compact_stall"] == 9
    mine = parse_proc_vmstat(Path("/proc/vmstat").read_text())
    assert "nr_free_pages" in mine.values and not mine.errors


def test_proc_vmstat_rejects_garbage():
    with pytest.raises(ParseError):
        parse_proc_vmstat("hello world\nnot vmstat\n")


def test_ksm_grep_output():
    k = parse_ksm(_body("ubuntuforums-ksmd-4.11rc2-vms.txt").split("$ grep . /sys/kernel/mm/ksm/*\n", 1)[1])
    assert (
        k.values["run"] == 1 and k.values["pages_sharing"] == 445520 and k.values["merge_across_nodes"] == 1
    )
    with pytest.raises(ParseError):
        parse_ksm("nothing here")


def test_io_scheduler_forms():
    s = parse_io_scheduler(
        "/sys/block/vda/queue/scheduler:none [mq-deadline] kyber bfq \n"
        "==> /sys/block/sda/queue/scheduler <==\nnoop deadline [cfq]\n"
    )
    assert s.active == {"vda": "mq-deadline", "sda": "cfq"}
    pt = parse_io_scheduler(
        "# Disk Schedulers And Queue Size #####\n         sda | [cfq] 128\n         sdb | [cfq] 128\n"
    )
    assert pt.active == {"sda": "cfq", "sdb": "cfq"}
    assert parse_io_scheduler("[none] mq-deadline\n", device="nvme0n1").active == {"nvme0n1": "none"}
    with pytest.raises(ParseError):
        parse_io_scheduler("no schedulers")


def test_scaling_governor_forms():
    g = parse_scaling_governor("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor:powersave\n")
    assert g.governors == {"cpu0": "powersave"}
    assert parse_scaling_governor("performance\nperformance\n").governors == {
        "cpu?0": "performance",
        "cpu?1": "performance",
    }
    with pytest.raises(ParseError):
        parse_scaling_governor("fast\n")


def test_cpupower_frequency_and_idle_info():
    p = parse_cpupower(_body("amd-pstate-epp-threadripper-powersave.txt"))
    assert p.driver == "amd-pstate-epp" and p.governors == {"cpu10": "powersave"}
    idle = parse_cpupower(
        _body("zh-notes-cpupower-performance-cstates-off.txt").split("$ cpupower  idle-info\n")[1]
    )
    assert idle.idle_driver == "intel_idle"
    assert [(s.name, s.latency_us, s.disabled) for s in idle.idle_states][-2:] == [
        ("C3", 40, True),
        ("C6", 133, True),
    ]
    with pytest.raises(ParseError):
        parse_cpupower("hello")


def test_interrupts_grep_leaves_the_cut_row_out():
    i = parse_interrupts_grep(_body("irqbalance-122-grep-eth-interrupts.txt"))
    assert len(i.cpus) == 32 and set(i.rows) == {"26", "27", "28"}
    assert i.rows["27"][0] == 356669796 and i.descriptions["27"].endswith("eth0-TxRx-0")
    assert i.errors and "cut" in i.errors[0].message
    with pytest.raises(ParseError):
        parse_interrupts_grep("no rows")
