"""/api/v1/sessions/: create, attach a snapshot, record a measure and its
metric, close; every write lands in the session's audit trail."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from troubleshoot.models import AuditEntry, Session

pytestmark = pytest.mark.django_db


def test_session_lifecycle(world):
    api = world.api("engineer_a")
    r = api.post(
        "/api/v1/sessions/",
        {"title": "STREAM low", "symptom": "6000 MB/s", "metric_name": "STREAM triad",
         "metric_baseline": 6000, "metric_direction": "higher"},
        format="json",
    )  # fmt: skip
    assert r.status_code == 201, r.content
    sid = r.json()["id"]
    assert r.json()["team"] == "team-a" and r.json()["state"] == "open"

    attach = api.post(f"/api/v1/sessions/{sid}/snapshots/", {"snapshot": world.snapshot.pk}, format="json")
    assert attach.status_code == 200
    assert [(s["id"], s["phase"]) for s in attach.json()["snapshots"]] == [(world.snapshot.pk, "before")]

    measure = api.post(
        f"/api/v1/sessions/{sid}/measures/",
        {"measure": "zone-reclaim-mode", "status": "applied", "change_made": "vm.zone_reclaim_mode=1",
         "metric_after": 15000},
        format="json",
    )  # fmt: skip
    assert measure.status_code == 200, measure.content
    [pm] = measure.json()["measures"]
    assert (pm["measure"], pm["status"], pm["metric_after"], pm["applied_by"]) == (
        "zone-reclaim-mode", "applied", 15000.0, "engineer_a"
    )  # fmt: skip

    close = api.post(
        f"/api/v1/sessions/{sid}/close/",
        {"outcome": "resolved", "root_cause": "page cache on the local node", "metric_after": 15000},
        format="json",
    )
    assert close.status_code == 200 and close.json()["state"] == "closed"
    assert close.json()["metric_after"] == 15000.0
    actions = set(AuditEntry.objects.filter(session_id=sid).values_list("action", flat=True))
    assert {"created", "snapshot", "measure", "measure.status", "metric", "state"} <= actions


def test_upload_into_a_session(world, django_capture_on_commit_callbacks):
    api = world.api("engineer_a")
    upload = SimpleUploadedFile("after.txt", b"$ numactl -H\navailable: 1 nodes (0)\n")
    r = api.post(
        "/api/v1/snapshots/",
        {"file": upload, "session": world.session.pk, "phase": "after"},
        format="multipart",
    )
    assert r.status_code == 202, r.content
    link = world.session.attachments.get(snapshot_id=r.json()["id"])
    assert link.phase == "after" and link.snapshot.cluster == f"session-{world.session.pk}-after"
    # Another team's session cannot receive uploads (and is not revealed).
    other = world.api("engineer_b").post(
        "/api/v1/snapshots/",
        {"file": SimpleUploadedFile("x.txt", b"$ uptime\n"), "session": world.session.pk},
        format="multipart",
    )
    assert other.status_code == 404


def test_invalid_inputs_are_400(world):
    api = world.api("engineer_a")
    sid = world.session.pk
    assert api.post("/api/v1/sessions/", {}, format="json").status_code == 400
    bad = api.post(f"/api/v1/sessions/{sid}/measures/", {"measure": "no-such-measure"}, format="json")
    assert bad.status_code == 400 and "measure" in bad.json()["error"]["details"]
    assert api.post(f"/api/v1/sessions/{sid}/close/", {"outcome": "maybe"}, format="json").status_code == 400
    assert (
        api.post(f"/api/v1/sessions/{sid}/snapshots/", {"snapshot": 99999}, format="json").status_code == 404
    )


def test_blocked_measure_is_refused(world):
    # A host reboot is not allowed by default: enabling NUMA in the firmware needs one.
    r = world.api("engineer_a").post(
        f"/api/v1/sessions/{world.session.pk}/measures/",
        {"measure": "enable-numa-in-firmware"},
        format="json",
    )
    assert r.status_code == 400, r.content
    assert r.json()["error"]["details"]["measure"]


def test_other_team_gets_404_everywhere(world):
    api = world.api("engineer_b")
    sid = world.session.pk
    assert api.get(f"/api/v1/sessions/{sid}/").status_code == 404
    assert world.session.pk not in [x["id"] for x in api.get("/api/v1/sessions/").json()["results"]]
    for path, body in (
        ("snapshots/", {"snapshot": world.snapshot.pk}),
        ("measures/", {"measure": "remove-netem"}),
        ("close/", {"outcome": "resolved"}),
    ):
        assert api.post(f"/api/v1/sessions/{sid}/{path}", body, format="json").status_code == 404
    assert Session.objects.get(pk=sid).state == "open"
    # Support staff work across teams.
    assert world.api("support").get(f"/api/v1/sessions/{sid}/").status_code == 200
