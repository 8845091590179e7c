"""Upload requests of the web pages answered from their headers
(config.request_limits): oversized -> 413, over the upload rate -> 429 with
Retry-After; the rate counter is the one the API uses."""

from __future__ import annotations

import http.client
import json
import os
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.services import rotate_api_token
from tests.conftest import FIXTURES
from triage import uploads
from triage.models import Snapshot

pytestmark = pytest.mark.django_db

TWO_GIB = str(2 << 30)


@pytest.fixture(autouse=True)
def quiet(settings, tmp_path, monkeypatch):
    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)


@pytest.fixture
def alice(django_user_model):
    return django_user_model.objects.create_user("alice", password="pw-alice-123")


@pytest.fixture
def web(client, alice):
    client.force_login(alice)
    return client


def rate(settings, value: str) -> None:
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"uploads": value}}


def test_declared_oversized_body_is_refused_before_it_is_read(web, settings):
    temp_before = set(os.listdir(settings.FILE_UPLOAD_TEMP_DIR))
    response = web.generic(
        "POST",
        reverse("triage:snapshot_new"),
        b"--x\r\n",
        content_type="multipart/form-data; boundary=x",
        CONTENT_LENGTH=TWO_GIB,
    )
    assert response.status_code == 413
    html = response.content.decode()
    assert "Upload too large" in html and "1024 MiB" in html and 'class="site-header"' in html
    assert set(os.listdir(settings.FILE_UPLOAD_TEMP_DIR)) == temp_before
    assert not Snapshot.objects.exists()


def test_upload_form_is_throttled_with_a_styled_page(web, settings):
    rate(settings, "2/min")
    url = reverse("triage:snapshot_new")
    codes = [web.post(url, {"transcript": f"$ uptime\n {i} users\n"}).status_code for i in range(3)]
    assert codes == [302, 302, 429]
    refused = web.post(url, {"transcript": "$ uptime\n"})
    assert refused.status_code == 429 and 55 <= int(refused["Retry-After"]) <= 60
    html = refused.content.decode()
    assert "Too many uploads" in html and "2/min" in html and 'class="site-header"' in html
    assert Snapshot.objects.count() == 2
    assert web.get(url).status_code == 200  # showing the form is not an upload


def test_api_web_form_and_wizard_share_one_counter(web, alice, settings):
    from troubleshoot.lifecycle import create_session

    rate(settings, "3/min")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {rotate_api_token(user=alice).key}")
    assert api.generic("POST", "/api/v1/snapshots/", b"$ w\n", content_type="text/plain").status_code == 202
    assert web.post(reverse("triage:snapshot_new"), {"transcript": "$ uptime\n"}).status_code == 302
    session = create_session(owner=alice, title="slow database")
    step = reverse("troubleshoot:step", args=[session.pk, "snapshots"])
    upload = {
        "action": "upload",
        "phase": "before",
        "files": SimpleUploadedFile("a.txt", b"$ uname -r\n6.1.0\n"),
    }
    assert web.post(step, upload).status_code == 302
    # A wizard form without a file (urlencoded) is not an upload.
    form = web.post(step, "action=metric&metric_after=", content_type="application/x-www-form-urlencoded")
    assert form.status_code in (200, 302)

    api_refused = api.generic("POST", "/api/v1/snapshots/", b"$ w\n", content_type="text/plain")
    assert api_refused.status_code == 429 and api_refused["Retry-After"]
    assert api_refused.json()["error"]["code"] == "throttled"
    upload["files"] = SimpleUploadedFile("b.txt", b"$ uptime\n")
    wizard_refused = web.post(step, upload, HTTP_HX_REQUEST="true")
    assert wizard_refused.status_code == 429 and wizard_refused["HX-Reswap"] == "afterbegin"
    fragment = wizard_refused.content.decode()
    assert "Too many uploads" in fragment and "<html" not in fragment
    assert Snapshot.objects.filter(owner=alice).count() == 3


