"""An upload over its work budget (issue 29: domains and outputs counted as
well as time) fails at once with the budget's reason on the snapshot: the
report and the API say it, nothing is half analysed, no 500."""

from __future__ import annotations

import time

import pytest
from django.contrib.auth import get_user_model

from accounts.services import rotate_api_token
from tests.collectors.test_work_budget import sosreport
from triage import analysis, uploads
from triage.models import Snapshot

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(settings, tmp_path, monkeypatch):
    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    return get_user_model().objects.create_user("alice", password="pw-alice-123")


def test_too_many_domain_xmls_fail_the_snapshot_with_the_budget_reason(alice, settings, client):
    settings.CASEBOOK_LIMITS = {**settings.CASEBOOK_LIMITS, "domains": 20}
    snap = uploads.create_snapshot(owner=alice, data=sosreport(), filename="sosreport-kvm.tar.gz")
    started = time.monotonic()
    snap = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    assert time.monotonic() - started < 20
    assert snap.status == Snapshot.Status.FAILED
    assert snap.last_error == (
        "over the work budget: more than 20 libvirt domain XMLs in one upload (CASEBOOK_MAX_DOMAINS); "
        "reading stopped there and nothing was analysed"
    )
    assert not snap.findings.exists()
    client.force_login(alice)
    page = client.get(snap.get_absolute_url())
    assert page.status_code == 200 and "CASEBOOK_MAX_DOMAINS" in page.content.decode()
    token = rotate_api_token(user=alice).key
    api = client.get(f"/api/v1/snapshots/{snap.pk}/", HTTP_AUTHORIZATION=f"Token {token}")
    assert api.status_code == 200 and api.json()["status"] == "failed"
    assert "over the work budget" in api.content.decode()


def test_the_same_upload_within_the_budget_is_analysed(alice, settings):
    settings.CASEBOOK_LIMITS = {**settings.CASEBOOK_LIMITS, "domains": 55}
    snap = uploads.create_snapshot(owner=alice, data=sosreport(), filename="sosreport-kvm.tar.gz")
    snap = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    assert snap.status == Snapshot.Status.DONE, snap.last_error
