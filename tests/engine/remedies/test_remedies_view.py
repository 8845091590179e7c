"""The remediation of the ZStack seed host on the snapshot report and its own page."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import translation

from accounts.services import rotate_api_token
from tests.conftest import FIXTURES
from triage import analysis, uploads

pytestmark = pytest.mark.django_db

ZSTACK_HOST = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before" / "zstack-9.txt"
GUEST = "8c1f5e2a0d9b4c6e9f3a7b2d1e4c6a80"


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def alice(db):
    return get_user_model().objects.create_user("alice", password="pw-alice-123")


@pytest.fixture
def analysed(alice, monkeypatch):
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    snap = uploads.create_snapshot(
        owner=alice, data=ZSTACK_HOST.read_bytes(), filename="zstack-9.txt", label="zstack-9"
    )
    return analysis.analyze_snapshot_now(snapshot_id=snap.pk)


def test_report_links_the_guest_remediation(client, alice, analysed):
    client.force_login(alice)
    page = client.get(analysed.get_absolute_url()).content.decode()
    assert 'id="remedy-heading"' in page
    url = reverse("triage:snapshot_remedy", args=[analysed.pk, GUEST])
    assert f'href="{url}"' in page


def test_remediation_page_shows_diff_commands_and_rollback_escaped(client, alice, analysed):
    client.force_login(alice)
    response = client.get(reverse("triage:snapshot_remedy", args=[analysed.pk, GUEST]))
    assert response.status_code == 200
    page = response.content.decode()
    # the diff, HTML-escaped inside <pre>
    assert '<pre class="remedy-diff">' in page
    assert "+    &lt;vcpupin vcpu=&#x27;0&#x27; cpuset=&#x27;1&#x27;/&gt;" in page
    assert "+    &lt;memory mode=&#x27;strict&#x27; nodeset=&#x27;1&#x27;/&gt;" in page
    assert "<vcpupin" not in page  # never raw markup
    assert f"virsh vcpupin {GUEST} 0 1 --config" in page
    assert f"virsh numatune {GUEST} --mode strict --nodeset 1 --config" in page
    assert f"virsh define {GUEST}.original.xml" in page  # rollback
    assert "guest reboot" in page


def test_remediation_page_is_private_and_404s_unknown_domains(client, alice, analysed):
    other = get_user_model().objects.create_user("bob", password="pw-bob-123")
    client.force_login(other)
    assert client.get(reverse("triage:snapshot_remedy", args=[analysed.pk, GUEST])).status_code == 404
    client.force_login(alice)
    assert client.get(reverse("triage:snapshot_remedy", args=[analysed.pk, "nope"])).status_code == 404


@pytest.mark.parametrize(
    ("seed", "expected"),
    [
        (
            "kunpeng-stream-zone-reclaim/before/gp-sdw03.txt",
            ["/etc/sysctl.d/", "vm.zone_reclaim_mode = 1"],
        ),
        ("oceanbase-bmsql-tuning/before/obs-197.txt", ["tc qdisc del dev bond0 root", "ALTER SYSTEM SET"]),
    ],
)
def test_report_shows_host_changes_with_rollback(client, alice, monkeypatch, seed, expected):
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    path = FIXTURES / "seeds" / seed
    snap = uploads.create_snapshot(owner=alice, data=path.read_bytes(), filename=path.name, label=path.stem)
    snap = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    client.force_login(alice)
    page = client.get(snap.get_absolute_url()).content.decode()
    section = page[page.index('id="host-remedies"') :]
    for text in expected:
        assert text in section, text
    assert "Rollback" in section


def test_report_of_a_host_without_findings_shows_no_host_changes(client, alice, analysed):
    client.force_login(alice)
    analysed.findings.exclude(rule__startswith="kvm.").delete()
    assert 'id="host-remedies"' not in client.get(analysed.get_absolute_url()).content.decode()


def test_host_changes_download_as_an_ansible_playbook(client, alice, monkeypatch):
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    path = FIXTURES / "seeds" / "kunpeng-stream-zone-reclaim" / "before" / "gp-sdw03.txt"
    snap = uploads.create_snapshot(owner=alice, data=path.read_bytes(), filename=path.name, label="gp-sdw03")
    snap = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    client.force_login(alice)
    url = reverse("triage:snapshot_playbook", args=[snap.pk])
    assert f'href="{url}"' in client.get(snap.get_absolute_url()).content.decode()
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/yaml")
    assert response["Content-Disposition"] == f'attachment; filename="casebook-snapshot-{snap.pk}.yml"'
    text = response.content.decode()
    assert "dest: !unsafe '/etc/sysctl.d/90-numa.conf'" in text and "- rollback" in text
    # the API serves the same file
    token = rotate_api_token(user=alice).key
    api = client.get(f"/api/v1/snapshots/{snap.pk}/playbook.yml", HTTP_AUTHORIZATION=f"Token {token}")
    assert api.status_code == 200 and api.content.decode() == text
    # another team's user does not see it
    other = get_user_model().objects.create_user("bob", password="pw-bob-123")
    client.force_login(other)
    assert client.get(url).status_code == 404


def test_guest_patch_downloads_as_an_ansible_playbook(client, alice, analysed):
    client.force_login(alice)
    url = reverse("triage:snapshot_remedy_playbook", args=[analysed.pk, GUEST])
    assert (
        f'href="{url}"'
        in client.get(reverse("triage:snapshot_remedy", args=[analysed.pk, GUEST])).content.decode()
    )
    response = client.get(url)
    assert response.status_code == 200
    text = response.content.decode()
    assert f"Define {GUEST} from the patched XML" in text and f"Define {GUEST} from the backup" in text
    assert (
        client.get(reverse("triage:snapshot_remedy_playbook", args=[analysed.pk, "nope"])).status_code == 404
    )


def test_a_chinese_reader_gets_chinese_notes_on_the_page_and_an_english_playbook(client, alice, monkeypatch):
    """The page follows the reader's language; the playbook file is English
    whatever the reader's language (engine.remedies.playbook.LANGUAGE)."""
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    path = FIXTURES / "seeds" / "oceanbase-bmsql-tuning" / "before" / "obs-197.txt"
    snap = uploads.create_snapshot(owner=alice, data=path.read_bytes(), filename=path.name, label="obs-197")
    snap = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    client.force_login(alice)
    token = rotate_api_token(user=alice).key
    zh = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}
    with translation.override("zh-hans"):
        page = client.get(snap.get_absolute_url(), **zh).content.decode()
        download = client.get(reverse("triage:snapshot_playbook", args=[snap.pk]), **zh)
        api = client.get(
            f"/api/v1/snapshots/{snap.pk}/playbook.yml", HTTP_AUTHORIZATION=f"Token {token}", **zh
        )
    section = page[page.index('id="host-remedies"') :]
    assert "OceanBase 系统参数" in section and "net_thread_count 在 observer 重启后生效" in section
    playbook = download.content.decode()
    assert "OceanBase system parameters" in playbook
    assert not re.search(r"[\u4e00-\u9fff]", playbook)
    assert api.status_code == 200 and api.content.decode() == playbook
