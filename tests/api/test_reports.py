"""triage.reports: the Markdown report is complete in either language."""

from __future__ import annotations

import pytest

from triage import services
from triage.reports import LABELS, facts_summary, render_markdown, report_language

pytestmark = pytest.mark.django_db


def test_both_languages_have_every_label():
    assert set(LABELS["en"]) == set(LABELS["zh"])


@pytest.mark.parametrize(
    ("tag", "expected"),
    [("zh-hans", "zh"), ("zh-CN", "zh"), ("zh", "zh"), ("en-US", "en"), ("", "en"), (None, "en")],
)
def test_report_language(tag, expected):
    assert report_language(tag) == expected


def test_report_of_an_analysed_transcript(world):
    text = render_markdown(world.snapshot, language="en", base_url="https://casebook.example/")
    assert text.startswith("# Snapshot report: obs-197\n")
    assert f"- Full report: https://casebook.example/snapshots/{world.snapshot.pk}/" in text
    summary = facts_summary(world.snapshot.facts)
    assert f"| CPUs / sockets | {summary['cpus']} / {summary['sockets']} |" in text
    # Every current finding, with its rule, evidence lines and measures.
    for finding in world.snapshot.current_findings():
        assert f"`{finding.rule}` — {finding.title}" in text
        for slug in finding.measures:
            assert f"`{slug}`" in text
    assert "— transcript:" in text and "(line " in text
    zh = render_markdown(world.snapshot, language="zh-hans")
    assert "## 发现的问题" in zh and "Findings" not in zh and "Evidence" not in zh


def test_report_before_the_analysis(world):
    snap = services.create_snapshot(owner=world.users["engineer_a"], data=b"$ uptime\n", filename="u.txt")
    text = render_markdown(snap, language="en")
    assert "status: queued" in text and "## Findings" not in text
    assert "状态：排队中" in render_markdown(snap, language="zh")


def test_markdown_table_and_code_injection_is_neutralised(world):
    snap = world.snapshot
    snap.label = "evil | label\n# heading"
    text = render_markdown(snap, language="en")
    assert text.splitlines()[0] == "# Snapshot report: evil \\| label # heading"


def test_similar_cases_with_links_and_odd_slugs(world):
    world.snapshot.similar_cases = [
        {"slug": "oceanbase-bmsql-tuning", "score": 0.81, "shared_rules": ["net.netem_delay"], "title": "OB",
         "title_zh": "OB 压测"},
        {"slug": "not a slug/..", "score": "n/a", "shared_rules": []},
    ]  # fmt: skip
    text = render_markdown(world.snapshot, language="en", base_url="http://h")
    assert "- **OB** (`oceanbase-bmsql-tuning`, score 0.81) — http://h/cases/oceanbase-bmsql-tuning/" in text
    assert "  - shared findings: `net.netem_delay`" in text
    assert "`not a slug/..`, score —)" in text
    assert "**OB 压测**" in render_markdown(world.snapshot, language="zh", base_url="http://h")
