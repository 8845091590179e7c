"""``POST /api/v1/snapshots/{id}/artifacts/`` (issue 12): evidence added to the
SAME snapshot, which is queued for analysis again; and the snapshot detail's
``checked``, ``not_checked``, per-host ``reading`` and impact order."""

from __future__ import annotations

import hashlib

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from tests.triage.founding_gaps import GAPS
from triage import analysis, uploads
from triage.models import Finding, Snapshot, SnapshotArtifact

pytestmark = pytest.mark.django_db


def url(snap) -> str:
    return f"/api/v1/snapshots/{snap.pk}/artifacts/"


def test_raw_text_is_added_to_the_same_snapshot_and_queued(
    world, no_queue, django_capture_on_commit_callbacks
):
    snap = world.snapshot
    before = sorted(snap.current_findings().values_list("rule", flat=True))
    body = b"[root@obs-197 ~]# cat /proc/meminfo\nMemTotal:       394846928 kB\nHugePages_Total:       0\n"
    with django_capture_on_commit_callbacks(execute=True):
        r = world.api("engineer_a").generic(
            "POST", url(snap) + "?name=meminfo.txt", body, content_type="text/plain"
        )
    assert r.status_code == 202, r.content
    data = r.json()
    assert data["id"] == snap.pk and data["status"] == "queued"
    assert data["url"].endswith(snap.get_absolute_url()) and r["Location"] == data["api_url"]
    artifact = SnapshotArtifact.objects.get(snapshot=snap)
    assert data["artifact"] == {
        "id": artifact.pk,
        "name": "meminfo.txt",
        "sha256": hashlib.sha256(body).hexdigest(),
        "size": len(body),
        "created_at": data["artifact"]["created_at"],
        "added_by": "engineer_a",
    }
    with default_storage.open(artifact.file.name, "rb") as fh:
        assert fh.read() == body  # on disk before the answer
    assert no_queue == [snap.pk]  # enqueued once committed
    snap.refresh_from_db()
    assert sorted(f["rule"] for f in snap.history[-1]["findings"]) == before


def test_multipart_file_with_a_name(world, no_queue):
    upload = SimpleUploadedFile("out.txt", b"$ numastat\nnuma_hit 1 2\n", content_type="text/plain")
    r = world.api("support").post(
        url(world.snapshot), {"file": upload, "name": "numastat"}, format="multipart"
    )
    assert r.status_code == 202, r.content
    assert r.json()["artifact"]["name"] == "numastat" and r.json()["artifact"]["added_by"] == "support"


def test_access_follows_the_snapshot(world, no_queue):
    body = b"$ uptime\n 10:00 up 1 day\n"
    assert (
        world.api("engineer_b")
        .generic("POST", url(world.snapshot), body, content_type="text/plain")
        .status_code
        == 404
    )
    assert (
        world.api(None).generic("POST", url(world.snapshot), body, content_type="text/plain").status_code
        == 401
    )
    assert not SnapshotArtifact.objects.exists() and no_queue == []


def test_empty_missing_and_oversized_bodies(world, no_queue):
    api = world.api("engineer_a")
    assert api.generic("POST", url(world.snapshot), b"", content_type="text/plain").status_code == 400
    assert api.post(url(world.snapshot), {}, format="multipart").status_code == 400
    assert api.generic("POST", url(world.snapshot), b"{}", content_type="application/json").status_code == 415
    limits = {**__import__("django.conf").conf.settings.CASEBOOK_LIMITS, "upload_bytes": 1000}
    with override_settings(CASEBOOK_LIMITS=limits):
        assert (
            api.generic("POST", url(world.snapshot), b"x" * 1001, content_type="text/plain").status_code
            == 413
        )
        lying = api.generic(
            "POST", url(world.snapshot), b"tiny", content_type="text/plain", CONTENT_LENGTH="999999999"
        )
        assert lying.status_code == 413
        big = SimpleUploadedFile("big.txt", b"y" * 5000)
        assert api.post(url(world.snapshot), {"file": big}, format="multipart").status_code == 413
    assert not SnapshotArtifact.objects.exists()
    assert Snapshot.objects.get(pk=world.snapshot.pk).status == "done"


