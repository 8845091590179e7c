"""The engine: skipped rules with reasons, failing rules reported, severity
order, and the --json shape of DESIGN.md."""

from __future__ import annotations

import json
from dataclasses import replace

from collectors.archive import load_snapshot
from collectors.facts import ArtifactError, HostFacts, SnapshotFacts
from tests.conftest import FIXTURES
from triage.engine import ENGINE_VERSION, FACT_CHECKS, analyze, result_to_json
from triage.rules import REGISTRY, load_all

ZSTACK_BEFORE = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before"


def _zstack():
    return load_snapshot(sorted(ZSTACK_BEFORE.iterdir()))


def test_every_rule_of_the_catalogue_is_registered_with_known_facts():
    registry = load_all()
    assert len(registry) == 35
    # the two rules DESIGN.md lists without a founding case
    unseeded = {"numa.memoryless_node", "memory.dimm_population_unbalanced"}
    for spec in registry.values():
        assert spec.requires, spec.id
        assert set(spec.requires) <= set(FACT_CHECKS), spec.id
        assert spec.measures and spec.title_zh and spec.condition and spec.rationale, spec.id
        assert bool(spec.seeds) == (spec.id not in unseeded), spec.id


def test_missing_facts_are_reported_as_skipped_with_the_reason():
    result = analyze(SnapshotFacts(hosts=[HostFacts(label="empty")]))
    assert result.findings == []
    skipped = dict(result.skipped)
    assert set(skipped) == set(load_all())
    assert skipped["kvm.vcpus_unpinned"] == "missing domains"
    assert skipped["fleet.benchmark_spread"] == "missing cluster, benchmarks"
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
