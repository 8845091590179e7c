"""A per-CPU table cut by the paste is not judged as if it held every CPU
(issue 25: "cut structures are reported as cut ... and rules skip what a cut
part could not show"). The input is the ZStack seed's paste (evaluation 402):
top's %Cpu0..%Cpu53 of the 72 CPUs lscpu and numactl -H list."""

from __future__ import annotations

from pathlib import Path

from collectors import archive
from collectors.facts import SnapshotFacts
from engine.run import analyze

PASTE = (
    Path(__file__).resolve().parents[1]
    / "evaluation"
    / "402-zstack-hypervisor-then-guest-mariadb-no-ssh"
    / "ticket.txt"
)


def test_softirq_hotspot_is_not_checked_on_a_cut_top_table():
    hosts = archive.load(PASTE.read_bytes()).hosts
    usage = hosts[0].cpu_usage
    assert usage is not None and usage.cut and (usage.truncated_after, usage.of_cpus) == ("53", 72)
    result = analyze(SnapshotFacts(hosts=hosts))
    assert "net.softirq_hotspot" not in result.checked
    (entry,) = [n for n in result.not_checked if n.rule == "net.softirq_hotspot" and n.host == "zstack-9"]
    assert "cut after CPU 53" in entry.reason and "54 of 72 CPUs" in entry.reason
    assert "被截断" in entry.reason_zh
    # the facts keep the rows that were read: only the rules do not judge them
    assert len([c for c in usage.per_cpu if c.cpu != "all"]) == 54


def test_a_whole_top_table_is_still_judged():
    hosts = archive.load(PASTE.read_bytes()).hosts
    usage = hosts[0].cpu_usage
    assert usage is not None
    usage.cut = False  # the same rows, read as the whole table
    result = analyze(SnapshotFacts(hosts=hosts))
    assert not [n for n in result.not_checked if n.rule == "net.softirq_hotspot" and n.host == "zstack-9"]
