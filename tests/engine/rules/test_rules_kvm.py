"""KVM / libvirt rules on real-format domain XML, virsh and lscpu output."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.conftest import CORPUS, ROOT

ZSTACK = "zstack-mariadb-v2v"
OPENSTACK = "openstack-kvm-crm-cpu"
HOST = "zstack-9.txt"
ODD_CPUS = ",".join(str(c) for c in range(1, 68, 2))


def _ids(analyze_texts, seed_text, state, replace=None):
    return analyze_texts(seed_text(ZSTACK, state, HOST, replace)).rule_ids


def test_vcpu_hotplug_fires_on_current_below_maximum(analyze_texts, seed_text):
    result = analyze_texts(seed_text(ZSTACK, "before", HOST))
    finding = next(f for f in result.findings if f.rule == "kvm.vcpu_hotplug_enabled")
    assert [e.value for e in finding.evidence] == [32, 128]


def test_vcpu_hotplug_fires_on_max_memory(analyze_texts):
    text = (CORPUS / "libvirt" / "libvirt_memory-hotplug.xml").read_text()
    assert "kvm.vcpu_hotplug_enabled" in analyze_texts(text, names=["guest.xml"]).rule_ids


def test_vcpu_hotplug_quiet_when_fixed(analyze_texts, seed_text):
    assert "kvm.vcpu_hotplug_enabled" not in _ids(analyze_texts, seed_text, "after")


def test_vcpus_unpinned_fires_on_large_unpinned_guest(analyze_texts, seed_text):
    assert "kvm.vcpus_unpinned" in _ids(analyze_texts, seed_text, "before")


def test_vcpus_unpinned_quiet_when_every_vcpu_is_pinned(analyze_texts, seed_text):
    assert "kvm.vcpus_unpinned" not in _ids(analyze_texts, seed_text, "after")


def test_vcpus_unpinned_quiet_on_small_guest(analyze_texts, seed_text):
    replace = {
        "<vcpu placement='static' current='32'>128</vcpu>": "<vcpu placement='static'>4</vcpu>",
        "<topology sockets='4' cores='32' threads='1'/>": "<topology sockets='1' cores='4' threads='1'/>",
    }
    ids = _ids(analyze_texts, seed_text, "before", replace)
    assert not ids & {"kvm.vcpus_unpinned", "kvm.emulator_unpinned", "kvm.memory_not_bound"}


def test_emulator_unpinned_fires_and_clears(analyze_texts, seed_text):
    assert "kvm.emulator_unpinned" in _ids(analyze_texts, seed_text, "before")
    assert "kvm.emulator_unpinned" not in _ids(analyze_texts, seed_text, "after")


def test_iothread_unpinned_fires_on_data_disk_without_iothread(analyze_texts, seed_text):
    result = analyze_texts(seed_text(ZSTACK, "before", HOST))
    finding = next(f for f in result.findings if f.rule == "kvm.iothread_unpinned")
    assert finding.evidence[0].fact.endswith("disks[vdb].iothread")


def test_iothread_unpinned_fires_on_used_iothread_without_pin(analyze_texts, seed_text):
    ids = _ids(analyze_texts, seed_text, "after", {"    <iothreadpin iothread='3' cpuset='65'/>\n": ""})
    assert "kvm.iothread_unpinned" in ids


def test_iothread_unpinned_quiet_with_pinned_iothread(analyze_texts, seed_text):
    assert "kvm.iothread_unpinned" not in _ids(analyze_texts, seed_text, "after")


def test_guest_numa_missing_fires_from_domain_xml(analyze_texts, seed_text):
    assert "kvm.guest_numa_missing" in _ids(analyze_texts, seed_text, "before")


def test_guest_numa_missing_fires_from_guest_lscpu_with_host(analyze_texts, seed_text):
    result = analyze_texts(
        seed_text(OPENSTACK, "before", "cmp-node07.txt"), seed_text(OPENSTACK, "before", "od01crmapp05.txt")
    )
    finding = next(f for f in result.findings if f.rule == "kvm.guest_numa_missing")
    assert finding.host == "od01crmapp05"


def test_guest_numa_missing_quiet_for_lone_guest_and_with_cells(analyze_texts, seed_text):
    # a guest alone: whether its host has several nodes cannot be told
    assert (
        "kvm.guest_numa_missing"
        not in analyze_texts(seed_text(OPENSTACK, "before", "od01crmapp05.txt")).rule_ids
    )
    assert "kvm.guest_numa_missing" not in _ids(analyze_texts, seed_text, "after")


def test_memory_not_bound_fires_and_clears(analyze_texts, seed_text):
    assert "kvm.memory_not_bound" in _ids(analyze_texts, seed_text, "before")
    assert "kvm.memory_not_bound" not in _ids(analyze_texts, seed_text, "after")


def test_pinning_spans_nodes_fires_when_memory_bound_elsewhere(analyze_texts, seed_text):
    ids = _ids(
        analyze_texts, seed_text, "after", {"mode='preferred' nodeset='1'": "mode='preferred' nodeset='0'"}
    )
    assert "kvm.pinning_spans_nodes" in ids


def test_pinning_spans_nodes_fires_when_pins_cross_nodes(analyze_texts, seed_text):
    # vCPU 0 moved to CPU 0 (node 0) while the guest has a single cell
    ids = _ids(
        analyze_texts,
        seed_text,
        "after",
        {"<vcpupin vcpu='0' cpuset='1'/>": "<vcpupin vcpu='0' cpuset='0'/>"},
    )
    assert "kvm.pinning_spans_nodes" in ids


def test_pinning_spans_nodes_quiet_when_pins_and_memory_agree(analyze_texts, seed_text):
    assert "kvm.pinning_spans_nodes" not in _ids(analyze_texts, seed_text, "after")


def test_cpu_model_hides_cache_fires_on_guest_without_l3(analyze_texts, seed_text):
    assert (
        "kvm.cpu_model_hides_cache"
        in analyze_texts(seed_text(OPENSTACK, "before", "od01crmapp05.txt")).rule_ids
    )


def test_cpu_model_hides_cache_fires_on_host_model_xml(analyze_texts, seed_text):
    text = seed_text(
        OPENSTACK, "after", "cmp-node07.txt", {"<cpu mode='host-passthrough'>": "<cpu mode='host-model'>"}
    )
    assert "kvm.cpu_model_hides_cache" in analyze_texts(text).rule_ids


def test_cpu_model_hides_cache_quiet_with_passthrough(analyze_texts, seed_text):
    result = analyze_texts(
        seed_text(OPENSTACK, "after", "cmp-node07.txt"), seed_text(OPENSTACK, "after", "od01crmapp06.txt")
    )
    assert "kvm.cpu_model_hides_cache" not in result.rule_ids


def test_flat_socket_topology_fires_on_xml_and_lscpu(analyze_texts, seed_text):
    text = seed_text(
        OPENSTACK,
        "after",
        "cmp-node07.txt",
        {"<topology sockets='4' cores='8' threads='1'/>": "<topology sockets='32' cores='1' threads='1'/>"},
    )
    assert "kvm.flat_socket_topology" in analyze_texts(text).rule_ids
    assert (
        "kvm.flat_socket_topology"
        in analyze_texts(seed_text(OPENSTACK, "before", "od01crmapp05.txt")).rule_ids
    )


def test_flat_socket_topology_quiet_with_cores(analyze_texts, seed_text):
    result = analyze_texts(
        seed_text(OPENSTACK, "after", "cmp-node07.txt"), seed_text(OPENSTACK, "after", "od01crmapp06.txt")
    )
    assert "kvm.flat_socket_topology" not in result.rule_ids


def test_host_contention_fires_with_other_running_guests(analyze_texts, seed_text):
    assert "kvm.host_contention" in _ids(analyze_texts, seed_text, "before")


def test_host_contention_quiet_when_the_guest_runs_alone(analyze_texts, seed_text):
    replace = {
        f" {i}   {uuid}  running": f" -    {uuid}  shut off"
        for i, uuid in (
            (2, "2b7d9e4f1a3c4b5d8e6f0a1b2c3d4e5f"),
            (3, "3c8e0f5a2b4d4c6e9f7a1b2c3d4e5f60"),
            (5, "4d9f1a6b3c5e4d7f0a8b2c3d4e5f6071"),
            (6, "5ea02b7c4d6f4e8a1b9c3d4e5f607182"),
            (9, "6fb13c8d5e7a4f9b2c0d4e5f60718293"),
        )
    }
    assert "kvm.host_contention" not in _ids(analyze_texts, seed_text, "before", replace)


def test_no_cpu_isolation_fires_for_pinned_guest(analyze_texts, seed_text):
    result = analyze_texts(seed_text(ZSTACK, "after", HOST))
    finding = next(f for f in result.findings if f.rule == "kvm.no_cpu_isolation")
    assert finding.severity == "info"


def test_no_cpu_isolation_quiet_with_isolcpus(analyze_texts, seed_text):
    ids = _ids(analyze_texts, seed_text, "after", {"intel_iommu=off": f"intel_iommu=off isolcpus={ODD_CPUS}"})
    assert "kvm.no_cpu_isolation" not in ids


def test_cpu_model_hides_cache_quiet_for_emulated_tcg_domain(analyze_texts):
    # type='qemu' without <cpu>: an emulated test guest, not a KVM performance problem
    text = (CORPUS / "libvirt" / "libvirt_hugepages-nodeset.xml").read_text()
    result = analyze_texts(text, names=["guest.xml"])
    assert "kvm.cpu_model_hides_cache" not in result.rule_ids


OTHER_GUESTS = (
    (2, "2b7d9e4f1a3c4b5d8e6f0a1b2c3d4e5f"),
    (3, "3c8e0f5a2b4d4c6e9f7a1b2c3d4e5f60"),
    (5, "4d9f1a6b3c5e4d7f0a8b2c3d4e5f6071"),
    (6, "5ea02b7c4d6f4e8a1b9c3d4e5f607182"),
    (9, "6fb13c8d5e7a4f9b2c0d4e5f60718293"),
)
ALONE = {f" {i}   {uuid}  running": f" -    {uuid}  shut off" for i, uuid in OTHER_GUESTS}
LAST_CPU_LINE = "%Cpu53 :  0.0 us,  0.0 sy,  0.0 ni,100.0 id,  0.0 wa,  0.0 hi,  0.0 si,  0.0 st\n"
PROCESSES = """KiB Mem : 80386564+total, 63324751+free, 17061812+used,  4125284 buff/cache
KiB Swap:  4194300 total,  4194300 free,        0 used. 63124212+avail Mem

   PID USER      PR  NI    VIRT    RES    SHR S  %CPU %MEM     TIME+ COMMAND
 48213 root      20   0   12.1g   3.2g  21412 S 387.5  0.4   9812:11 java
  9121 qemu      20   0   34.9g  32.1g  18920 S  35.2  4.2  40121:33 qemu-kvm
  1043 root      20   0  162312   4416   3520 R   1.1  0.0   0:00.21 top
