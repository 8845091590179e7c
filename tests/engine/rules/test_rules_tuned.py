"""Issue 25: the balancing and zone-reclaim advice follows the host's TuneD
profile (tuned-adm output, tests/fixtures/published/README.md) and says which
guidance it follows."""

from __future__ import annotations

from collectors.archive import load
from engine.remedies import remedies_for_host
from tests.conftest import FIXTURES

ZSTACK = "zstack-mariadb-v2v"
KUNPENG = "kunpeng-stream-zone-reclaim"
PUBLISHED = FIXTURES / "published"
# the oracle host's `tuned-adm active` (tuned-oracle-transcript.txt), under this host's prompt
ORACLE = "\n{prompt} tuned-adm active\nCurrent active profile: oracle\n"


def _tuned_lines(name: str, prompt: str) -> str:
    """A published tuned-adm output under ``prompt`` (its own prompt dropped)."""
    lines = (PUBLISHED / name).read_text(encoding="utf-8").splitlines()
    return f"\n{prompt} {lines[0].split('# ', 1)[1]}\n" + "\n".join(lines[1:]) + "\n"


def _balancing_off(seed_text) -> str:
    return seed_text(
        ZSTACK, "before", "zstack-9.txt", {"kernel.numa_balancing = 1": "kernel.numa_balancing = 0"}
    )


def test_balancing_off_without_a_tuned_profile_says_which_profiles_turn_it_off(analyze_texts, seed_text):
    finding = next(
        f for f in analyze_texts(_balancing_off(seed_text)).findings if f.rule == "numa.balancing_disabled"
    )
    assert "No TuneD profile was in the snapshot" in finding.explanation
    assert "sap-hana, hpc-compute and network-latency" in finding.explanation


def test_balancing_off_is_the_oracle_profiles_choice(analyze_texts, seed_text):
    text = _balancing_off(seed_text) + ORACLE.format(prompt="[root@zstack-9 ~]#")
    result = analyze_texts(text)
    assert "numa.balancing_disabled" not in result.rule_ids
    assert "numa.balancing_disabled" in result.checked


def test_balancing_off_under_a_profile_that_leaves_it_on_names_the_profile(analyze_texts, seed_text):
    text = _balancing_off(seed_text) + _tuned_lines(
        "tuned-adm-list-centos7-virtual-guest.txt", "[root@zstack-9 ~]#"
    )
    finding = next(f for f in analyze_texts(text).findings if f.rule == "numa.balancing_disabled")
    assert "The active TuneD profile (virtual-guest) does not turn it off." in finding.explanation
    assert any(e.fact == "tuned.profiles" and e.value == "virtual-guest" for e in finding.evidence)


def test_a_preset_profile_is_not_taken_for_the_hosts_tuning(analyze_texts, seed_text):
    lines = (PUBLISHED / "tuned-adm-list-preset-insights.txt").read_text(encoding="utf-8")
    text = _balancing_off(seed_text) + "\n[root@zstack-9 ~]# tuned-adm list\n" + lines
    finding = next(f for f in analyze_texts(text).findings if f.rule == "numa.balancing_disabled")
    assert "No TuneD profile was in the snapshot" in finding.explanation


def test_pagecache_pressure_on_an_oracle_host_does_not_turn_zone_reclaim_on(analyze_texts, seed_text):
    text = seed_text(KUNPENG, "before", "gp-sdw03.txt") + ORACLE.format(prompt="[root@gp-sdw03 ~]#")
    result = analyze_texts(text)
    finding = next(f for f in result.findings if f.rule == "numa.local_node_pagecache_pressure")
    assert finding.template == "database" and "oracle" in finding.explanation
    assert "zone-reclaim-mode" not in finding.measures
    host = load(text.encode(), name="gp-sdw03.txt", split=False).host
    remedies = remedies_for_host(host=host, rules={"numa.local_node_pagecache_pressure"})
    assert not any("vm.zone_reclaim_mode" in getattr(r, "text", "") for r in remedies)


def test_pagecache_pressure_names_the_profile_that_leaves_zone_reclaim_off(analyze_texts, seed_text):
    text = seed_text(KUNPENG, "before", "gp-sdw03.txt") + _tuned_lines(
        "tuned-adm-list-centos7-virtual-guest.txt", "[root@gp-sdw03 ~]#"
    )
    finding = next(f for f in analyze_texts(text).findings if f.rule == "numa.local_node_pagecache_pressure")
    assert finding.template == "general"
    assert "The active TuneD profile (virtual-guest) leaves it at the kernel's default" in finding.explanation
    host = load(text.encode(), name="gp-sdw03.txt", split=False).host
    (remedy,) = remedies_for_host(host=host, rules={"numa.local_node_pagecache_pressure"})
    assert "vm.zone_reclaim_mode = 1" in remedy.text
