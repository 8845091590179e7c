"""OceanBase and ODP rules on seed 004's SQL client output."""

from __future__ import annotations

OB = "oceanbase-bmsql-tuning"
HOST = "obs-197.txt"


def _before(seed_text, **replace):
    return seed_text(OB, "before", HOST, replace or None)


def test_cpu_quota_concurrency_fires_on_16_cpu_observer(analyze_texts, seed_text):
    result = analyze_texts(_before(seed_text))
    finding = next(f for f in result.findings if f.rule == "oceanbase.cpu_quota_concurrency_high")
    assert {e.fact: e.value for e in finding.evidence} == {
        "oceanbase.parameters.cpu_quota_concurrency": 4,
        "oceanbase.parameters.cpu_count": 16,
    }


def test_cpu_quota_concurrency_quiet_after_tuning(analyze_texts, seed_text):
    assert "oceanbase.cpu_quota_concurrency_high" not in analyze_texts(seed_text(OB, "after", HOST)).rule_ids


def test_cpu_quota_concurrency_quiet_on_large_observer(analyze_texts, seed_text):
    # without cpu_count the observer is sized by the host's 96 logical CPUs
    text = _before(seed_text)
    head, rest = text.split("MySQL [oceanbase]> show parameters like 'cpu_count';", 1)
    text = (
        head
        + "MySQL [oceanbase]> show parameters like 'cpu_quota_concurrency';"
        + rest.split("MySQL [oceanbase]> show parameters like 'cpu_quota_concurrency';", 1)[1]
    )
    result = analyze_texts(text)
    assert "oceanbase.cpu_quota_concurrency_high" not in result.rule_ids
    assert "oceanbase.net_thread_count_high" not in result.rule_ids  # 32 <= 96 / 2


def test_net_thread_count_fires_and_clears(analyze_texts, seed_text):
    assert "oceanbase.net_thread_count_high" in analyze_texts(_before(seed_text)).rule_ids
    assert "oceanbase.net_thread_count_high" not in analyze_texts(seed_text(OB, "after", HOST)).rule_ids


def test_proxy_routing_fires_on_random(analyze_texts, seed_text):
    result = analyze_texts(_before(seed_text))
    finding = next(f for f in result.findings if f.rule == "oceanbase.proxy_routing_not_default")
    assert finding.evidence[0].value == "random"


def test_proxy_routing_quiet_on_oceanbase_mode(analyze_texts, seed_text):
    assert "oceanbase.proxy_routing_not_default" not in analyze_texts(seed_text(OB, "after", HOST)).rule_ids


def test_remote_plans_fire_at_47_percent(analyze_texts, seed_text):
    result = analyze_texts(_before(seed_text))
    finding = next(f for f in result.findings if f.rule == "oceanbase.remote_plans_high")
    assert finding.evidence[0].value == 1286613
    assert "47%" in finding.explanation


def test_remote_plans_quiet_when_routing_is_right(analyze_texts, seed_text):
    assert "oceanbase.remote_plans_high" not in analyze_texts(seed_text(OB, "after", HOST)).rule_ids
