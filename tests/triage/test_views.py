"""Snapshot pages: upload form, status partial, report, list filters, access."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import translation

from tests.conftest import CORPUS
from triage import analysis, uploads
from triage.models import Finding, Snapshot

pytestmark = pytest.mark.django_db

NUMA_XML = CORPUS / "libvirt" / "insights-core_test_qemu_xml_XML_NUMA.txt"


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
def bob(db):
    return get_user_model().objects.create_user("bob", password="pw-bob-123")


@pytest.fixture
def client_alice(client, alice):
    client.force_login(alice)
    return client


def make_done(owner, *, label="zstack-guest", cluster="", findings=()):
    snap = uploads.create_snapshot(
        owner=owner, data=label.encode() + b" data", filename=f"{label}.txt", label=label
    )
    Snapshot.objects.filter(pk=snap.pk).update(
        status="done",
        engine_version="1",
        cluster=cluster,
        skipped=[{"rule": "disk.latency_high", "reason": "missing disks"}],
        errors=[{"artifact": "virsh_dumpxml.txt", "message": "not well-formed XML", "line": 12}],
        similar_cases=[{"slug": "zstack-mariadb-v2v", "score": 0.82, "shared_rules": ["kvm.vcpus_unpinned"]}],
        facts={"hostname": "zstack-mariadb", "role": "guest"},
    )
    for rule, severity, title, title_zh in findings:
        Finding.objects.create(
            snapshot=snap,
            rule=rule,
            severity=severity,
            title=title,
            title_zh=title_zh,
            explanation="Unpinned vCPUs float over both nodes.",
            explanation_zh="vCPU 未绑定，在两个节点之间漂移。",
            evidence=[
                {
                    "fact": "domains.0.vcpupin",
                    "value": "[]",
                    "artifact": "virsh_dumpxml.txt",
                    "line": 7,
                    "excerpt": [{"line": 7, "text": "<vcpu placement='static'>32</vcpu>", "hit": True}],
                }
            ],
            measures=["pin-vcpus", "pin-emulator"],
            engine_version="1",
        )
    snap.refresh_from_db()
    return snap


FINDINGS = [
    ("kvm.vcpus_unpinned", "warning", "vCPUs are not pinned", "vCPU 未绑定物理 CPU"),
    ("kvm.vcpu_hotplug_enabled", "critical", "CPU hot-plug is enabled", "开启了 CPU 热插拔"),
]


def test_login_required(client):
    response = client.get(reverse("triage:snapshot_list"))
    assert response.status_code == 302 and "login" in response["Location"]


def test_upload_form_renders_with_csrf_and_dropzone(client_alice):
    response = client_alice.get(reverse("triage:snapshot_new"))
    html = response.content.decode()
    assert response.status_code == 200
    assert "csrfmiddlewaretoken" in html
    assert 'id="dropzone"' in html and 'type="file"' in html and "multiple" in html
    assert 'name="transcript"' in html and 'name="label"' in html and 'name="cluster"' in html


def test_upload_file_redirects_to_report(client_alice, alice, enqueued, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = client_alice.post(
            reverse("triage:snapshot_new"),
            {
                "files": SimpleUploadedFile("guest.xml", NUMA_XML.read_bytes()),
                "label": "guest",
                "cluster": "zs",
            },
        )
    snap = Snapshot.objects.get(owner=alice)
    assert response.status_code == 302
    assert response["Location"] == reverse("triage:snapshot_detail", args=[snap.pk])
    assert (snap.label, snap.cluster, snap.original_filename) == ("guest", "zs", "guest.xml")
    assert enqueued == [snap.pk]


def test_upload_pasted_transcript(client_alice, alice, enqueued):
    text = "[root@kunpeng01 ~]# numactl -H\navailable: 4 nodes (0-3)\n"
    response = client_alice.post(reverse("triage:snapshot_new"), {"transcript": text, "label": "kp"})
    snap = Snapshot.objects.get(owner=alice)
    assert response.status_code == 302
    assert snap.kind == "transcript"
    assert snap.file.read().decode() == text


def test_upload_several_files_goes_to_the_cluster_list(client_alice, alice, enqueued):
    files = [SimpleUploadedFile(f"node{i}.txt", f"available: {i} nodes\n".encode()) for i in (1, 2, 3)]
    response = client_alice.post(reverse("triage:snapshot_new"), {"files": files, "cluster": "kunpeng"})
    assert response.status_code == 302
    assert response["Location"] == reverse("triage:snapshot_list") + "?cluster=kunpeng"
    assert Snapshot.objects.filter(owner=alice, cluster="kunpeng").count() == 3


def test_upload_without_content_is_a_form_error(client_alice):
    response = client_alice.post(reverse("triage:snapshot_new"), {"label": "x"})
    assert response.status_code == 400
    assert "Choose a file or paste a transcript." in response.content.decode()


def test_upload_requires_csrf(alice):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.post(reverse("triage:snapshot_new"), {"transcript": "$ lscpu\n"})
    assert response.status_code == 403


def test_status_partial_polls_until_done(client_alice, alice, enqueued):
    snap = uploads.create_snapshot(owner=alice, data=b"$ lscpu\nCPU(s): 2\n", filename="t.txt")
    url = reverse("triage:snapshot_status", args=[snap.pk])
    html = client_alice.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert 'hx-trigger="every 1s"' in html and f'hx-get="{url}"' in html
    detail = client_alice.get(snap.get_absolute_url()).content.decode()
    assert 'hx-trigger="every 1s"' in detail

    Snapshot.objects.filter(pk=snap.pk).update(status="done", engine_version="1")
    response = client_alice.get(url, HTTP_HX_REQUEST="true")
    assert "hx-trigger" not in response.content.decode()
    assert response["HX-Refresh"] == "true"  # the page reloads once to show the report


def test_failed_status_shows_last_error(client_alice, alice, enqueued):
    snap = uploads.create_snapshot(owner=alice, data=b"junk", filename="junk.bin")
    Snapshot.objects.filter(pk=snap.pk).update(
        status="failed", last_error="analysis failed: ValueError: boom"
    )
    html = client_alice.get(snap.get_absolute_url()).content.decode()
    assert "analysis failed: ValueError: boom" in html
    assert "hx-trigger" not in html


def test_report_groups_findings_by_severity(client_alice, alice):
    snap = make_done(alice, findings=FINDINGS)
    html = client_alice.get(snap.get_absolute_url()).content.decode()
    assert html.index('id="sev-critical"') < html.index('id="sev-warning"')
    assert "CPU hot-plug is enabled" in html and "vCPUs are not pinned" in html
    assert "virsh_dumpxml.txt:7" in html
    assert "<details><summary>raw excerpt</summary>" in html
    assert "pin-vcpus" in html and "pin-emulator" in html
    assert "disk.latency_high" in html and "missing <code>disks</code>" in html  # skipped rules
    assert "not well-formed XML" in html  # parse errors
    assert "zstack-mariadb-v2v" in html and "score 0.82" in html  # similar cases, on the API's 0..1 scale


def test_report_in_chinese_uses_title_zh(client_alice, alice):
    snap = make_done(alice, findings=FINDINGS)
    with translation.override("zh-hans"):
        response = client_alice.get(snap.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="zh-hans")
    html = response.content.decode()
    assert "vCPU 未绑定物理 CPU" in html and "开启了 CPU 热插拔" in html
    assert "vCPU 未绑定，在两个节点之间漂移。" in html
    assert "vCPUs are not pinned" not in html


def test_other_users_snapshot_is_404(client, alice, bob):
    snap = make_done(alice, findings=FINDINGS)
    client.force_login(bob)
    assert client.get(snap.get_absolute_url()).status_code == 404
    assert client.get(reverse("triage:snapshot_status", args=[snap.pk])).status_code == 404
    assert snap.display_name not in client.get(reverse("triage:snapshot_list")).content.decode()


def test_team_member_sees_team_snapshot(client, alice, bob):
    from accounts.models import Membership, Team

    team = Team.objects.create(name="DBA", slug="dba")
    Membership.objects.create(user=alice, team=team)
    Membership.objects.create(user=bob, team=team)
    snap = make_done(alice, findings=FINDINGS)
    client.force_login(bob)
    assert client.get(snap.get_absolute_url()).status_code == 200


def test_list_filters(client_alice, alice, enqueued):
    a = make_done(alice, label="host-a", cluster="kunpeng", findings=FINDINGS[:1])
    b = make_done(alice, label="host-b", cluster="zstack", findings=FINDINGS[1:])
    queued = uploads.create_snapshot(owner=alice, data=b"queued one", filename="q.txt", label="host-q")
    url = reverse("triage:snapshot_list")

    def names(params):
        html = client_alice.get(url, params).content.decode()
        return {s.label for s in (a, b, queued) if f">{s.label}</a>" in html}

    assert names({}) == {"host-a", "host-b", "host-q"}
    assert names({"status": "done"}) == {"host-a", "host-b"}
    assert names({"status": "queued"}) == {"host-q"}
    assert names({"cluster": "kunpeng"}) == {"host-a"}
    assert names({"rule": "kvm.vcpu_hotplug_enabled"}) == {"host-b"}
    assert names({"status": "done", "cluster": "zstack", "rule": "kvm.vcpus_unpinned"}) == set()


def test_recent_snapshots_tag(client_alice, alice):
    from django.template import Context, Template
    from django.test import RequestFactory

    make_done(alice, label="recent-one", findings=FINDINGS)
    request = RequestFactory().get("/")
    request.user = alice
    html = Template("{% load triage_snapshots %}{% recent_snapshots %}").render(Context({"request": request}))
    assert "recent-one" in html and "Recent snapshots" in html


def test_list_shows_current_finding_counts(client_alice, alice):
    snap = make_done(alice, label="counted", findings=FINDINGS)
    # A finding of an older engine version is history, not counted.
    Finding.objects.create(snapshot=snap, rule="old.rule", severity="info", title="old", engine_version="0")
    html = client_alice.get(reverse("triage:snapshot_list")).content.decode()
    assert '<span class="badge badge-critical" title="Critical">1</span>' in html
    assert '<span class="badge badge-warning" title="Warning">1</span>' in html
    assert 'class="badge badge-info"' not in html


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("junk.bin", bytes(range(256)) * 64),
        ("broken.tar.gz", b"\x1f\x8b\x08\x00" + b"\x00" * 300),
        ("entity.xml", b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaa">]><domain>&a;</domain>'),
    ],
)
def test_hostile_upload_gets_a_report_not_a_500(client_alice, alice, enqueued, name, data):
    response = client_alice.post(reverse("triage:snapshot_new"), {"files": SimpleUploadedFile(name, data)})
    if name == "junk.bin":  # binary bytes: refused at upload with the reason (issue 25)
        assert response.status_code == 400 and "binary data" in response.content.decode()
        assert not Snapshot.objects.filter(owner=alice).exists()
        return
    assert response.status_code == 302
    snap = Snapshot.objects.get(owner=alice)
    analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    snap.refresh_from_db()
    assert snap.status in ("done", "failed")
    page = client_alice.get(snap.get_absolute_url())
    assert page.status_code == 200
    if snap.status == "done":
        assert snap.errors, "an unreadable upload is reported as a parse error"
        assert "Parse errors" in page.content.decode()


def test_failed_snapshot_can_be_analysed_again(client_alice, alice, enqueued):
    snap = uploads.create_snapshot(owner=alice, data=b"junk", filename="junk.bin")
    Snapshot.objects.filter(pk=snap.pk).update(
        status="failed", last_error="analysis failed: boom", attempts=5
    )
    html = client_alice.get(snap.get_absolute_url()).content.decode()
    url = reverse("triage:snapshot_reanalyze", args=[snap.pk])
    assert f'action="{url}"' in html
    assert client_alice.get(url).status_code == 405
    enqueued.clear()
    response = client_alice.post(url)
    assert response.status_code == 302 and response["Location"] == snap.get_absolute_url()
    snap.refresh_from_db()
    assert (snap.status, snap.attempts, snap.last_error) == ("queued", 0, "")
    assert enqueued == [snap.pk]


def test_current_done_snapshot_offers_no_reanalysis(client_alice, alice, bob, client):
    from engine.run import ENGINE_VERSION

    snap = make_done(alice, findings=FINDINGS)
    Snapshot.objects.filter(pk=snap.pk).update(engine_version=ENGINE_VERSION)
    assert "snapshot_reanalyze" not in client_alice.get(snap.get_absolute_url()).content.decode()
    assert "/reanalyze/" not in client_alice.get(snap.get_absolute_url()).content.decode()
    client.force_login(bob)
    assert client.post(reverse("triage:snapshot_reanalyze", args=[snap.pk])).status_code == 404


def test_list_polls_while_snapshots_are_pending(client_alice, alice, enqueued):
    snap = uploads.create_snapshot(owner=alice, data=b"$ lscpu\n", filename="t.txt")
    html = client_alice.get(reverse("triage:snapshot_list")).content.decode()
    assert 'hx-trigger="every 2s"' in html and 'hx-select="#snapshot-table"' in html
    Snapshot.objects.filter(pk=snap.pk).update(status="done")
    assert "hx-trigger" not in client_alice.get(reverse("triage:snapshot_list")).content.decode()


def test_done_report_offers_copy_as_markdown(client_alice, alice, enqueued):
    done = make_done(alice)
    html = client_alice.get(f"/snapshots/{done.pk}/").content.decode()
    assert f'data-copy-markdown="/api/v1/snapshots/{done.pk}/report.md?lang=en"' in html
    queued = uploads.create_snapshot(owner=alice, data=b"$ uname -r\n6.1.0\n", filename="t.txt")
    assert "data-copy-markdown" not in client_alice.get(f"/snapshots/{queued.pk}/").content.decode()


def test_report_without_serious_finding_says_no_known_problem_matched(client_alice, alice):
    snap = make_done(
        alice, findings=[("numa.high_remote_distance", "info", "Remote access is expensive", "")]
    )
    Snapshot.objects.filter(pk=snap.pk).update(similar_cases=[], checked=["numa.high_remote_distance", "x.y"])
    html = client_alice.get(snap.get_absolute_url()).content.decode()
    assert 'id="no-known-problem"' in html and "No known problem matched (2 rules checked)." in html
    assert 'id="start-case"' not in html
    with translation.override("zh-hans"):
        html = client_alice.get(snap.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "未匹配到已知问题" in html


def test_findings_without_a_case_offer_to_start_one(client_alice, alice):
    snap = make_done(alice, findings=FINDINGS)
    Snapshot.objects.filter(pk=snap.pk).update(similar_cases=[])
    html = client_alice.get(snap.get_absolute_url()).content.decode()
    assert 'id="possibly-new-problem"' in html
    start = reverse("troubleshoot:session_new") + f"?snapshot={snap.pk}"
    assert f'href="{start}"' in html
    # The new session starts from the snapshot: name and findings prefilled, snapshot attached.
    form = client_alice.get(start).content.decode()
    assert f'name="snapshot" value="{snap.pk}"' in form and "vCPUs are not pinned (kvm.vcpus_unpinned" in form
    response = client_alice.post(
        reverse("troubleshoot:session_new"),
        {
            "snapshot": snap.pk,
            "title": "zstack guest slow",
            "symptom": "CREATE INDEX 120 s",
            "metric_name": "CREATE INDEX",
            "metric_unit": "s",
            "metric_baseline": "120",
            "metric_expected": "30-60 s",
            "metric_direction": "lower",
        },
    )
    assert response.status_code == 302
    from troubleshoot.models import SessionSnapshot

    assert SessionSnapshot.objects.filter(snapshot=snap, session__title="zstack guest slow").exists()


def test_start_case_ignores_a_snapshot_the_user_cannot_see(client, alice, bob):
    snap = make_done(alice, findings=FINDINGS)
    client.force_login(bob)
    form = client.get(reverse("troubleshoot:session_new") + f"?snapshot={snap.pk}").content.decode()
    assert 'name="snapshot"' not in form


def test_cluster_name_with_a_nul_is_not_found(client_alice):
    assert client_alice.get("/snapshots/clusters/%00/").status_code == 404
    assert client_alice.get("/snapshots/clusters/a%00b/").status_code == 404
