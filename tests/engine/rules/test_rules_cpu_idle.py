"""cpu.deep_cstates (engine/rules/cpu_idle.py) on published ``cpupower
idle-info`` outputs (tests/fixtures/published/host, sources in
tests/fixtures/published/README.md)."""

from __future__ import annotations

from tests.conftest import FIXTURES

HOST = FIXTURES / "published" / "host"
RULE = "cpu.deep_cstates"


def _text(name: str) -> str:
    return (HOST / name).read_text(encoding="utf-8")


def _fired(result) -> list:
    return [f for f in result.findings if f.rule == RULE]


def test_fires_on_c1e_and_c6_enabled(analyze_texts):
    result = analyze_texts(_text("dcpae643du01-cpupower-idle-info.txt"))
    assert "cpu.deep_cstates" in result.rule_ids
    (f,) = _fired(result)
    assert f.values["states"] == "C1E, C6"
    assert f.values["deepest"] == "C6" and f.values["latency"] == 170 and f.values["allowed"] == 1
    assert f.severity == "info"
    assert [e.value for e in f.evidence] == [4, 170] and all(e.line for e in f.evidence)


def test_fires_on_c1e_left_enabled_with_c3_c6_disabled(analyze_texts):
    # tuned's latency profiles allow C1's 2 us: C1E (10 us) is still past it
    result = analyze_texts(_text("zh-notes-cpupower-performance-cstates-off.txt"))
    (f,) = _fired(result)
    assert f.values["states"] == "C1E" and f.values["latency"] == 10 and f.values["allowed"] == 2


def test_quiet_on_a_host_limited_to_c1(analyze_texts):
    result = analyze_texts(_text("test-server-cpupower-idle-poll-c1.txt"))
    assert RULE in result.checked
    assert "cpu.deep_cstates" not in result.rule_ids


def test_names_the_data_store(analyze_texts):
    ps = _text("this-vm-mariadb-redis-schedulers.txt").split("\n$ ps aux", 1)[1]
    result = analyze_texts(_text("dcpae643du01-cpupower-idle-info.txt") + "$ ps aux" + ps)
    (f,) = _fired(result)
    assert "mysql" in f.explanation and f.severity == "info"