def test_wizard_oversized_upload_is_refused_before_it_is_read(web, alice):
    from troubleshoot.lifecycle import create_session

    session = create_session(owner=alice, title="slow database")
    response = web.generic(
        "POST",
        reverse("troubleshoot:step", args=[session.pk, "snapshots"]),
        b"--x\r\n",
        content_type="multipart/form-data; boundary=x",
        CONTENT_LENGTH=TWO_GIB,
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 413 and "Upload too large" in response.content.decode()


def test_anonymous_upload_is_sent_to_sign_in_unread(client, settings):
    temp_before = set(os.listdir(settings.FILE_UPLOAD_TEMP_DIR))
    response = client.generic(
        "POST",
        reverse("triage:snapshot_new"),
        b"--x\r\n",
        content_type="multipart/form-data; boundary=x",
        CONTENT_LENGTH=str(100 << 20),
    )
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert set(os.listdir(settings.FILE_UPLOAD_TEMP_DIR)) == temp_before


def test_cross_site_posts_do_not_use_up_the_users_uploads(web, alice, settings):
    from django.test import Client

    rate(settings, "1/min")
    url = reverse("triage:snapshot_new")
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    for _ in range(3):
        forged = browser.post(url, {"transcript": "$ uptime\n"}, HTTP_ORIGIN="https://evil.example")
        assert forged.status_code == 403  # refused by the CSRF check, not counted
    assert web.post(url, {"transcript": "$ uptime\n"}, HTTP_ORIGIN="http://testserver").status_code == 302


def _raw_post(live_server, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict, bytes, float]:
    """POST over a raw connection that declares what ``headers`` say and sends
    only ``body``: (status, headers, body, seconds to the answer)."""
    parts = urlsplit(live_server.url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    started = time.monotonic()
    try:
        conn.putrequest("POST", path)
        for name, value in headers.items():
            conn.putheader(name, value)
        conn.endheaders()
        conn.send(body)
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read(), time.monotonic() - started
    finally:
        conn.close()


@pytest.mark.django_db(transaction=True)
def test_a_declared_2_gib_body_with_a_session_gets_413_before_anything_is_read(live_server, settings):
    """A session-authenticated API upload: DRF's CSRF check parses the body
    before the view, so the size check must come before it, on every route."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    user = get_user_model().objects.create_user("bob", password="pw-bob-12345")
    browser = Client()
    browser.force_login(user)
    # With a CSRF cookie the CSRF check looks for the token in the body: it parses it.
    cookie = f"sessionid={browser.cookies['sessionid'].value}; csrftoken={'c' * 32}"
    temp_before = set(os.listdir(settings.FILE_UPLOAD_TEMP_DIR))
    media_before = list(Path(settings.MEDIA_ROOT).rglob("*")) if Path(settings.MEDIA_ROOT).exists() else []
    multipart = {
        "Cookie": cookie,
        "Content-Type": "multipart/form-data; boundary=x",
        "Content-Length": TWO_GIB,
    }
    for path in ("/api/v1/snapshots/", "/api/v1/snapshots/1/artifacts/", "/sessions/new/", "/cases/"):
        status, _headers, body, seconds = _raw_post(live_server, path, multipart, b"--x\r\n" + b"A" * 65536)
        assert status == 413, (path, status, body[:200])
        assert seconds < 5, (path, seconds)
        if path.startswith("/api/"):
            assert json.loads(body)["error"]["code"] == "too_large"
    # A body of undeclared length is refused too (Django would read it as empty).
    chunked = {"Cookie": cookie, "Content-Type": "text/plain", "Transfer-Encoding": "chunked"}
    status, _headers, body, _seconds = _raw_post(
        live_server, "/api/v1/snapshots/", chunked, b"10\r\n" + b"B" * 16
    )
    assert status == 411 and json.loads(body)["error"]["code"] == "length_required"
    assert set(os.listdir(settings.FILE_UPLOAD_TEMP_DIR)) == temp_before
    assert (
        list(Path(settings.MEDIA_ROOT).rglob("*")) if Path(settings.MEDIA_ROOT).exists() else []
    ) == media_before
    assert not Snapshot.objects.exists()


def test_byte_weighted_rate_counts_large_uploads_more_on_every_way_in(web, alice, settings):
    """CASEBOOK_UPLOAD_WEIGHT_BYTES: the API and the web form weigh an upload
    by its declared length against the one counter (config.ratelimit)."""
    rate(settings, "4/min")
    big = (FIXTURES / "seeds" / "oceanbase-bmsql-tuning" / "before" / "obs-197.txt").read_bytes()
    settings.CASEBOOK_UPLOAD_WEIGHT_BYTES = len(big) // 2 + 1  # the seed counts twice
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {rotate_api_token(user=alice).key}")
    assert api.generic("POST", "/api/v1/snapshots/", big, content_type="text/plain").status_code == 202

    def small(i):  # far under the unit: counts once
        return {"transcript": f"$ uptime\n {i} users\n"}

    assert web.post(reverse("triage:snapshot_new"), small(1)).status_code == 302  # 3 of 4
    refused = api.generic("POST", "/api/v1/snapshots/", big, content_type="text/plain")
    assert refused.status_code == 429 and refused["Retry-After"]
    assert web.post(reverse("triage:snapshot_new"), small(2)).status_code == 302  # 4 of 4
    assert web.post(reverse("triage:snapshot_new"), small(3)).status_code == 429
    assert Snapshot.objects.filter(owner=alice).count() == 3