"""


def test_host_contention_fires_on_busy_host_process(analyze_texts, seed_text):
    replace = dict(ALONE)
    replace[LAST_CPU_LINE] = LAST_CPU_LINE + PROCESSES
    result = analyze_texts(seed_text(ZSTACK, "before", HOST, replace))
    finding = next(f for f in result.findings if f.rule == "kvm.host_contention")
    assert [e.value for e in finding.evidence] == [387.5]  # java, not the guest's own qemu-kvm


def test_host_contention_fires_on_other_domain_xml_without_virsh_list(analyze_texts, seed_text):
    text = seed_text(OPENSTACK, "after", "cmp-node07.txt")
    xml = text.split("virsh dumpxml instance-0000012a\n", 1)[1].split("</domain>", 1)[0] + "</domain>"
    other = (
        xml.replace("instance-0000012a", "instance-0000012b")
        .replace("3f8a2c1e-7b4d-4e9a-9c2f-1d5e6a7b8c90", "0c2d4e6f-8a1b-4c3d-9e5f-7a8b9c0d1e2f")
        .split("  <cputune>", 1)[0]
        + "  <os>"
        + xml.split("  <os>", 1)[1]
    )
    text = text.replace("\n```", "\nroot@cmp-node07:~# virsh dumpxml instance-0000012b\n" + other + "\n```")
    result = analyze_texts(text)
    hosts = {f.evidence[0].value[0] for f in result.findings if f.rule == "kvm.host_contention"}
    assert "instance-0000012b" in hosts


SMALL_BIG_GUEST = """```console
[root@erp-db ~]# lscpu
Architecture:          x86_64
CPU op-mode(s):        32-bit, 64-bit
Byte Order:            Little Endian
CPU(s):                8
On-line CPU(s) list:   0-7
Thread(s) per core:    1
Core(s) per socket:    8
Socket(s):             1
NUMA node(s):          1
Vendor ID:             GenuineIntel
Model name:            Intel(R) Xeon(R) CPU E5-4607 0 @ 2.20GHz
Hypervisor vendor:     KVM
Virtualization type:   full
L1d cache:             32K
L1i cache:             32K
L2 cache:              256K
L3 cache:              12288K
NUMA node0 CPU(s):     0-7
[root@erp-db ~]# cat /proc/meminfo
MemTotal:       {mem_kb} kB
MemFree:         2097152 kB
MemAvailable:    8388608 kB
HugePages_Total:       0
HugePages_Free:        0
Hugepagesize:       2048 kB
```
"""


def test_guest_numa_missing_fires_for_guest_with_more_memory_than_a_host_node(analyze_texts, seed_text):
    host = seed_text(OPENSTACK, "before", "cmp-node07.txt")  # 4 nodes of 64 GB, 12 CPUs each
    big = analyze_texts(host, SMALL_BIG_GUEST.replace("{mem_kb}", "100663296"))  # 96 GiB, 8 vCPUs
    assert "kvm.guest_numa_missing" in big.rule_ids
    small = analyze_texts(host, SMALL_BIG_GUEST.replace("{mem_kb}", "16777216"))  # 16 GiB, 8 vCPUs
    assert "kvm.guest_numa_missing" not in small.rule_ids


def test_host_contention_from_one_top_sample_is_info(analyze_texts, seed_text):
    replace = dict(ALONE)
    replace[LAST_CPU_LINE] = LAST_CPU_LINE + PROCESSES
    result = analyze_texts(seed_text(ZSTACK, "before", HOST, replace))
    finding = next(f for f in result.findings if f.rule == "kvm.host_contention")
    assert finding.severity == "info" and "one top sample" in finding.explanation


def test_host_contention_ignores_the_collecting_commands(analyze_texts, seed_text):
    replace = dict(ALONE)
    replace[LAST_CPU_LINE] = LAST_CPU_LINE + PROCESSES.replace(" java\n", " sosreport\n")
    result = analyze_texts(seed_text(ZSTACK, "before", HOST, replace))
    assert "kvm.host_contention" not in result.rule_ids


def test_host_contention_ignores_the_libvirt_test_driver_domain(analyze_texts):
    virsh = shutil.which("virsh")
    if virsh is None:
        pytest.skip("virsh (libvirt-clients) is not installed")
    done = subprocess.run(
        [virsh, "-c", "test:///default", "dumpxml", "test"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    top = subprocess.run(["top", "-bn1"], capture_output=True, text=True, timeout=60).stdout
    text = (
        "```console\n$ virsh -c test:///default dumpxml test\n"
        + done.stdout.rstrip()
        + "\n$ top -bn1\n"
        + top.rstrip()
        + "\n```\n"
    )
    result = analyze_texts(text)
    assert not result.rule_ids & {"kvm.host_contention", "memory.hugepages_absent", "kvm.guest_numa_missing"}
    assert not [n for n in result.not_checked if n.rule.startswith("kvm.")]


ONE_CELL_96 = {
    "<vcpu placement='static' current='32'>128</vcpu>": "<vcpu placement='static'>96</vcpu>",
    "<topology sockets='4' cores='32' threads='1'/>": (
        "<topology sockets='2' cores='48' threads='1'/>\n"
        "    <numa>\n"
        "      <cell id='0' cpus='0-95' memory='33554432' unit='KiB'/>\n"
        "    </numa>"
    ),
}


def test_guest_numa_missing_fires_for_one_cell_spanning_96_vcpus_on_a_two_node_host(analyze_texts, seed_text):
    # seed 000's guest resized to 96 vCPUs with the single NUMA cell libvirt requires
    # for memory hot-plug: the guest sees one node, the host has two of 36 CPUs
    result = analyze_texts(seed_text(ZSTACK, "before", HOST, ONE_CELL_96))
    finding = next(f for f in result.findings if f.rule == "kvm.guest_numa_missing")
    assert "single guest NUMA cell holding all 96 vCPUs" in finding.explanation
    facts = {e.fact: e.value for e in finding.evidence}
    assert facts["cpus_per_host_node"] == 36
    assert facts["domains[8c1f5e2a0d9b4c6e9f3a7b2d1e4c6a80].numa_cells[0].cpus"] == 96


def test_guest_numa_missing_quiet_for_a_one_cell_guest_that_fits_a_host_node(analyze_texts, seed_text):
    # 8 vCPUs and 8 GiB fit one 36-CPU, 384 GiB host node: one cell is right (seed 000's
    # own fix gives its 32-vCPU guest one cell pinned to node 1)
    replace = dict(ONE_CELL_96)
    replace["<vcpu placement='static' current='32'>128</vcpu>"] = "<vcpu placement='static'>8</vcpu>"
    replace["<memory unit='KiB'>33554432</memory>"] = "<memory unit='KiB'>8388608</memory>"
    replace["<currentMemory unit='KiB'>33554432</currentMemory>"] = (
        "<currentMemory unit='KiB'>8388608</currentMemory>"
    )
    replace["<topology sockets='4' cores='32' threads='1'/>"] = (
        ONE_CELL_96["<topology sockets='4' cores='32' threads='1'/>"]
        .replace("0-95", "0-7")
        .replace("cores='48'", "cores='4'")
        .replace("33554432", "8388608")
    )
    result = analyze_texts(seed_text(ZSTACK, "before", HOST, replace))
    assert "kvm.guest_numa_missing" not in result.rule_ids
    assert "kvm.guest_numa_missing" in result.checked


def test_host_contention_from_a_process_busy_in_every_sample_is_a_warning(analyze_texts, seed_text):
    # two iterations of the same process list (top -bn2): java stays busy in both
    replace = dict(ALONE)
    replace[LAST_CPU_LINE] = LAST_CPU_LINE + PROCESSES + "\n" + PROCESSES
    result = analyze_texts(seed_text(ZSTACK, "before", HOST, replace))
    finding = next(f for f in result.findings if f.rule == "kvm.host_contention")
    assert finding.severity == "warning"
    assert [e.value for e in finding.evidence] == [387.5]  # one entry per process, its mean


# Hosts known only through ``virsh capabilities`` (libvirt's test driver: 2 cells
# of 8 CPUs with 2 and 4 GiB; tests/evaluation/_libvirt-definitions has the guests).
_EVAL = ROOT / "tests" / "evaluation"


def _eval_rules(name: str) -> set[str]:
    from collectors.archive import load_snapshot
    from engine.run import analyze

    return {f.rule for f in analyze(load_snapshot([_EVAL / name / "host"])).findings}


def test_capabilities_cells_place_pinned_vcpus_on_host_nodes():
    # 16 vCPUs pinned to host CPUs 0-15 = both cells, one guest node, memory bound to node 0
    assert "kvm.pinning_spans_nodes" in _eval_rules("56-kvm-pins-span-host-nodes")
    # the same host, a guest pinned inside cell 1 with memory on cell 1
    assert "kvm.pinning_spans_nodes" not in _eval_rules("59-kvm-flat-sockets-pinned")


def test_capabilities_cells_give_the_host_node_memory():
    # a 6 GiB guest without guest NUMA on cells of 2 and 4 GiB
    assert "kvm.guest_numa_missing" in _eval_rules("58-kvm-guest-larger-than-node")
    assert "kvm.guest_numa_missing" not in _eval_rules("20-libvirt-tuned-guest")


def test_host_contention_quiet_on_one_guest_xml_split_by_a_manual(analyze_texts):
    # Red Hat's zh-cn RHEL 8 guide: one guest's dumpxml cut into pieces by Chinese
    # explanations; the unnamed pieces are that guest, not other guests
    from tests.conftest import FIXTURES

    text = (FIXTURES / "published" / "redhat-zh-cn-rhel8-domain-xml-sample-table.txt").read_text(
        encoding="utf-8"
    )
    result = analyze_texts(text)
    assert "kvm.host_contention" not in result.rule_ids
    assert "kvm.cpu_model_hides_cache" in result.rule_ids


def test_emulator_unpinned_is_not_checked_on_a_fragment_cut_inside_cputune(analyze_texts):
    """hwloc#712 (round Q 2130): the paste stops at ``<vcp`` inside ``<cputune>``,
    where an ``<emulatorpin>`` could still follow: not checked, with the reason."""
    text = (
        ROOT / "tests/fixtures/published/roundq/hwloc-712-domain-xml-fragment-cut-in-cputune.txt"
    ).read_text()
    result = analyze_texts(text, names=["guest.xml"])
    assert "kvm.emulator_unpinned" not in result.rule_ids
    [skipped] = [n for n in result.not_checked if n.rule == "kvm.emulator_unpinned"]
    assert "cut after <cputune>" in skipped.reason
