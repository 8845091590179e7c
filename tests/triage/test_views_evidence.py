"""The report's missing-evidence parts (issue 12) and "What Casebook read"
(issue 11): the not-checked list with its commands and paste box, adding the
pasted output to the same snapshot, earlier analyses, the no-finding summary,
findings by impact, and the wizard's findings step showing the same list.

Rows are set up directly where a test is about rendering; the paste tests run
the real loader and engine on a founding transcript with a block removed."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import translation

from tests.triage.founding_gaps import GAPS
from triage import analysis, selectors, uploads
from triage.models import Finding, Snapshot, SnapshotArtifact

pytestmark = pytest.mark.django_db

NOT_CHECKED = [
    {
        "rule": "memory.hugepages_absent",
        "reason": "no /proc/meminfo or HugePages_Total was read",
        "reason_zh": "未读取到 /proc/meminfo 或 HugePages_Total",
        "commands": ["grep -i huge /proc/meminfo", "cat /proc/meminfo"],
        "host": "db-1",
    },
    {
        "rule": "kvm.vcpus_unpinned",
        "reason": "a KVM host without domain XML <script>alert(1)</script>",
        "reason_zh": "",
        "commands": ["virsh dumpxml <domain> | grep '<vcpu'"],
        "host": "db-1",
    },
]
READING = {
    "lines": 120,
    "read_lines": 100,
    "prompt_lines": 6,
    "prose_lines": 4,
    "unrecognised_lines": 10,
    "artifacts": [
        {
            "kind": "lscpu",
            "start_line": 2,
            "end_line": 26,
            "parsed": True,
            "name": "db-1.txt",
            "command": "lscpu",
        },
        {
            "kind": None,
            "start_line": 40,
            "end_line": 49,
            "parsed": False,
            "name": "db-1.txt",
            "command": "foo",
        },
    ],
    "unrecognised": [
        {"start_line": 60, "end_line": 69, "first_line": "<b>weird output</b>", "name": "db-1.txt"}
    ],
}


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def enqueued(monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: calls.append(snapshot_id) or True)
    return calls


@pytest.fixture
def alice(db):
    return get_user_model().objects.create_user("alice", password="pw-alice-123")


@pytest.fixture
def client_alice(client, alice):
    client.force_login(alice)
    return client


def make_done(owner, *, findings=(), **fields) -> Snapshot:
    snap = uploads.create_snapshot(owner=owner, data=b"db-1 data", filename="db-1.txt", label="db-1")
    values = {
        "status": "done",
        "engine_version": "1",
        "facts": {
            "hostname": "db-1",
            "reading": READING,
            # the older per-artifact list names each transcript block <file>:<first line>
            "artifacts": [
                {"name": "db-1.txt:2", "kind": "lscpu", "start_line": 2, "lines": 25, "command": "lscpu"},
                {"name": "added-1-x.txt:40", "kind": None, "start_line": 40, "lines": 10, "command": "foo"},
            ],
        },
        "checked": ["numa.balancing_disabled", "mysql.large_pages_off"],
        "not_checked": NOT_CHECKED,
    }
    values.update(fields)
    Snapshot.objects.filter(pk=snap.pk).update(**values)
    for rule, severity, impact in findings:
        Finding.objects.create(
            snapshot=snap,
            rule=rule,
            severity=severity,
            title=f"title of {rule}",
            impact=impact,
            engine_version="1",
        )
    return Snapshot.objects.get(pk=snap.pk)


def page(client, snap, language="en") -> str:
    with translation.override(language):
        response = client.get(snap.get_absolute_url(), HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200
    return response.content.decode()


def test_not_checked_lists_title_reason_commands_copy_buttons_and_paste_box(client_alice, alice):
    snap = make_done(alice)
    html = page(client_alice, snap)
    section = html[html.index('id="not-checked"') :]
    assert "Not checked — missing evidence" in html
    assert "No static huge pages on a VM or database host" in section
    assert "no /proc/meminfo or HugePages_Total was read" in section
    for command in ("grep -i huge /proc/meminfo", "cat /proc/meminfo"):
        assert f'<code class="command">{command}</code>' in section
        assert f'data-copy-text="{command}"' in section
    assert "js/copy-markdown.js" in section
    # the paste box: an htmx form with a CSRF token posting to this snapshot
    url = reverse("triage:snapshot_add_artifact", args=[snap.pk])
    assert f'hx-post="{url}"' in section and 'name="csrfmiddlewaretoken"' in section
    assert 'name="output"' in section
    # output escaped: nothing a snapshot carries becomes markup
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "virsh dumpxml &lt;domain&gt; | grep &#x27;&lt;vcpu&#x27;" in html


def test_not_checked_reason_in_chinese(client_alice, alice):
    snap = make_done(alice)
    html = page(client_alice, snap, "zh-hans")
    assert "未读取到 /proc/meminfo 或 HugePages_Total" in html
    assert "no /proc/meminfo or HugePages_Total was read" not in html
    # no Chinese reason: the English one rather than nothing
    assert "a KVM host without domain XML" in html
    assert "未检查——缺少证据" in html and "粘贴" in html


def test_a_snapshot_without_findings_says_what_was_and_was_not_checked(client_alice, alice):
    snap = make_done(alice)
    html = page(client_alice, snap)
    assert "No problem found in what was checked." in html
    assert "2 rules were checked." in html
    assert "2 could not be checked" in html
    checked = html[html.index('class="checked-rules"') :]
    assert "numa.balancing_disabled" in checked and "mysql.large_pages_off" in checked
    assert "No rule fired on this snapshot." not in html


def test_status_line_and_list_never_show_a_bare_done(client_alice, alice):
    snap = make_done(alice)
    status = client_alice.get(reverse("triage:snapshot_status", args=[snap.pk])).content.decode()
    assert "No problem found in what was checked." in status and "2 rules not checked" in status
    listing = client_alice.get(reverse("triage:snapshot_list")).content.decode()
    assert "2 rules not checked" in listing
    with_finding = make_done(
        get_user_model().objects.create_user("carol", password="pw-carol-123"),
        findings=[("numa.balancing_disabled", "warning", 1.0)],
    )
    client_alice.force_login(with_finding.owner)
    status = client_alice.get(reverse("triage:snapshot_status", args=[with_finding.pk])).content.decode()
    assert "No problem found" not in status


def test_no_findings_in_chinese(client_alice, alice):
    html = page(client_alice, make_done(alice, not_checked=[]), "zh-hans")
    assert "在已检查的范围内未发现问题。" in html


def test_findings_by_impact_and_the_top_ones_named_first(client_alice, alice):
    snap = make_done(
        alice,
        findings=[
            ("numa.balancing_disabled", "warning", 1.0),
            ("mysql.large_pages_off", "warning", 6.0),
            ("kvm.vcpus_unpinned", "critical", 9.0),
            ("numa.high_remote_distance", "info", 0.5),
        ],
    )
    html = page(client_alice, snap)
    top = html[html.index('id="top-findings"') : html.index("</ol>", html.index('id="top-findings"'))]
    assert (
        top.index("kvm.vcpus_unpinned")
        < top.index("mysql.large_pages_off")
        < top.index("numa.balancing_disabled")
    )
    assert "numa.high_remote_distance" not in top  # three named
    warnings = html[html.index('id="sev-warning"') :]
    assert warnings.index('data-rule="mysql.large_pages_off"') < warnings.index(
        'data-rule="numa.balancing_disabled"'
    )
    assert "No problem found" not in html


def test_what_casebook_read_is_collapsed_with_the_unrecognised_count(client_alice, alice):
    html = page(client_alice, make_done(alice))
    block = html[html.index('class="reading"') :]
    block = block[: block.index("</details>")]
    assert "<summary>What Casebook read on db-1: 100 of 120 lines, 1 unrecognised block</summary>" in block
    assert "$ lscpu" in block and "db-1.txt:2–26" in block and "added-1-x.txt:40–49" in block
    assert "<strong>no</strong>" in block  # the unparsed artifact
    assert "60–69" in block and "&lt;b&gt;weird output&lt;/b&gt;" in block
    assert " open" not in block.split(">")[0]  # collapsed


def test_what_casebook_read_covers_every_host_of_the_paste(client_alice, alice):
    guest = {"hostname": "guest-1", "reading": {**READING, "unrecognised": []}}
    html = page(client_alice, make_done(alice, extra_hosts=[guest]))
    assert "What Casebook read on db-1: 100 of 120 lines, 1 unrecognised block" in html
    assert "What Casebook read on guest-1: 100 of 120 lines, 0 unrecognised blocks" in html


def test_paste_form_adds_an_artifact_and_queues_the_same_snapshot(
    client_alice, alice, enqueued, django_capture_on_commit_callbacks
):
    snap = make_done(alice, findings=[("numa.balancing_disabled", "warning", 1.0)])
    url = reverse("triage:snapshot_add_artifact", args=[snap.pk])
    with django_capture_on_commit_callbacks(execute=True):
        response = client_alice.post(
            url, {"output": "[root@db-1 ~]# cat /proc/meminfo\nHugePages_Total: 0\n"}
        )
    assert response.status_code == 302 and response["Location"] == snap.get_absolute_url()
    artifact = SnapshotArtifact.objects.get(snapshot=snap)
    assert artifact.name == uploads.PASTED_ARTIFACT and artifact.added_by == alice
    snap.refresh_from_db()
    assert snap.status == "queued" and enqueued == [snap.pk]
    assert [f["rule"] for f in snap.history[0]["findings"]] == ["numa.balancing_disabled"]


def test_htmx_paste_redirects_and_invalid_paste_returns_the_form(client_alice, alice, enqueued):
    snap = make_done(alice)
    url = reverse("triage:snapshot_add_artifact", args=[snap.pk])
    response = client_alice.post(url, {"output": "  \n"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert "Paste the output or choose a file." in response.content.decode()
    assert not SnapshotArtifact.objects.exists()
    response = client_alice.post(
        url, {"output": "numa_hit 1\n", "name": "numastat.txt"}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 204 and response["HX-Redirect"] == snap.get_absolute_url()
    assert SnapshotArtifact.objects.get().name == "numastat.txt"


def test_paste_needs_the_csrf_token_and_access(alice, enqueued):
    snap = make_done(alice)
    url = reverse("triage:snapshot_add_artifact", args=[snap.pk])
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(alice)
    assert strict.post(url, {"output": "x"}).status_code == 403
    other = Client()
    other.force_login(get_user_model().objects.create_user("mallory", password="pw-mallory-123"))
    assert other.post(url, {"output": "x"}).status_code == 404
    assert other.get(url).status_code in (404, 405)
    assert not SnapshotArtifact.objects.exists()


def test_paste_of_the_missing_block_brings_the_finding_back_on_the_report(client_alice, alice, enqueued):
    """End to end through the page: the oceanbase transcript without its tc
    block; the block pasted; the same snapshot re-analysed finds the delay and
    lists the earlier analysis."""
    gap = GAPS[4]
    text, block = gap.split()
    snap = uploads.create_snapshot(owner=alice, data=text.encode(), filename=gap.host_file, label="obs")
    analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    before = page(client_alice, Snapshot.objects.get(pk=snap.pk))
    finding_of_gap = re.compile(rf'<article class="finding[^"]*"[^>]*data-rule="{re.escape(gap.rule)}"')
    assert not finding_of_gap.search(before)
    assert f'class="not-checked-item" data-rule="{gap.rule}"' in before
    client_alice.post(reverse("triage:snapshot_add_artifact", args=[snap.pk]), {"output": block})
    analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    html = page(client_alice, Snapshot.objects.get(pk=snap.pk))
    assert finding_of_gap.search(html)
    assert f'class="not-checked-item" data-rule="{gap.rule}"' not in html
    assert "Earlier analyses" in html and "Added evidence" in html
    history = html[html.index('id="history-heading"') :]
    assert "oceanbase.cpu_quota_concurrency_high" in history and gap.rule not in history


def test_the_report_and_the_api_read_the_hosts_from_one_builder(client_alice, alice):
    """``selectors.host_readings`` serves "What Casebook read" and the API's
    ``hosts``: the same hosts, the same counts; a snapshot not analysed yet is
    one unrecorded host (named by its label on the page, absent from the API)."""
    guest = {"hostname": "guest-1", "reading": {**READING, "unrecognised": []}}
    snap = make_done(alice, extra_hosts=[guest])
    readings = selectors.host_readings(snap)
    assert [(r.hostname, r.host, r.recorded) for r in readings] == [
        ("db-1", "db-1", True),
        ("guest-1", "guest-1", True),
    ]
    assert [a["file"] for a in readings[0].artifacts] == ["db-1.txt", "added-1-x.txt"]
    api = client_alice.get(f"/api/v1/snapshots/{snap.pk}/").json()
    assert [h["hostname"] for h in api["hosts"]] == ["db-1", "guest-1"]
    assert [h["reading"]["read_lines"] for h in api["hosts"]] == [r.reading.read_lines for r in readings]
    assert all("file" not in a for h in api["hosts"] for a in h["reading"]["artifacts"])

    queued = uploads.create_snapshot(owner=alice, data=b"x", filename="q.txt", label="q-1")
    [pending] = selectors.host_readings(queued)
    assert (pending.hostname, pending.host, pending.recorded, pending.reading.lines) == (
        None,
        "q-1",
        False,
        0,
    )
    assert client_alice.get(f"/api/v1/snapshots/{queued.pk}/").json()["hosts"] == []
