"""A database outage during requests gives 503s (JSON on the API, a page on
the web) and never a 500; /healthz never shows connection details; service
resumes by itself when the database is back (issue 15, acceptance 5).

The shared PostgreSQL server is never restarted: the outage is made on the
test's own throwaway database only, by refusing new connections to it
(``ALTER DATABASE ... ALLOW_CONNECTIONS false``) and terminating its backends
(``pg_terminate_backend``), which is what clients see while a server restarts.
A real gunicorn serves the requests with persistent connections
(``CONN_MAX_AGE=60``, ``CONN_HEALTH_CHECKS``), while a client thread keeps
sending requests as the backends are terminated under it.
"""

from __future__ import annotations

import threading
import time

import pytest
import requests
from django.conf import settings
from django.db import connection

from accounts.services import rotate_api_token
from bench.pipeline import Stack, session_key_for
from tests.processes.harness import servers_database_url

pytestmark = [pytest.mark.services, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _terminate_backends(*, block: bool | None = None) -> int:
    """Terminate every other session of the test database; optionally refuse
    (``block=True``) or allow again (``block=False``) new connections to it.
    Run from the server's maintenance database (a database cannot refuse
    connections to itself from inside)."""
    import psycopg

    db = connection.settings_dict
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        own = cursor.fetchone()[0]
    with psycopg.connect(
        host=db["HOST"] or "127.0.0.1",
        port=db["PORT"] or 5432,
        user=db["USER"],
        password=db.get("PASSWORD") or None,
        dbname="postgres",
        autocommit=True,
    ) as maintenance:
        if block is not None:
            allow = "false" if block else "true"
            maintenance.execute(f'ALTER DATABASE "{db["NAME"]}" ALLOW_CONNECTIONS {allow}')
        row = maintenance.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = %s AND pid <> %s",
            (db["NAME"], own),
        ).fetchone()
    return row[0]


@pytest.fixture
def web_stack(transactional_db, tmp_path):
    url = servers_database_url("the outage tests")
    stack = Stack(database_url=url, workdir=tmp_path, secret_key=settings.SECRET_KEY, conn_max_age=60)
    try:
        stack.start_redis()
        stack.start_web()
        yield stack
    finally:
        try:
            _terminate_backends(block=False)
        finally:
            stack.kill_all()
            connection.close()


def test_database_outage_gives_503_never_500(web_stack, django_user_model):
    user = django_user_model.objects.create_user("outage", password="outage-pass-123")
    token = rotate_api_token(user=user).key
    base = web_stack.base_url
    api = requests.Session()
    api.headers["Authorization"] = f"Token {token}"
    page = requests.Session()
    page.cookies.set("sessionid", session_key_for(user), domain="127.0.0.1", path="/")

    def get_api():
        return api.get(f"{base}/api/v1/snapshots/", timeout=30)

    def get_page():
        return page.get(f"{base}/snapshots/", timeout=30)

    assert get_api().status_code == 200 and get_page().status_code == 200

    # A client keeps sending requests while backends are terminated under it.
    seen: list[tuple[str, int, str]] = []
    stop = threading.Event()

    def hammer():
        while not stop.is_set():
            for kind, call in (("api", get_api), ("page", get_page)):
                response = call()
                seen.append((kind, response.status_code, response.text[:2000]))

    thread = threading.Thread(target=hammer, daemon=True)
    thread.start()
    try:
        for _ in range(10):
            time.sleep(0.3)
            _terminate_backends()

        # The database refuses connections for a while, as during a restart.
        _terminate_backends(block=True)
        time.sleep(1.0)
        during_api, during_page = get_api(), get_page()
        health = requests.get(f"{base}/healthz", timeout=30)
    finally:
        _terminate_backends(block=False)
        time.sleep(1.0)
        stop.set()
        thread.join(60)

    assert during_api.status_code == 503
    assert during_api.headers["Retry-After"] == "10"
    assert during_api.json()["error"]["code"] == "unavailable"
    assert during_page.status_code == 503 and during_page.headers["Retry-After"]
    assert "temporarily unavailable" in during_page.text and "casebook.css" in during_page.text
    assert health.status_code == 503
    assert health.json()["database"].startswith("error: ")
    db = connection.settings_dict
    for detail in ("127.0.0.1", str(db["PORT"] or 5432), db["NAME"], db["USER"]):
        assert detail not in health.text, detail

    codes = {code for _, code, _ in seen}
    assert 500 not in codes, [s for s in seen if s[1] == 500][:2]
    assert codes <= {200, 503}, codes
    assert any(code == 200 for _, code, _ in seen)
    for kind, code, text in seen:
        if code == 503 and kind == "api":
            assert '"unavailable"' in text

    # Back by itself: no restart of the web process needed.
    assert get_api().status_code == 200
    assert get_page().status_code == 200
    assert requests.get(f"{base}/healthz", timeout=30).json()["database"] == "ok"