def test_api_paste_brings_the_missing_finding_back(world, no_queue):
    """Founding case through the API: the tc block removed, then posted."""
    gap = GAPS[4]
    text, block = gap.split()
    owner = world.users["engineer_a"]
    snap = uploads.create_snapshot(owner=owner, data=text.encode(), filename="obs-197-cut.txt", label="cut")
    analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    api = world.api("engineer_a")
    rules = [f["rule"] for f in api.get(f"/api/v1/snapshots/{snap.pk}/").json()["findings"]]
    assert gap.rule not in rules
    r = api.generic("POST", url(snap), block.encode(), content_type="text/plain")
    assert r.status_code == 202 and r.json()["id"] == snap.pk
    analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    data = api.get(f"/api/v1/snapshots/{snap.pk}/").json()
    assert gap.rule in [f["rule"] for f in data["findings"]]
    assert data["history"][0]["findings"] and gap.rule not in [
        f["rule"] for f in data["history"][0]["findings"]
    ]
    assert [a["sha256"] for a in data["added_artifacts"]] == [hashlib.sha256(block.encode()).hexdigest()]


def test_detail_exposes_checked_not_checked_reading_and_impact_order(world):
    snap = world.snapshot
    not_checked = [
        {
            "rule": "memory.hugepages_absent",
            "reason": "no /proc/meminfo was read",
            "reason_zh": "未读取到 /proc/meminfo",
            "commands": ["grep -i huge /proc/meminfo"],
            "host": "obs-197",
        }
    ]
    reading = {
        "lines": 131,
        "read_lines": 120,
        "prompt_lines": 6,
        "prose_lines": 3,
        "unrecognised_lines": 2,
        "artifacts": [
            # as the analysis stores it: every field of ``ReadArtifact``
            {
                "kind": "lscpu",
                "start_line": 3,
                "end_line": 30,
                "parsed": True,
                "name": "obs-197.txt",
                "command": None,
            }
        ],
        "unrecognised": [{"start_line": 50, "end_line": 51, "first_line": "???", "name": "obs-197.txt"}],
    }
    Snapshot.objects.filter(pk=snap.pk).update(
        checked=["net.netem_delay", "numa.balancing_disabled"],
        not_checked=not_checked,
        facts={**snap.facts, "reading": reading},
        extra_hosts=[{"hostname": "guest-1", "reading": {**reading, "unrecognised": []}}],
    )
    rows = list(snap.current_findings())
    for i, f in enumerate(rows):
        Finding.objects.filter(pk=f.pk).update(impact=float(i))
    data = world.api("engineer_a").get(f"/api/v1/snapshots/{snap.pk}/").json()
    assert data["checked"] == ["net.netem_delay", "numa.balancing_disabled"]
    assert data["not_checked"] == not_checked
    assert [h["hostname"] for h in data["hosts"]] == [snap.facts.get("hostname") or None, "guest-1"]
    assert data["hosts"][0]["reading"] == reading
    impacts = [f["impact"] for f in data["findings"]]
    assert impacts == sorted(impacts, reverse=True) and impacts[0] == float(len(rows) - 1)


def test_schema_documents_the_artifacts_endpoint(world):
    schema = world.api("engineer_a").get("/api/schema/?format=json").json()
    post = schema["paths"]["/api/v1/snapshots/{id}/artifacts/"]["post"]
    content = post["requestBody"]["content"]
    assert "text/plain" in content and "multipart/form-data" in content
    assert set(post["responses"]) >= {"202", "413", "415"}
    detail = schema["components"]["schemas"]["SnapshotDetail"]["properties"]
    assert {"checked", "not_checked", "hosts", "history", "added_artifacts"} <= set(detail)
    assert "impact" in schema["components"]["schemas"]["Finding"]["properties"]
