"""Issue 25 point 3: an upload nothing could be read from never ends
"Done · No problem found". A PDF or random bytes are refused at upload (400 in
the API, a form error in the browser); an upload where no line was read
fails with its reason; a snapshot with nothing checkable says "nothing to
check yet" with the first commands; a case matched on words alone is labelled
so and never scored above one matched on evidence."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from accounts.models import Membership, Team
from collectors import archive
from tests.conftest import FIXTURES, ROOT
from triage import analysis, uploads
from triage.models import Snapshot

pytestmark = pytest.mark.django_db

# A real PDF of this machine when there is one (Debian ships the freedesktop
# MIME spec), else the start of one as every PDF writer emits it.
SYSTEM_PDF = Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf")
PDF = (
    SYSTEM_PDF.read_bytes()
    if SYSTEM_PDF.exists()
    else b"%PDF-1.5\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n"
)
RANDOM = os.urandom(3 * 1024 * 1024)
TICKET = FIXTURES / "tickets" / "v2v-mariadb-slow.txt"


@pytest.fixture
def alice(db):
    user = get_user_model().objects.create_user("alice", password="pw-alice-123")
    Membership.objects.create(user=user, team=Team.objects.create(name="DB", slug="db"), role="engineer")
    return user


@pytest.fixture
def web(alice):
    client = Client()
    client.force_login(alice)
    return client


@pytest.fixture
def api(alice):
    from rest_framework.test import APIClient

    from accounts.services import rotate_api_token

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {rotate_api_token(user=alice).key}")
    return client


@pytest.mark.parametrize(("name", "data"), [("report.pdf", PDF), ("dump.bin", RANDOM)])
def test_binary_upload_is_400_in_the_api(api, name, data):
    r = api.post("/api/v1/snapshots/", {"file": SimpleUploadedFile(name, data)}, format="multipart")
    assert r.status_code == 400, r.content
    message = " ".join(r.json()["error"]["details"]["file"])
    assert name in message and ("PDF" in message or "binary" in message)
    raw = api.generic("POST", "/api/v1/snapshots/?filename=" + name, data, content_type="application/gzip")
    assert raw.status_code == 400
    assert Snapshot.objects.count() == 0


@pytest.mark.parametrize(("name", "data"), [("report.pdf", PDF), ("dump.bin", RANDOM)])
def test_binary_upload_is_a_form_error_in_the_browser(web, name, data):
    r = web.post("/snapshots/new/", {"files": SimpleUploadedFile(name, data), "label": "", "cluster": ""})
    assert r.status_code == 400
    html = r.content.decode()
    assert "errorlist" in html and name in html
    assert Snapshot.objects.count() == 0


def test_an_upload_nothing_could_be_read_from_fails_with_its_reason(alice, monkeypatch, settings, tmp_path):
    """Bytes that pass the upload check (a zip with nothing Casebook reads) but
    give no line: failed, with the reason, never done."""
    import io
    import zipfile

    settings.MEDIA_ROOT = tmp_path
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("image.png", b"\x89PNG\r\n\x1a\n" + os.urandom(2048))
    snap = uploads.create_snapshot(owner=alice, data=buf.getvalue(), filename="photos.zip")
    done = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    assert done.status == Snapshot.Status.FAILED
    assert "nothing in this upload could be read" in done.last_error


def test_the_binary_check_passes_every_text_and_archive_fixture():
    for root in (FIXTURES, ROOT / "tests" / "evaluation"):
        for path in root.rglob("*"):
            if path.is_file():
                assert archive.binary_reason(path.read_bytes()[:4096]) is None, path


def test_prose_only_ticket_says_nothing_to_check_yet(web, alice, monkeypatch, settings, tmp_path):
    from kb.services import load_all

    load_all()
    settings.MEDIA_ROOT = tmp_path
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    snap = uploads.create_snapshot(owner=alice, data=TICKET.read_bytes(), filename=TICKET.name)
    done = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    assert done.status == Snapshot.Status.DONE
    assert done.checked == []
    html = web.get(f"/snapshots/{snap.pk}/").content.decode()
    assert "No problem found" not in html
    assert "Nothing to check yet" in html and "numactl -H" in html
    status = web.get(f"/snapshots/{snap.pk}/status/").content.decode()
    assert "No problem found" not in status and "Nothing to check yet" in status
    for case in done.similar_cases:
        assert case["words_only"] is True and case["score"] <= 0.2
    if done.similar_cases:
        assert "matched on words only" in html


def test_binary_evidence_added_to_a_snapshot_is_400(api, alice, monkeypatch, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    snap = uploads.create_snapshot(owner=alice, data=TICKET.read_bytes(), filename=TICKET.name)
    r = api.post(
        f"/api/v1/snapshots/{snap.pk}/artifacts/",
        {"file": SimpleUploadedFile("scan.pdf", PDF)},
        format="multipart",
    )
    assert r.status_code == 400, r.content
    assert snap.added_artifacts.count() == 0
