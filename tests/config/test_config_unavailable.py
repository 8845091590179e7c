"""Database and Redis outages answer 503 with Retry-After, never a 500: the API
with its documented error body, web pages with a styled page in the reader's
language (config/unavailable.py). The connection loss is simulated in-process
(the connection's cursor raises what psycopg raises when the server is gone);
tests/processes/test_database_outage.py terminates real PostgreSQL backends."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.db import InterfaceError, OperationalError, connections
from django.test import Client
from redis.exceptions import ConnectionError as RedisConnectionError

from accounts.services import rotate_api_token
from tests.conftest import ROOT
from triage import selectors

pytestmark = pytest.mark.django_db

GONE = "terminating connection due to administrator command\nserver closed the connection unexpectedly"


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user("ops", password="ops-pass-12345")


@pytest.fixture
def database_down(monkeypatch):
    """From now on every query of this thread fails like a dropped connection."""

    def broken(*args, **kwargs):
        raise OperationalError(GONE)

    def arm():
        monkeypatch.setattr(connections["default"], "cursor", broken)

    return arm


def assert_api_503(response):
    assert response.status_code == 503
    assert response["Retry-After"] == "10"
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert body["error"]["code"] == "unavailable"
    assert body["error"]["details"] == {"retry_after_seconds": 10}
    assert "administrator command" not in response.content.decode()


def test_api_answers_503_json_when_the_database_is_gone(user, database_down):
    token = rotate_api_token(user=user)
    database_down()
    client = Client(raise_request_exception=False)
    for path in ("/api/v1/rules/", "/api/v1/snapshots/", "/api/v1/cases/?q=numa"):
        assert_api_503(client.get(path, HTTP_AUTHORIZATION=f"Token {token.key}"))
    # An upload too: the request fails before anything is stored.
    response = client.post(
        "/api/v1/snapshots/", {"file": ("a.txt", b"x")}, HTTP_AUTHORIZATION=f"Token {token.key}"
    )
    assert_api_503(response)


def test_api_view_error_is_handled_by_the_middleware(user, monkeypatch):
    """Raised inside the view (after authentication): the middleware answers,
    nothing is reported as an unhandled exception."""
    token = rotate_api_token(user=user)

    def gone(*args, **kwargs):
        raise InterfaceError("connection already closed")

    monkeypatch.setattr(selectors, "visible_snapshots", gone)
    response = Client().get("/api/v1/snapshots/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert_api_503(response)


def test_web_page_answers_a_styled_503(user, monkeypatch):
    client = Client()
    client.force_login(user)

    def gone(*args, **kwargs):
        raise OperationalError(GONE)

    monkeypatch.setattr(selectors, "visible_snapshots", gone)
    response = client.get("/snapshots/")
    assert response.status_code == 503
    assert response["Retry-After"] == "10"
    html = response.content.decode()
    assert "Casebook is temporarily unavailable" in html
    assert "css/casebook.css" in html  # the site's stylesheet: a styled page
    assert "try again in 10 seconds" in html
    assert "administrator command" not in html


def test_web_503_page_is_translated(user, monkeypatch):
    client = Client(HTTP_ACCEPT_LANGUAGE="zh-hans")
    client.force_login(user)

    def gone(*args, **kwargs):
        raise OperationalError(GONE)

    monkeypatch.setattr(selectors, "visible_snapshots", gone)
    response = client.get("/snapshots/")
    assert response.status_code == 503
    html = response.content.decode()
    assert 'lang="zh-hans"' in html
    assert "暂时" in html  # "temporarily"
    assert "temporarily unavailable" not in html


def test_session_lost_before_the_view_runs_is_503_not_500(user, database_down):
    """The session and the user are loaded by middleware, before any view:
    ``handler500`` sees the database error and answers 503."""
    client = Client(raise_request_exception=False)
    client.force_login(user)
    database_down()
    response = client.get("/snapshots/")
    assert response.status_code == 503
    assert "Casebook is temporarily unavailable" in response.content.decode()


def test_redis_outage_is_503(user, monkeypatch):
    client = Client()
    client.force_login(user)

    def gone(*args, **kwargs):
        raise RedisConnectionError("Error 111 connecting to redis:6379. Connection refused.")

    monkeypatch.setattr(selectors, "visible_snapshots", gone)
    response = client.get("/snapshots/")
    assert response.status_code == 503
    assert "redis:6379" not in response.content.decode()


def test_other_errors_are_still_500(user, monkeypatch):
    client = Client(raise_request_exception=False)
    client.force_login(user)

    def bug(*args, **kwargs):
        raise ValueError("a bug")

    monkeypatch.setattr(selectors, "visible_snapshots", bug)
    assert client.get("/snapshots/").status_code == 500


def test_persistent_connections_are_health_checked(tmp_path):
    """With a server database, a kept connection the server dropped is noticed
    before a request uses it."""
    code = (
        "import django; django.setup(); from django.conf import settings; "
        "d = settings.DATABASES['default']; print(d['CONN_HEALTH_CHECKS'], d['CONN_MAX_AGE'])"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": "postgres://casebook@127.0.0.1:5432/casebook",
        "CASEBOOK_DATA_DIR": str(tmp_path),
    }
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["True", "60"]
