"""Host tuning rules (engine/rules/reclaim.py, ksm.py, cpu_power.py, irq.py,
kernel.py) on published outputs and on this machine
(tests/fixtures/published/host, sources in tests/fixtures/published/README.md)."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES, ROOT

HOST = FIXTURES / "published" / "host"


def _text(name: str) -> str:
    return (HOST / name).read_text(encoding="utf-8")


def _kubevirt_ps() -> str:
    """A real ``ps aux | grep qemu-kvm`` of a KubeVirt worker (evaluation 87): a host running a guest."""
    path = ROOT / "tests" / "evaluation" / "87-kubevirt-ps-qemu-kvm-cmdline-cut" / "comment.txt"
    return path.read_text(encoding="utf-8").replace("```", "")


def _fired(result, rule_id: str) -> list:
    return [f for f in result.findings if f.rule == rule_id]


def test_direct_reclaim_and_compaction_stalls_fire_on_collectd_vmstat(analyze_texts):
    result = analyze_texts(_text("collectd-1307-proc-vmstat.txt"))
    assert "memory.direct_reclaim_stalls" in result.rule_ids
    found = {f.template: f for f in _fired(result, "memory.direct_reclaim_stalls")}
    assert set(found) == {"reclaim", "compaction"}
    assert found["reclaim"].values["stalls"] == 3281736
    assert found["compaction"].values["stalls"] == 6559780
    assert round(found["compaction"].values["failed"], 1) == 99.9
    assert found["reclaim"].evidence[0].line is not None


def test_direct_reclaim_stalls_quiet_on_this_machine(analyze_texts):
    result = analyze_texts(_text("this-vm-vmstat-ksm-interrupts.txt"))
    assert "memory.direct_reclaim_stalls" in result.checked
    assert "memory.direct_reclaim_stalls" not in result.rule_ids


def test_ksm_active_fires_when_ksm_merges_guest_memory(analyze_texts):
    result = analyze_texts(_text("ubuntuforums-ksmd-4.11rc2-vms.txt"))
    assert "kvm.ksm_active" in result.rule_ids
    (f,) = _fired(result, "kvm.ksm_active")
    assert f.values["sharing"] == 445520
    # the post names its VMs in prose only: no guest in the facts, so info
    assert f.severity == "info" and f.template == "no_guests"


@pytest.mark.parametrize(
    "name",
    ["ubuntuforums-ksm-no-vms.txt", "cloud-hypervisor-5873-ksm.txt", "this-vm-vmstat-ksm-interrupts.txt"],
)
def test_ksm_active_quiet_when_nothing_is_merged_or_ksm_is_off(analyze_texts, name):
    result = analyze_texts(_text(name))
    assert "kvm.ksm_active" in result.checked
    assert "kvm.ksm_active" not in result.rule_ids


def test_ksm_active_is_a_warning_on_a_host_with_guests(analyze_texts):
    ps = _kubevirt_ps()
    result = analyze_texts(_text("ubuntuforums-ksmd-4.11rc2-vms.txt") + "\n" + ps)
    (f,) = _fired(result, "kvm.ksm_active")
    assert f.severity == "warning" and f.template == "guests"


@pytest.mark.parametrize(
    "name", ["tidb-docs-cpupower-policy-powersave.txt", "amd-pstate-epp-threadripper-powersave.txt"]
)
def test_governor_not_performance_fires_on_powersave(analyze_texts, name):
    result = analyze_texts(_text(name))
    assert "cpu.governor_not_performance" in result.rule_ids
    (f,) = _fired(result, "cpu.governor_not_performance")
    assert f.values["governor"] == "powersave"
    assert f.severity == "info"  # no data store or guest in these outputs


def test_governor_not_performance_quiet_on_performance(analyze_texts):
    result = analyze_texts(_text("zh-notes-cpupower-performance-cstates-off.txt"))
    assert "cpu.governor_not_performance" in result.checked
    assert "cpu.governor_not_performance" not in result.rule_ids


def test_irq_single_cpu_fires_on_eth0_queues_on_cpu0(analyze_texts):
    result = analyze_texts(_text("irqbalance-122-grep-eth-interrupts.txt"))
    assert "net.irq_single_cpu" in result.rule_ids
    (f,) = _fired(result, "net.irq_single_cpu")
    assert f.values["cpu"] == "CPU0" and f.values["cpus"] == 32
    # eth0-TxRx-0/1, and row 29, which the excerpt cuts before its name: the command
    # (grep eth) printed only eth vectors, so its counts shown (CPU0-8) are counted too
    assert f.values["queues"] == 3 and f.values["share"] > 99
    assert "eth-? (name cut; the command greps eth)" in f.values["names"]


def test_irq_single_cpu_quiet_on_this_machine(analyze_texts):
    result = analyze_texts(_text("this-vm-vmstat-ksm-interrupts.txt"))
    assert "net.irq_single_cpu" not in result.rule_ids


def test_known_regression_fires_on_4_11_rc2_with_ksm(analyze_texts):
    result = analyze_texts(_text("ubuntuforums-ksmd-4.11rc2-vms.txt"))
    assert "kernel.known_regression" in result.rule_ids
    (f,) = _fired(result, "kernel.known_regression")
    assert f.template == "ksm_lockup_4_11_rc"
    assert f.evidence[0].value == "4.11.0-rc2-doug"


def test_known_regression_quiet_on_this_machine(analyze_texts):
    result = analyze_texts(_text("this-vm-vmstat-ksm-interrupts.txt"))
    assert "kernel.known_regression" in result.checked
    assert "kernel.known_regression" not in result.rule_ids


def test_a_hypervisor_without_the_outputs_is_not_checked(analyze_texts):
    ps = _kubevirt_ps()
    result = analyze_texts(ps)
    missing = {n.rule: n.commands for n in result.not_checked}
    for rule_id, command in [
        ("kvm.ksm_active", "grep . /sys/kernel/mm/ksm/*"),
        ("memory.direct_reclaim_stalls", "cat /proc/vmstat"),
        ("net.irq_single_cpu", "cat /proc/interrupts"),
        ("cpu.governor_not_performance", "cpupower frequency-info"),
    ]:
        assert rule_id not in result.checked
        assert command in missing[rule_id]
