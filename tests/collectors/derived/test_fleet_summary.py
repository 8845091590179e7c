"""The fleet summary (``collectors.derived.fleet.FleetSummary``): kept up to
date one member at a time, it must equal the summary of the same members built
anew, and the fleet rules must find over it exactly what they find over every
member's profile."""

from __future__ import annotations

import random

import pytest

from collectors.derived.fleet import (
    DRIFT_KEYS,
    BenchmarkResult,
    Cited,
    FleetProfile,
    FleetSummary,
    FleetView,
    profile_host,
)
from collectors.facts import SnapshotFacts
from engine.rules import RuleContext
from engine.rules.fleet import benchmark_spread, numa_config_drift
from engine.run import finding_to_dict


def _profile(rng: random.Random, label: str, labels: list[str]) -> FleetProfile:
    """A member with some of the compared settings (mostly the usual values,
    integers or strings) and a few benchmark results: STREAM in either case,
    timed results, zero results, results naming another host (gpcheckperf)."""
    drift = {
        key: Cited(
            rng.choice(["0", "0", "0", "1", "2", 0]), f"artifact{rng.randint(0, 3)}", rng.choice([None, 4])
        )
        for key in DRIFT_KEYS
        if rng.random() < 0.8
    }
    benchmarks = [
        BenchmarkResult(
            kind=rng.choice(["stream", "STREAM", "tpcc"]),
            name=rng.choice(["Triad", "triad", "Copy"]),
            unit=rng.choice(["MB/s", "s"]),
            value=rng.choice([0.0, 100.0, 100.0, 60.0, 150.0, rng.uniform(10, 200)]),
            line=rng.randint(1, 9),
            host=rng.choice([None, None, None, rng.choice(labels)]),
            artifact="stream",
        )
        for _ in range(rng.randint(0, 4))
    ]
    return FleetProfile(
        label=label,
        hostname=label,
        role=rng.choice([None, None, None, "guest", "segment"]),
        guest=rng.random() < 0.15,
        drift=drift,
        benchmarks=benchmarks,
    )


def _members(seed: int) -> tuple[random.Random, list[str], list[FleetProfile]]:
    rng = random.Random(seed)
    labels = [f"host{i:03d}" for i in range(rng.randint(2, 40))]
    return rng, labels, [_profile(rng, label, labels) for label in labels]


def _built_anew(labels: list[str], profiles: list[FleetProfile], ids: list[int]) -> FleetSummary:
    summary = FleetSummary()
    for i in ids:
        summary.add(i, (1, i), labels[i], profiles[i])
    return summary


@pytest.mark.parametrize("seed", range(40))
def test_a_summary_kept_up_to_date_equals_the_summary_built_anew(seed):
    rng, labels, profiles = _members(seed)
    ids = list(range(len(labels)))
    kept = FleetSummary()
    # members join in any order; some are replaced by a newer analysis (a new
    # profile object), some leave again
    for i in rng.sample(ids, len(ids)):
        kept.add(i, (1, i), labels[i], _profile(rng, labels[i], labels))
        kept.remove(i)
        kept.add(i, (1, i), labels[i], profiles[i])
        if rng.random() < 0.2:
            gone = 1000 + i
            kept.add(gone, (1, rng.randint(0, len(ids))), f"gone{i}", _profile(rng, f"gone{i}", labels))
            kept.remove(gone)
    assert kept.canonical() == _built_anew(labels, profiles, ids).canonical()
    assert kept.names() == [labels[i] for i in ids]


def _findings(ctx: RuleContext) -> list[dict]:
    return [finding_to_dict(f) for rule in (numa_config_drift, benchmark_spread) for f in rule(ctx)]


@pytest.mark.parametrize("seed", range(80))
def test_the_fleet_rules_find_over_a_summary_what_they_find_over_every_profile(seed):
    rng, labels, profiles = _members(seed)
    every = SnapshotFacts(
        hosts=[profile_host(p) for p in profiles], fleet_profiles={p.label: p for p in profiles}
    )
    # the first hosts analysed in full, the others through the summary
    front = rng.randint(0, min(3, len(labels)))
    summary = _built_anew(labels, profiles, list(range(front, len(labels))))
    summarised = SnapshotFacts(
        hosts=every.hosts[:front],
        fleet_profiles={p.label: p for p in profiles[:front]},
        fleet_summary=summary,
    )
    assert _findings(RuleContext(snapshot=summarised)) == _findings(RuleContext(snapshot=every))


def _usual(label: str, zone_reclaim: str = "0") -> FleetProfile:
    return FleetProfile(
        label=label,
        hostname=label,
        drift={
            "numa_nodes": Cited(4, "lscpu", 7),
            "vm.zone_reclaim_mode": Cited(zone_reclaim, "sysctl", 12),
        },
    )


def test_three_drifted_hosts_among_2000_are_named():
    drifted = {"seg0500", "seg1000", "seg1500"}
    summary = FleetSummary()
    for i in range(1, 2001):
        label = f"seg{i:04d}"
        summary.add(i, (1, -i), label, _usual(label, "1" if label in drifted else "0"))
    view = FleetView(FleetSummary.of([("seg2001", _usual("seg2001"))]), summary)
    assert view.drift_counts("vm.zone_reclaim_mode") == {"0": 1998, "1": 3}
    # the newest first, as the members are listed
    assert [name for name, _ in view.drift_rows("vm.zone_reclaim_mode", "1")] == [
        "seg1500",
        "seg1000",
        "seg0500",
    ]
    own = _usual("seg2001")
    ctx = RuleContext(
        snapshot=SnapshotFacts(
            hosts=[profile_host(own)], fleet_profiles={"seg2001": own}, fleet_summary=summary
        )
    )
    (drift,) = numa_config_drift(ctx)
    assert "1998 of 2001 hosts have 0" in drift.explanation
    assert "different: seg1500 (1), seg1000 (1), seg0500 (1)" in drift.explanation
    # the odd hosts, then the analysed host as the reference
    assert [(e.host, e.value) for e in drift.evidence] == [
        ("seg1500", "1"),
        ("seg1000", "1"),
        ("seg0500", "1"),
        ("seg2001", "0"),
    ]
    # a drifted host fixed (its newer analysis replaces it): two are left
    summary.remove(1000)
    summary.add(1000, (1, -1000), "seg1000", _usual("seg1000"))
    (drift,) = numa_config_drift(ctx)
    assert "different: seg1500 (1), seg0500 (1)" in drift.explanation


def test_without_a_majority_every_host_is_listed():
    summary = FleetSummary()
    for i, value in enumerate(["0", "1", "0", "1"]):
        summary.add(i, (1, i), f"h{i}", _usual(f"h{i}", value))
    ctx = RuleContext(snapshot=SnapshotFacts(hosts=[], fleet_summary=summary))
    (drift,) = numa_config_drift(ctx)
    assert "(0: h0, h2; 1: h1, h3)" in drift.explanation
    assert [e.host for e in drift.evidence] == ["h0", "h2", "h1", "h3"]
