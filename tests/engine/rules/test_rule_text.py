"""A rule's text in the reader's language is chosen in one place
(``engine.rules.in_language``): the report page, the Markdown report, the
wizard's findings and verify steps and the session summary agree, for every
Chinese language tag, and fall back to English where a text has no Chinese."""

from __future__ import annotations

import pytest
from django.template import Context, Template

from config.language import in_language, reads_chinese
from engine.rules import load_all, rule_title
from triage.models import Finding, Snapshot
from triage.reports import MARKUPS, _not_checked, report_language
from triage.views import _case_views, _history, not_checked_items
from troubleshoot.findings import MergedFinding

RULE = "kvm.vcpu_hotplug_enabled"
ZH_TAGS = ["zh-hans", "zh-Hans", "zh-CN", "zh"]
EN_TAGS = ["en", "en-us", "", None]


def test_chinese_tags_read_chinese_and_others_english():
    assert all(reads_chinese(tag) for tag in ZH_TAGS)
    assert not any(reads_chinese(tag) for tag in EN_TAGS)
    assert [report_language(tag) for tag in ZH_TAGS + EN_TAGS] == ["zh"] * 4 + ["en"] * 4


def test_rule_titles_of_every_registered_rule():
    for rule_id, spec in load_all().items():
        assert rule_title(rule_id, zh=False) == spec.title
        assert rule_title(rule_id, zh=True) == (spec.title_zh or spec.title)
        assert spec.text("title", True) == rule_title(rule_id, zh=True)
    assert rule_title("no.such_rule", zh=True) == ""


@pytest.mark.parametrize("title_zh", ["虚拟机开启了 CPU/内存热插拔", ""])
def test_stored_merged_and_rendered_findings_agree(title_zh):
    spec = load_all()[RULE]
    text = {
        "rule": RULE,
        "severity": spec.severity,
        "title": spec.title,
        "title_zh": title_zh,
        "explanation": "hotplug is on",
        "explanation_zh": "",
    }
    stored, merged = Finding(**text), MergedFinding(**text)
    page = Template("{% load triage_labels %}{{ f|title_in:language }}|{{ f|explanation_in:language }}")
    for tag in [*ZH_TAGS, "en"]:
        want = (title_zh or spec.title) if reads_chinese(tag) else spec.title
        assert in_language(spec.title, title_zh, reads_chinese(tag)) == want
        assert stored.localized_title(tag) == merged.localized_title(tag) == want
        # no Chinese explanation: the English one, in both languages
        assert stored.localized_explanation(tag) == merged.localized_explanation(tag) == "hotplug is on"
        for f in (stored, merged):
            assert page.render(Context({"f": f, "language": tag})) == f"{want}|hotplug is on"


def test_not_checked_title_and_reason_on_the_page_and_in_the_report():
    spec = load_all()[RULE]
    snapshot = Snapshot(
        status=Snapshot.Status.DONE,
        not_checked=[
            {"rule": RULE, "reason": "no domain XML", "reason_zh": "", "commands": ["virsh dumpxml vm1"]},
            {"rule": "retired.rule", "reason": "gone", "reason_zh": "已移除"},
        ],
    )
    [page, retired] = not_checked_items([snapshot], zh=True)
    assert (page["title"], page["reason"]) == (spec.title_zh, "no domain XML")
    assert (retired["title"], retired["reason"]) == ("retired.rule", "已移除")
    # report.md's rows (templates/triage/report.txt writes "`rule` title: reason")
    rows = _not_checked(MARKUPS["markdown"], snapshot, True)
    assert [(r["rule"], r["title"], r["reason"]) for r in rows] == [
        (RULE, spec.title_zh, "no domain XML"),
        ("retired.rule", "", "已移除"),
    ]
    assert rows[0]["commands"] == [MARKUPS["markdown"].command("virsh dumpxml vm1")]


def test_earlier_analyses_and_similar_cases_in_the_readers_language():
    snapshot = Snapshot(
        history=[
            {
                "finished_at": "2026-11-01T10:00:00+00:00",
                "findings": [
                    {"rule": RULE, "title": "Hotplug on", "title_zh": "开启了热插拔"},
                    {"rule": "swap.in_use", "title": "Swap in use", "title_zh": ""},
                    {"rule": "numa.single_node"},
                ],
            }
        ]
    )
    [entry] = _history(snapshot, zh=True)
    assert [f["shown"] for f in entry["findings"]] == ["开启了热插拔", "Swap in use", "numa.single_node"]
    [entry] = _history(snapshot, zh=False)
    assert [f["shown"] for f in entry["findings"]] == ["Hotplug on", "Swap in use", "numa.single_node"]
    cases = [
        {"slug": "numa-a", "title": "NUMA A", "title_zh": "NUMA 甲"},
        {"slug": "numa-b", "title": "NUMA B"},
    ]
    assert [c["title_shown"] for c in _case_views(cases, zh=True)] == ["NUMA 甲", "NUMA B"]
    assert [c["title_shown"] for c in _case_views(cases, zh=False)] == ["NUMA A", "NUMA B"]
