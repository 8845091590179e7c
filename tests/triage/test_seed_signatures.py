"""Each rebuilt founding snapshot produces exactly its expected signature, and
the snapshot after the fix clears the rules that fix addresses.

The fixtures (tests/fixtures/seeds/<slug>/{before,after}/) are real-format
transcripts: the seed's own command outputs plus the facts its text states,
one file per host, all files of a folder analysed as one snapshot.
"""

from __future__ import annotations

import pytest

from collectors.archive import load_snapshot
from engine.run import analyze
from tests.conftest import FIXTURES

SEED_FIXTURES = FIXTURES / "seeds"

EXPECTED_BEFORE = {
    "zstack-mariadb-v2v": {
        "kvm.vcpu_hotplug_enabled",
        "kvm.vcpus_unpinned",
        "kvm.emulator_unpinned",
        "kvm.iothread_unpinned",
        "kvm.guest_numa_missing",
        "kvm.memory_not_bound",
        "mysql.numa_interleave_unavailable",
        "numa.node_memory_imbalance",
        "memory.hugepages_absent",
        "kvm.host_contention",
        # the guest's 32 vCPUs share one virtio-net queue pair (info; not in the write-up)
        "kvm.virtio_net_single_queue",
        # the data disk vdb has no cache mode (info; not in the write-up)
        "kvm.disk_cache_mode",
    },
    "kunpeng-stream-zone-reclaim": {
        "numa.local_node_pagecache_pressure",
        "numa.high_remote_distance",
        "fleet.benchmark_spread",
    },
    "openstack-kvm-crm-cpu": {
        "kvm.cpu_model_hides_cache",
        "kvm.flat_socket_topology",
        "kvm.guest_numa_missing",
        "numa.remote_access_dominant",
    },
    "percona-numa-interleave-startup": {
        "memory.hugepages_absent",
        "mysql.numa_interleave_populate_startup",
        "mysql.buffer_pool_not_persisted",
        "mysql.large_pages_off",
    },
    "oceanbase-bmsql-tuning": {
        "net.netem_delay",
        "net.lan_rtt_high",
        "net.softirq_hotspot",
        "oceanbase.cpu_quota_concurrency_high",
        "oceanbase.net_thread_count_high",
        "oceanbase.proxy_routing_not_default",
        "oceanbase.remote_plans_high",
        "numa.single_node_multi_socket",
    },
}

# What the fix of each case (as its write-up describes it) clears ...
CLEARED_AFTER = {
    # hot-plug off, vCPUs pinned to node 1, vNUMA cell, emulatorpin/iothreadpin,
    # numatune memnode; the guest now lives in node 1, so interleaving is moot
    "zstack-mariadb-v2v": EXPECTED_BEFORE["zstack-mariadb-v2v"]
    - {
        "memory.hugepages_absent",
        "kvm.host_contention",
        "kvm.virtio_net_single_queue",
        "kvm.disk_cache_mode",
    },
    # vm.zone_reclaim_mode = 1 on every host
    "kunpeng-stream-zone-reclaim": {"numa.local_node_pagecache_pressure", "fleet.benchmark_spread"},
    # host-passthrough, 4 sockets x 8 cores, 4 guest nodes, SLES 12 with balancing
    "openstack-kvm-crm-cpu": EXPECTED_BEFORE["openstack-kvm-crm-cpu"],
    # large pages on, dump/load on (interleave kept: the pool is larger than a node)
    "percona-numa-interleave-startup": EXPECTED_BEFORE["percona-numa-interleave-startup"],
    # netem removed, softirqs spread, parameters 2/6, ODP routing oceanbase
    "oceanbase-bmsql-tuning": EXPECTED_BEFORE["oceanbase-bmsql-tuning"] - {"numa.single_node_multi_socket"},
}

# ... and what is still reported afterwards, with the reason.
REMAINING_AFTER = {
    # The write-up lists huge pages and CPU isolation as the next steps; the
    # other 4-5 guests still run unpinned on the host, and the newly pinned
    # guest now triggers the isolation advice (info).
    "zstack-mariadb-v2v": {
        "memory.hugepages_absent",
        "kvm.host_contention",
        "kvm.no_cpu_isolation",
        # the fix pinned the guest; its NIC still has one queue pair (info)
        "kvm.virtio_net_single_queue",
        # and its data disk still has no cache mode (info)
        "kvm.disk_cache_mode",
    },
    # Distance 32 vs 10 is the hardware; it stays as context (info).
    "kunpeng-stream-zone-reclaim": {"numa.high_remote_distance"},
    # the re-created guest's virtio NIC still has one queue pair (info, not in the write-up)
    "openstack-kvm-crm-cpu": {"kvm.virtio_net_single_queue"},
    "percona-numa-interleave-startup": set(),
    # The test box still runs with one NUMA node on two sockets; the write-up
    # does not change the firmware.
    "oceanbase-bmsql-tuning": {"numa.single_node_multi_socket"},
}


def _analyze(slug: str, state: str):
    folder = SEED_FIXTURES / slug / state
    paths = sorted(p for p in folder.iterdir() if p.is_file())
    assert paths, f"no fixture files in {folder}"
    snapshot = load_snapshot(paths)
    return snapshot, analyze(snapshot)


@pytest.mark.parametrize("slug", sorted(EXPECTED_BEFORE))
def test_before_produces_exactly_the_expected_signature(slug):
    _snapshot, result = _analyze(slug, "before")
    assert result.rule_ids == EXPECTED_BEFORE[slug]
    assert not [s for s in result.skipped if s[1].startswith("error")]


@pytest.mark.parametrize("slug", sorted(EXPECTED_BEFORE))
def test_after_clears_the_fixed_rules(slug):
    _snapshot, result = _analyze(slug, "after")
    assert not (result.rule_ids & CLEARED_AFTER[slug]), result.rule_ids & CLEARED_AFTER[slug]
    assert result.rule_ids == REMAINING_AFTER[slug]


@pytest.mark.parametrize("slug", sorted(EXPECTED_BEFORE))
def test_every_finding_cites_evidence_with_artifact_and_line(slug):
    _snapshot, result = _analyze(slug, "before")
    for finding in result.findings:
        assert finding.title and finding.title_zh and finding.explanation and finding.explanation_zh
        assert finding.measures, finding.rule
        assert finding.evidence, finding.rule
        for ev in finding.evidence:
            assert ev.artifact, (finding.rule, ev)
            assert ev.line, (finding.rule, ev)


def test_zstack_guest_is_judged_with_its_host_topology():
    _snapshot, result = _analyze("zstack-mariadb-v2v", "before")
    by_rule = {f.rule: f for f in result.findings}
    # the MariaDB guest has one node; the finding comes from the 2-node host it runs on
    assert by_rule["mysql.numa_interleave_unavailable"].host == "infoplus-db"
    contention = by_rule["kvm.host_contention"]
    assert len(contention.evidence[0].value) == 5  # the other running guests of virsh list


def test_kunpeng_pressure_only_on_the_slow_hosts():
    _snapshot, result = _analyze("kunpeng-stream-zone-reclaim", "before")
    pressed = {f.host for f in result.findings if f.rule == "numa.local_node_pagecache_pressure"}
    assert pressed == {"gp-sdw03", "gp-sdw04"}
    spread = next(f for f in result.findings if f.rule == "fleet.benchmark_spread")
    assert "Triad" in spread.explanation and "2.5x" in spread.explanation
