"""Fleet rules on the rebuilt Kunpeng cluster (four host transcripts)."""

from __future__ import annotations

from tests.conftest import FIXTURES

KUNPENG = "kunpeng-stream-zone-reclaim"
HOSTS = [f"gp-sdw{i:02d}.txt" for i in range(1, 5)]


def _cluster(seed_text, state, edits=None):
    edits = edits or {}
    return [seed_text(KUNPENG, state, name, edits.get(name)) for name in HOSTS]


def test_benchmark_spread_fires_on_stream_15000_vs_6000(analyze_texts, seed_text):
    result = analyze_texts(*_cluster(seed_text, "before"))
    findings = [f for f in result.findings if f.rule == "fleet.benchmark_spread"]
    assert len(findings) == 1
    assert findings[0].host == "cluster"
    values = sorted(e.value for e in findings[0].evidence)
    assert values[0] < 6200 and values[-1] > 15000


def test_benchmark_spread_quiet_when_hosts_agree(analyze_texts, seed_text):
    assert "fleet.benchmark_spread" not in analyze_texts(*_cluster(seed_text, "after")).rule_ids


def test_benchmark_spread_needs_results_of_two_hosts(analyze_texts, seed_text):
    result = analyze_texts(seed_text(KUNPENG, "before", "gp-sdw03.txt"))
    assert "fleet.benchmark_spread" not in result.rule_ids


def test_benchmark_spread_compares_the_hosts_of_one_gpcheckperf_report(analyze_texts):
    # published gpcheckperf -v report (tests/fixtures/commands/README.md): three segment
    # hosts tested from one, stream Copy 8890.95 MB/s on gpsdw2 against 18413.74 on gpsdw3
    text = (FIXTURES / "commands" / "gpcheckperf_gpsdw_indented.txt").read_text(encoding="utf-8")
    finding = next(f for f in analyze_texts(text).findings if f.rule == "fleet.benchmark_spread")
    assert "on gpsdw2 to 18413.7 MB/s on gpsdw3 (2.1x)" in finding.explanation


def test_numa_config_drift_fires_on_one_host_with_other_zone_reclaim(analyze_texts, seed_text):
    edits = {"gp-sdw02.txt": {"vm.zone_reclaim_mode = 0": "vm.zone_reclaim_mode = 1"}}
    result = analyze_texts(*_cluster(seed_text, "before", edits))
    finding = next(f for f in result.findings if f.rule == "fleet.numa_config_drift")
    assert "vm.zone_reclaim_mode" in finding.explanation
    assert "3 of 4 hosts have 0; different: gp-sdw02 (1)" in finding.explanation
    # the odd host out, then one host of the majority as the reference
    assert [(e.host, e.value) for e in finding.evidence] == [("gp-sdw02", "1"), ("gp-sdw01", "0")]


def test_numa_config_drift_without_a_majority_cites_every_host(analyze_texts, seed_text):
    # after the fix STREAM agrees on every host: no benchmark tells a better group
    edits = {name: {"vm.zone_reclaim_mode = 1": "vm.zone_reclaim_mode = 0"} for name in HOSTS[:2]}
    result = analyze_texts(*_cluster(seed_text, "after", edits))
    finding = next(f for f in result.findings if f.rule == "fleet.numa_config_drift")
    assert "0: gp-sdw01, gp-sdw02; 1: gp-sdw03, gp-sdw04" in finding.explanation
    assert sorted(e.host for e in finding.evidence) == ["gp-sdw01", "gp-sdw02", "gp-sdw03", "gp-sdw04"]
    assert finding.affected == []  # no host singled out: stored on every host


def test_numa_config_drift_is_judged_against_the_hosts_the_benchmark_does_not_find_slow(
    analyze_texts, seed_text
):
    """Issue 25: a tie of two fast hosts at 0 and two slow ones at 1 is no tie
    once STREAM tells the better hosts: the slow hosts differ from them."""
    edits = {name: {"vm.zone_reclaim_mode = 0": "vm.zone_reclaim_mode = 1"} for name in HOSTS[2:]}
    result = analyze_texts(*_cluster(seed_text, "before", edits))
    finding = next(f for f in result.findings if f.rule == "fleet.numa_config_drift")
    assert "2 of the 2 hosts that stream Triad does not find slow have 0" in finding.explanation
    assert "different: gp-sdw03 (1), gp-sdw04 (1)" in finding.explanation
    assert finding.affected == ["gp-sdw03", "gp-sdw04"]
    assert [e.host for e in finding.evidence] == ["gp-sdw03", "gp-sdw04", "gp-sdw01"]


def test_numa_config_drift_never_makes_the_fast_host_the_odd_one_out(analyze_texts, seed_text):
    """Issue 25 point 7 for the settings: two slow hosts at 0 and the fixed,
    fast one at 1 (its after-snapshot). The majority (0) is the slow hosts':
    judged against it, the fast host was the one that differed."""
    texts = [seed_text(KUNPENG, "before", h) for h in ("gp-sdw03.txt", "gp-sdw04.txt")]
    texts.append(seed_text(KUNPENG, "after", "gp-sdw01.txt"))
    finding = next(f for f in analyze_texts(*texts).findings if f.rule == "fleet.numa_config_drift")
    assert finding.affected == ["gp-sdw03", "gp-sdw04"]
    assert "1 of the 1 hosts that stream Triad does not find slow have 1" in finding.explanation
    assert "different: gp-sdw03 (0), gp-sdw04 (0)" in finding.explanation


def test_benchmark_spread_names_the_slow_hosts(analyze_texts, seed_text):
    result = analyze_texts(*_cluster(seed_text, "before"))
    finding = next(f for f in result.findings if f.rule == "fleet.benchmark_spread")
    assert "2 of 4 hosts are 1.5x or more worse than the best: gp-sdw03 (6104.7), gp-sdw04 (6104.7)" in (
        finding.explanation
    )
    assert "gp-sdw03" in finding.explanation_zh
    # the slow hosts, then the best host as the reference
    assert [e.host for e in finding.evidence] == ["gp-sdw03", "gp-sdw04", "gp-sdw01"]


def test_numa_config_drift_quiet_on_identical_hosts(analyze_texts, seed_text):
    assert "fleet.numa_config_drift" not in analyze_texts(*_cluster(seed_text, "before")).rule_ids
