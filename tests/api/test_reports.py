"""triage.reports: the Markdown report is complete in either language."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.template.loader import get_template
from django.utils import translation
from django.utils.translation import gettext, pgettext

from collectors.archive import load_snapshot
from triage import reports, uploads
from triage.reports import facts_summary, render_markdown, render_report, report_language

pytestmark = pytest.mark.django_db


def _labels() -> list[tuple[str | None, str]]:
    """(context, text) of every label ``triage/reports.py`` and its template
    ``triage/report.txt`` write through gettext."""
    source = Path(reports.__file__).read_text()
    calls = re.findall(r'\b(?:_|gettext_lazy)\(\s*((?:"[^"]*"\s*)+)\)', source)
    plain = [(None, "".join(re.findall(r'"([^"]*)"', call))) for call in calls]
    labels = plain + re.findall(r'\bp?gettext(?:_lazy)?\(\s*"([^"]*)",\s*"([^"]*)"\)', source)
    template = Path(get_template("triage/report.txt").origin.name).read_text()
    for text, context in re.findall(r'{% translate "([^"]*)"(?: context "([^"]*)")? %}', template):
        labels.append((context or None, text))
    for block in re.findall(r"{% blocktranslate[^%]*%}(.*?){% endblocktranslate %}", template):
        labels.append((None, re.sub(r"{{ (\w+) }}", r"%(\1)s", block)))
    return labels


def test_both_languages_have_every_label():
    labels = _labels()
    assert len(labels) > 40
    with translation.override("zh-hans"):
        for context, text in labels:
            shown = pgettext(context, text) if context else gettext(text)
            assert shown != text or text == "CPU", (context, text)


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
    summary = facts_summary(world.snapshot.host_facts())
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
    snap = uploads.create_snapshot(owner=world.users["engineer_a"], data=b"$ uptime\n", filename="u.txt")
    text = render_markdown(snap, language="en")
    assert "status: queued" in text and "## Findings" not in text
    assert "状态：排队中" in render_markdown(snap, language="zh")


def test_markdown_table_and_code_injection_is_neutralised(world):
    snap = world.snapshot
    snap.label = "evil | label\n# heading"
    text = render_markdown(snap, language="en")
    assert text.splitlines()[0] == "# Snapshot report: evil \\| label # heading"


def test_report_template_writes_text_as_markup_not_html(world):
    """The template renders with autoescape off: Markdown, which renders HTML,
    gets the HTML characters of user text escaped; Jira wiki markup, which
    does not, only its own special characters."""
    snap = world.snapshot
    snap.status, snap.last_error = "failed", 'a < b & "c" | d\n`e`'
    assert render_markdown(snap, language="en").splitlines()[-1] == '> a &lt; b &amp; "c" \\| d `e`'
    jira = render_report(snap, language="en", markup="jira")
    assert jira.splitlines()[-1] == 'bq. a < b & "c" \\| d `e`'
    assert "&lt;" not in jira and "&quot;" not in jira


def test_markdown_export_escapes_html_in_labels_guest_names_and_errors(world):
    """report.md is pasted into trackers that render Markdown, HTML included:
    no value the report did not write itself reaches it as HTML."""
    snap = world.snapshot
    script, img = "<script>alert(1)</script>", "<img src=x onerror=alert(document.cookie)>"
    snap.label = f"db {script}"
    snap.errors = [{"artifact": f"guest-{img}.xml", "message": f"unreadable {img}"}]
    snap.save(update_fields=["label", "errors"])
    finding = snap.current_findings().first()
    finding.host = f"guest {img}"
    finding.explanation = f"the guest {img} has 32 vCPUs\n[click](javascript:alert(1)) {script}"
    finding.save(update_fields=["host", "explanation"])
    snap.tickets.create(
        key=f"OPS-1 {script}",
        url="https://jira.example/browse/OPS-1)<script>",
        added_by=world.users["engineer_a"],
    )

    text = world.api("engineer_a").get(f"/api/v1/snapshots/{snap.pk}/report.md").content.decode()
    # Code spans show their text as written (Markdown renders no HTML inside them) ...
    assert f"`guest-{img}.xml`" in text
    # ... and outside them there is no HTML, nor a link the user wrote.
    prose = re.sub(r"`[^`]*`", "", text)
    assert [line for line in prose.splitlines() if "<script" in line or "<img" in line] == []
    assert not re.search(r"(?<!\\)\]\(javascript:", prose)  # an escaped \] opens no link
    assert "<details>" in prose  # the report's own markup stays
    assert text.splitlines()[0] == "# Snapshot report: db &lt;script&gt;alert(1)&lt;/script&gt;"
    assert "guest &lt;img src=x onerror=alert(document.cookie)&gt;" in text
    assert "\\[click\\](javascript:alert(1))" in text
    assert "https://jira.example/browse/OPS-1%29%3Cscript%3E" in text


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


def test_findings_by_impact_and_the_missing_evidence(world):
    from triage.models import Finding, Snapshot

    snap = world.snapshot
    rows = list(snap.current_findings().order_by("rule"))
    for i, f in enumerate(rows):
        Finding.objects.filter(pk=f.pk).update(impact=float(i))
    Snapshot.objects.filter(pk=snap.pk).update(
        checked=["net.netem_delay", "numa.balancing_disabled"],
        not_checked=[
            {
                "rule": "memory.hugepages_absent",
                "reason": "no /proc/meminfo was read",
                "reason_zh": "未读取到 /proc/meminfo",
                "commands": ["grep -i huge /proc/meminfo", "echo `x` | cat"],
                "host": "obs-197",
            }
        ],
    )
    snap.refresh_from_db()
    text = render_markdown(snap, language="en")
    order = [text.index(f"`{f.rule}` — ") for f in reversed(rows)]
    assert order == sorted(order)  # largest impact first
    top = next(line for line in text.splitlines() if line.startswith("**Largest impact first**"))
    assert top.index(f"`{rows[-1].rule}`") < top.index(f"`{rows[-2].rule}`")
    assert "## Not checked — missing evidence (1)" in text
    assert (
        "- `memory.hugepages_absent` No static huge pages on a VM or database host: no /proc/meminfo was read"
        in text
    )
    assert "  - `grep -i huge /proc/meminfo`" in text and "  - `` echo `x` | cat ``" in text
    assert "Rules checked: 2" in text
    zh = render_markdown(snap, language="zh")
    assert (
        "## 未检查——缺少证据 (1)" in zh
        and "未读取到 /proc/meminfo" in zh
        and "虚拟化或数据库主机未配置静态大页" in zh
    )


def test_no_finding_is_never_a_bare_done(world):
    from triage.models import Snapshot

    snap = world.snapshot
    snap.current_findings().delete()
    Snapshot.objects.filter(pk=snap.pk).update(checked=["net.netem_delay"], not_checked=[])
    snap.refresh_from_db()
    text = render_markdown(snap, language="en")
    assert "**No problem found in what was checked.**" in text and "Rules checked: 1" in text


def test_jira_report_has_the_markdown_report_structure(world):
    """report.jira is the same report written by the Jira wiki writer: the same
    headings, findings, evidence and measures, with user text escaped."""
    snap = world.snapshot
    snap.label = "evil | [label] {code}"
    md = render_markdown(snap, language="en", base_url="https://casebook.example/")
    jira = render_report(snap, language="en", base_url="https://casebook.example/", markup="jira")
    assert jira.splitlines()[0] == "h1. Snapshot report: evil \\| \\[label\\] \\{code\\}"
    md_headings = [line.lstrip("#").strip() for line in md.splitlines() if line.startswith("## ")]
    jira_headings = [line[4:] for line in jira.splitlines() if line.startswith("h2. ")]
    assert len(md_headings) == len(jira_headings) >= 3
    assert [h.split(" (")[0] for h in md_headings] == [h.split(" (")[0] for h in jira_headings]
    for finding in snap.current_findings():
        assert "{{" + finding.rule.replace("_", "\\_") + "}}" in jira
    assert f"[https://casebook.example/snapshots/{snap.pk}/]" in jira
    response = world.api("engineer_a").get(f"/api/v1/snapshots/{snap.pk}/report.jira")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain")
    assert response.content.decode().startswith("h1. ")
    assert world.api("engineer_b").get(f"/api/v1/snapshots/{snap.pk}/report.jira").status_code == 404


def test_the_reports_language_not_the_readers_ui_language_writes_its_labels(world):
    """One translation mechanism: the report's labels are the UI catalogue's,
    chosen by the report's language whatever language the reader's UI is in
    (the upload's kind named as the upload form and the list name it)."""
    snap = world.snapshot
    snap.kind = "collector"
    with translation.override("zh-hans"):
        english = render_markdown(snap, language="en")
    with translation.override("en"):
        chinese = render_markdown(snap, language="zh")
    assert "- Kind: Collector archive" in english and "采集" not in english
    assert "- 类型: 采集包" in chinese and "Kind" not in chinese


def test_summary_of_a_host_known_only_from_virsh_capabilities():
    """A KVM host given as its ``virsh capabilities`` alone (libvirt's test
    driver, tests/fixtures/libvirt/README.md): the summary counts the CPUs and
    nodes its cells list instead of leaving them blank."""
    path = Path(__file__).resolve().parents[1] / "fixtures" / "libvirt" / "virsh_test_capabilities.txt"
    (host,) = load_snapshot([path]).hosts
    assert host.cpu is None
    summary = facts_summary(host)
    assert summary["cpus"] == 16
    assert summary["numa_nodes"] == 2
