"""The real-process harness of the pipeline tests: a redis-server on a free
port, a gunicorn web process and Celery workers (bench/pipeline.py's ``Stack``)
sharing pytest-django's PostgreSQL test database, and a signed-in web client.

``tests/processes/conftest.py`` and ``tests/integrations/conftest.py`` expose
the ``stack`` and ``web`` fixtures; tests import the helpers from here.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from bench.pipeline import Stack, WebClient, session_key_for
from collectors.facts import SnapshotFacts
from engine import run as engine_run
from tests.conftest import FIXTURES, port_open, service_unavailable
from triage.models import Snapshot

ZSTACK_BEFORE = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before"


def zstack_inputs() -> list[Path]:
    """The ZStack host first (it carries most of the seed's findings), then the guest."""
    files = [p for p in ZSTACK_BEFORE.glob("*") if p.is_file()]
    files.sort(key=lambda p: p.name != "zstack-9.txt")
    if not files or files[0].name != "zstack-9.txt":
        pytest.fail(f"rebuilt founding snapshot missing: {ZSTACK_BEFORE}")
    return files


def expected_rules(path: Path) -> list[str]:
    """What the pipeline must store for ``path`` analysed alone, computed
    in-process with the same loader and engine."""
    from collectors.archive import load

    result = engine_run.analyze(SnapshotFacts(hosts=[load(str(path), label=path.name, split=False).host]))
    return sorted(f.rule for f in result.findings)


def servers_database_url(who: str) -> str:
    """The URL of this test's PostgreSQL database for servers in other
    processes; skips (fails in CI) where ``who`` cannot run: SQLite, no
    redis-server, PostgreSQL not listening."""
    if connection.vendor != "postgresql":
        service_unavailable(f"{who} need DATABASE_URL pointing to PostgreSQL")
    if not shutil.which("redis-server"):
        service_unavailable("redis-server is not installed")
    if not port_open("127.0.0.1", 5432):
        service_unavailable("PostgreSQL is not listening on 127.0.0.1:5432")
    db = connection.settings_dict
    credentials = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{credentials}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def stack(transactional_db, tmp_path):
    url = servers_database_url("the pipeline integration tests")
    s = Stack(database_url=url, workdir=tmp_path, secret_key=settings.SECRET_KEY)
    try:
        s.start_redis()
        s.start_web()
        yield s
    finally:
        # The assertions are made: SIGKILL, nothing waits for a shutdown.
        s.kill_all()
        # Connections of the killed processes are gone; make sure no other
        # session holds the test database before pytest-django flushes it.
        connection.close()


@pytest.fixture
def web(stack, django_user_model):
    user = django_user_model.objects.create_user("pipeline", password="pipeline-pass-123")
    return WebClient(stack.base_url, session_key_for(user)), user


def wait_for(predicate, timeout: float, interval: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    return predicate()


def statuses(ids) -> dict[str, int]:
    out: dict[str, int] = {}
    for status in Snapshot.objects.filter(pk__in=ids).values_list("status", flat=True):
        out[status] = out.get(status, 0) + 1
    return out


def pool_children(proc) -> list[int]:
    """The pids of a Celery worker's pool processes."""
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(proc.popen.pid)], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]
