"""A cut domain XML is read as cut (issue 25, point 5): the rules that judge
what the cut part could hold are not checked, with the reason, instead of
firing on elements the paste could not show."""

from __future__ import annotations

import pytest

from collectors.archive import load
from collectors.facts import SnapshotFacts, from_dict, to_dict
from collectors.parsers.libvirt import parse_domain
from engine.run import analyze
from tests.collectors.test_machines import host_and_guest_paste
from tests.conftest import CORPUS, FIXTURES

AFTER = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "after" / "zstack-9.txt"


def cut_after_vcpupin_23() -> str:
    """The ZStack seed's fixed host, its ``virsh dumpxml`` cut after vcpupin 23
    of 32 (inside ``<cputune>``, before emulatorpin, iothreadpin, numatune,
    the guest NUMA cell and the disks)."""
    lines = [ln for ln in AFTER.read_text().splitlines() if not ln.startswith("```")]
    end = next(i for i, ln in enumerate(lines) if "<vcpupin vcpu='23'" in ln)
    return "\n".join(lines[: end + 1]) + "\n"


def test_cut_domain_is_marked_cut() -> None:
    xml = cut_after_vcpupin_23().split("virsh dumpxml 8c1f5e2a0d9b4c6e9f3a7b2d1e4c6a80\n", 1)[1]
    d = parse_domain(xml)
    assert d.cut and d.recovered and not d.fragment
    assert d.cut_in == "cputune"
    assert d.truncated_after == "vcpupin vcpu='23' cpuset='47'"
    assert {"vcpupin", "emulatorpin", "iothreadpin", "numatune", "cpu", "numa", "devices"} <= set(d.unseen)
    assert len(d.vcpupin) == 24
    assert from_dict(type(d), to_dict(d)).unseen == d.unseen


def test_cut_domain_rules_are_not_checked() -> None:
    # old code: kvm.emulator_unpinned, kvm.iothread_unpinned, kvm.memory_not_bound,
    # kvm.guest_numa_missing ... fired on what the paste could not show
    hosts = load(cut_after_vcpupin_23().encode(), name="ticket.txt").hosts
    result = analyze(SnapshotFacts(hosts=hosts))
    fired = {f.rule for f in result.findings}
    hidden = {
        "kvm.emulator_unpinned",
        "kvm.iothread_unpinned",
        "kvm.memory_not_bound",
        "kvm.guest_numa_missing",
        "kvm.vcpus_unpinned",
        "kvm.cpu_model_hides_cache",
        "kvm.flat_socket_topology",
        "kvm.pinning_spans_nodes",
    }
    assert not fired & hidden
    reasons = {n.rule: n.reason for n in result.not_checked}
    for rule in hidden:
        assert "is cut after <cputune>" in reasons[rule], rule
    assert {n.rule: n.reason_zh for n in result.not_checked}["kvm.emulator_unpinned"].endswith("后面的部分")


def test_whole_domain_is_not_cut() -> None:
    lines = [ln for ln in AFTER.read_text().splitlines() if not ln.startswith("```")]
    start = next(i for i, ln in enumerate(lines) if ln.startswith("<domain"))
    end = next(i for i, ln in enumerate(lines) if ln.startswith("</domain>"))
    d = parse_domain("\n".join(lines[start : end + 1]))
    assert not d.cut and not d.unseen and d.emulatorpin == [67]


@pytest.mark.parametrize("path", sorted((CORPUS / "libvirt").glob("*")), ids=lambda p: p.name)
def test_corpus_domains_are_not_cut(path) -> None:  # type: ignore[no-untyped-def]
    d = parse_domain(path.read_text())
    assert not d.cut and not d.unseen


def test_cut_top_table_is_marked_cut() -> None:
    # the ZStack seed's top (verbatim: %Cpu0..%Cpu53) on a host whose lscpu and
    # numactl -H list 72 CPUs: the summary counted 54 CPUs from it before
    hosts = load(host_and_guest_paste(), name="ticket.txt").hosts
    hypervisor = hosts[0]
    usage = hypervisor.cpu_usage
    assert usage is not None and usage.cut
    assert (usage.truncated_after, usage.of_cpus) == ("53", 72)
    assert hypervisor.logical_cpus() == 72
    assert not hosts[1].cpu_usage or not hosts[1].cpu_usage.cut
