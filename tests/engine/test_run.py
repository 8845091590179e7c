"""The engine: skipped rules with reasons, failing rules reported, severity
order, and the --json shape of DESIGN.md."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from collectors.archive import load_snapshot
from collectors.facts import ArtifactError, HostFacts, SnapshotFacts
from engine.rules import REGISTRY, load_all
from engine.run import (
    ENGINE_VERSION,
    FACT_CHECKS,
    FACT_SOURCES,
    HOST_FACT_CHECKS,
    analyze,
    commands_for,
    impact_of,
    merge_identical,
    result_to_json,
)
from tests.conftest import FIXTURES

ZSTACK_BEFORE = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before"
# rules added with their public incidents (tests/engine/rules/test_rules_hostside.py)
HOST_SIDE_RULES = {
    "memory.thp_on_latency_db",
    "memory.thp_defrag_always",
    "memory.thp_off_for_mongodb_tcmalloc",
    "numa.zone_reclaim_on_cache_host",
    "memory.swappiness_zero_oom",
    "memory.overcommit_policy",
    "net.somaxconn_low",
    "numa.process_placement",
    "redis.fork_latency",
    "kvm.virtio_net_single_queue",
    # database-side rules (issue 27, branch rules2)
    "postgresql.huge_pages_unused",
    "oracle.sga_not_in_huge_pages",
    "mongodb.max_map_count_low",
    "memory.hugepages_unused",
    # tests/engine/rules/test_rules_mysql_flush.py (branch rules60)
    "mysql.flush_method_buffered",
}
# host tuning rules of issue 27 (tests/engine/rules/test_rules_host_tuning.py, test_rules_io_scheduler.py,
# test_rules_cpu_idle.py): public outputs, no founding case
HOST_TUNING_RULES = {
    "memory.direct_reclaim_stalls",
    "kvm.ksm_active",
    "cpu.governor_not_performance",
    "net.irq_single_cpu",
    "kernel.known_regression",
    "disk.io_scheduler",
    "cpu.deep_cstates",
    # tests/engine/rules/test_rules_swap.py
    "memory.swap_activity",
    "memory.page_tables_large",
    # domain XML rules of the RH virtualization tuning guide (branch ruleskvm)
    "kvm.disk_cache_mode",
    "kvm.vhost_net_disabled",
}


def _zstack():
    return load_snapshot(sorted(ZSTACK_BEFORE.iterdir()))


def test_every_rule_of_the_catalogue_is_registered_with_known_facts():
    registry = load_all()
    assert len(registry) == 35 + len(HOST_SIDE_RULES) + len(HOST_TUNING_RULES)
    # the two rules DESIGN.md lists without a founding case, and the host-side rules of
    # data stores (issue 27), which are tested on public incidents instead
    unseeded = (
        {"numa.memoryless_node", "memory.dimm_population_unbalanced"} | HOST_SIDE_RULES | HOST_TUNING_RULES
    )
    for spec in registry.values():
        assert spec.requires, spec.id
        assert set(spec.requires) <= set(FACT_CHECKS), spec.id
        assert spec.measures and spec.title_zh and spec.condition and spec.rationale, spec.id
        # the rule pages in 中文 show these instead of the English text
        for text in (spec.title_zh, spec.condition_zh, spec.rationale_zh):
            assert re.search(r"[\u4e00-\u9fff]", text), spec.id
        assert bool(spec.seeds) == (spec.id not in unseeded), spec.id


def test_a_rule_text_is_shown_in_the_readers_language_with_english_as_fallback():
    spec = load_all()["net.netem_delay"]
    assert spec.text("condition", zh=True) == spec.condition_zh != spec.condition
    assert spec.text("rationale", zh=False) == spec.rationale
    assert spec.text("title", zh=True) == spec.title_zh
    assert replace(spec, rationale_zh="").text("rationale", zh=True) == spec.rationale


def test_missing_facts_are_reported_as_skipped_with_the_reason():
    result = analyze(SnapshotFacts(hosts=[HostFacts(label="empty")]))
    assert result.findings == []
    skipped = dict(result.skipped)
    assert set(skipped) == set(load_all())
    assert skipped["kvm.vcpus_unpinned"] == "missing domains"
    assert skipped["fleet.benchmark_spread"] == "missing benchmarks"
    assert skipped["kvm.guest_numa_missing"] == "missing domains or guest"


def test_a_raising_rule_is_reported_and_the_others_still_run():
    registry = load_all()

    def broken(ctx):
        raise ZeroDivisionError("boom")

    rules = dict(registry)
    rules["numa.node_memory_imbalance"] = replace(registry["numa.node_memory_imbalance"], func=broken)
    result = analyze(_zstack(), rules=rules)
    skipped = dict(result.skipped)
    assert skipped["numa.node_memory_imbalance"] == "error: ZeroDivisionError: boom"
    assert "kvm.vcpus_unpinned" in result.rule_ids
    assert "numa.node_memory_imbalance" not in result.rule_ids


def test_a_rule_requiring_an_unknown_fact_is_an_error_not_a_crash():
    spec = replace(REGISTRY["net.netem_delay"], requires=("no_such_fact",))
    result = analyze(_zstack(), rules={"net.netem_delay": spec})
    assert result.skipped[0][0] == "net.netem_delay"
    assert result.skipped[0][1].startswith("error: KeyError")


def test_findings_are_sorted_by_severity():
    result = analyze(
        load_snapshot(sorted((FIXTURES / "seeds" / "oceanbase-bmsql-tuning" / "before").iterdir()))
    )
    severities = [f.severity for f in result.findings]
    assert severities[0] == "critical"
    order = {"critical": 0, "warning": 1, "info": 2}
    assert severities == sorted(severities, key=order.__getitem__)
    assert result.engine_version == ENGINE_VERSION


def test_result_to_json_has_the_design_shape():
    snapshot = _zstack()
    snapshot.hosts[0].errors.append(ArtifactError(artifact="x.txt", message="bad", line=3))
    result = analyze(snapshot)
    payload = json.loads(json.dumps(result_to_json(snapshot, result)))
    assert set(payload) >= {
        "facts",
        "findings",
        "skipped",
        "similar_cases",
        "errors",
        "checked",
        "not_checked",
    }
    assert len(payload["facts"]["hosts"]) == 2
    finding = payload["findings"][0]
    assert set(finding) == {
        "rule",
        "severity",
        "title",
        "title_zh",
        "explanation",
        "explanation_zh",
        "evidence",
        "measures",
        "host",
        "impact",
    }
    assert set(finding["evidence"][0]) == {"fact", "value", "artifact", "line", "host"}
    assert {"artifact": "x.txt", "message": "bad", "line": 3} in payload["errors"]
    assert isinstance(payload["similar_cases"], list)
    assert {"rule": "net.netem_delay", "reason": "missing tc"} in payload["skipped"]


# The measure and case slugs shared with the knowledge base (a stable contract).
MEASURE_SLUGS = set(
    [
        "disable-cpu-hotplug",
        "pin-vcpus",
        "pin-emulator",
        "pin-iothreads",
        "guest-numa-topology",
        "numatune-memory-binding",
        "isolate-host-cpus",
        "static-hugepages",
        "zone-reclaim-mode",
        "drop-caches-before-benchmark",
        "numactl-local-alloc",
        "cpu-mode-host-passthrough",
        "flavor-numa-topology",
        "enable-numa-balancing",
        "shrink-buffer-pool",
        "disable-numa-interleave",
        "buffer-pool-dump-load",
        "mysql-large-pages",
        "mariadb-numactl-interleave",
        "remove-netem",
        "irq-softirq-affinity",
        "tune-cpu-quota-concurrency",
        "tune-net-thread-count",
        "odp-routing-mode-oceanbase",
        "enable-numa-in-firmware",
        "rebalance-host-load",
        "align-host-numa-config",
        "disk-io-review",
        "colocate-proxy-and-observers",
        # issue 27
        "disk-cache-none",
        "enable-vhost-net",
        "disable-thp",
        "thp-defrag-defer",
        "enable-thp-mongodb8",
        "zone-reclaim-off",
        "swappiness-one",
        "overcommit-for-store",
        "raise-somaxconn",
        "interleave-db-memory",
        "redis-fork-latency",
        "virtio-net-multiqueue",
        "postgresql-huge-pages",
        "oracle-sga-huge-pages",
        "raise-max-map-count",
        "size-hugepages-to-use",
        # host-side rules (issue 27, branch rules)
        "thp-defrag-never",
        "watermark-scale-factor",
        "disable-ksm",
        "cpu-governor-performance",
        "rps-rfs",
        "kernel-update-known-regression",
        "io-scheduler-deadline",
        "limit-cstates-c1",
        # memory.swap_activity (branch rulesmem)
        "reduce-memory-demand",
        "disable-swap-for-db",
        # mysql.flush_method_buffered (branch rules60)
        "innodb-flush-method-o-direct",
    ]
)
CASE_SLUGS = {
    "zstack-mariadb-v2v",
    "kunpeng-stream-zone-reclaim",
    "openstack-kvm-crm-cpu",
    "percona-numa-interleave-startup",
    "oceanbase-bmsql-tuning",
}


def test_rules_point_to_catalogued_measures_and_founding_cases():
    for spec in load_all().values():
        assert set(spec.measures) <= MEASURE_SLUGS, spec.id
        assert set(spec.seeds) <= CASE_SLUGS, spec.id


# ------------------------------------------------------------ not checked, merge, impact

SEEDS = FIXTURES / "seeds"


def _seed_without(slug: str, name: str, start: str, end: str, tmp_path):
    """The founding snapshot with one artifact cut out (from the line starting with
    ``start`` up to the line starting with ``end``); the other hosts unchanged."""
    folder = SEEDS / slug / "before"
    paths = []
    for path in sorted(folder.iterdir()):
        text = path.read_text(encoding="utf-8")
        if path.name == name:
            head, rest = text.split(start, 1)
            assert end in rest, (start, end)
            text = head + end + rest.split(end, 1)[1]
        copy = tmp_path / path.name
        copy.write_text(text, encoding="utf-8")
        paths.append(copy)
    return analyze(load_snapshot(paths))


REMOVED = [
    # (seed, host file, artifact cut: first line .. next kept line, rule, host, a command it must offer)
    (
        "zstack-mariadb-v2v",
        "zstack-9.txt",
        "[root@zstack-9 ~]# virsh dumpxml",
        "[root@zstack-9 ~]# cat /proc/cmdline",
        "kvm.vcpus_unpinned",
        "zstack-9",
        "sudo virsh dumpxml <domain>",
    ),
    (
        "kunpeng-stream-zone-reclaim",
        "gp-sdw03.txt",
        "[root@gp-sdw03 ~]# sysctl -a",
        "```",
        "numa.local_node_pagecache_pressure",
        "gp-sdw03",
        "sysctl -a",
    ),
    (
        "openstack-kvm-crm-cpu",
        "cmp-node07.txt",
        "root@cmp-node07:~# numastat",
        "root@cmp-node07:~#\n```",
        "numa.remote_access_dominant",
        "cmp-node07",
        "numastat",
    ),
    (
        "percona-numa-interleave-startup",
        "db-3301.txt",
        "[root@db-3301 ~]# mysql -S",
        "```",
        "mysql.large_pages_off",
        "db-3301",
        "mysql -u root -p -e 'SHOW GLOBAL VARIABLES'",
    ),
    (
        "oceanbase-bmsql-tuning",
        "obs-197.txt",
        "$tc qdisc list",
        "$top",
        "net.netem_delay",
        "obs-197",
        "tc -s qdisc show",
    ),
]


@pytest.mark.parametrize(("slug", "name", "start", "end", "rule", "host", "command"), REMOVED)
def test_a_founding_snapshot_missing_an_artifact_says_what_was_not_checked(
    slug, name, start, end, rule, host, command, tmp_path
):
    result = _seed_without(slug, name, start, end, tmp_path)
    assert (rule, host) not in {(f.rule, f.host) for f in result.findings}
    entry = next(n for n in result.not_checked if n.rule == rule and n.host == host)
    assert command in entry.commands
    assert entry.reason and entry.reason_zh
    payload = json.loads(json.dumps(result_to_json(load_snapshot([]), result, similar_cases=[])))
    assert {"rule": rule, "host": host} in [
        {"rule": n["rule"], "host": n["host"]} for n in payload["not_checked"]
    ]


def test_the_founding_snapshots_ask_for_nothing_they_already_have():
    for slug in ("zstack-mariadb-v2v", "openstack-kvm-crm-cpu", "oceanbase-bmsql-tuning"):
        result = analyze(load_snapshot(sorted((SEEDS / slug / "before").iterdir())))
        fired = {(f.rule, f.host) for f in result.findings}
        assert not [n for n in result.not_checked if (n.rule, n.host) in fired]
        assert not [n for n in result.not_checked if n.rule in ("net.netem_delay", "kvm.vcpus_unpinned")]


def test_missing_tools_come_with_the_package_per_distribution_family():
    commands = commands_for(["numastat", "memory_devices"])
    assert "sudo dmidecode -t memory" in commands
    assert any(c.startswith("yum install -y numactl") and "openEuler" in c for c in commands)
    assert any(c.startswith("apt-get install -y numactl") and "Debian/Ubuntu" in c for c in commands)
    assert any(c.startswith("zypper install -y dmidecode") and "SUSE" in c for c in commands)
    assert set(FACT_SOURCES) >= set(HOST_FACT_CHECKS)


def test_findings_are_ordered_by_impact_largest_first():
    result = analyze(load_snapshot(sorted((SEEDS / "oceanbase-bmsql-tuning" / "before").iterdir())))
    impacts = [f.impact for f in result.findings]
    assert impacts == sorted(impacts, reverse=True)
    assert result.findings[0].rule == "net.netem_delay" and result.findings[0].impact >= 100
    for f in result.findings:
        assert f.impact == impact_of(f) and f.impact > 0
    ties = [(f.rule, f.host) for f in result.findings if f.impact == result.findings[-1].impact]
    assert ties == sorted(ties)
    payload = result_to_json(load_snapshot([]), result, similar_cases=[])
    assert [f["impact"] for f in payload["findings"]] == impacts


def test_identical_findings_are_merged_with_every_citation():
    from engine.rules import Evidence, RuleFinding

    def netem(line):
        return RuleFinding(
            rule="net.netem_delay",
            severity="critical",
            title="t",
            explanation="e",
            evidence=[Evidence(fact="tc.qdiscs[bond0].delay_ms", value=1.0, artifact=f"a{line}", line=line)],
            host="obs-197",
        )

    other = netem(9)
    other.evidence[0].value = 2.0
    merged = merge_identical([netem(42), netem(47), other])
    assert len(merged) == 2
    assert [e.line for e in merged[0].evidence] == [42, 47]
