"""The real pipeline: a Celery worker process consuming from Redis, writing to
PostgreSQL, fed by the application's own service function.

Isolation from other runs sharing the same servers: a throwaway database
(``casebook_it_<random>``), Redis DB 14 and a queue of its own.
"""

import os
import re
import secrets
import signal
import subprocess
import sys
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.services, pytest.mark.worker, pytest.mark.slow]


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def with_redis_db(url: str, db: int) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{db}"))


@pytest.fixture
def scratch_database(postgres_url):
    import psycopg

    name = f"casebook_it_{secrets.token_hex(4)}"
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield with_database(postgres_url, name)
    finally:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_worker_answers_a_heartbeat_and_commits_it_to_postgres(scratch_database, redis_url, tmp_path):
    import psycopg
    import redis

    token = secrets.token_hex(4)
    queue = f"casebook-it-{token}"
    broker = with_redis_db(redis_url, 14)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "CELERY_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=scratch_database,
        REDIS_URL=broker,
        CASEBOOK_QUEUE=queue,
        CASEBOOK_DATA_DIR=str(tmp_path / "data"),
        SECRET_KEY=secrets.token_urlsafe(50),
        DEBUG="false",
    )

    def manage(*args: str, timeout: int = 180) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    migrated = manage("migrate", "--noinput")
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr

    log_path = tmp_path / "worker.log"
    node = f"it-{token}@%h"
    with log_path.open("w") as log:
        worker = subprocess.Popen(
            [
                *(sys.executable, "-m", "celery", "-A", "config", "worker", "-l", "info", "-n", node),
                *("--concurrency", "1", "--without-gossip", "--without-mingle"),
                # The heartbeat is routed to the beat queue (CASEBOOK_BEAT_QUEUE).
                *("-Q", f"{queue},{queue}-beat"),
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        # The service queues the task on commit; the command waits for the worker's answer.
        answered = manage("heartbeat", "--wait", "90")
        worker_log = log_path.read_text()
        assert answered.returncode == 0, answered.stdout + answered.stderr + worker_log
        match = re.search(r"heartbeat (\d+) answered by (\S+) in", answered.stdout)
        assert match, answered.stdout
        heartbeat_id, answered_by = int(match.group(1)), match.group(2)
        assert answered_by.startswith(f"it-{token}@")

        # Read it back straight from PostgreSQL: committed, by that worker.
        with psycopg.connect(scratch_database) as conn:
            row = conn.execute(
                "SELECT worker, completed_at, requested_at FROM accounts_workerheartbeat WHERE id = %s",
                (heartbeat_id,),
            ).fetchone()
        assert row is not None
        worker_name, completed_at, requested_at = row
        assert worker_name == answered_by
        assert completed_at >= requested_at
    finally:
        # Warm shutdown: SIGTERM lets the worker finish and acknowledge its task.
        worker.send_signal(signal.SIGTERM)
        try:
            exit_code = worker.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
            pytest.fail("the Celery worker did not stop within 60 s of SIGTERM")
        client = redis.Redis.from_url(broker)
        client.delete(queue, f"{queue}-beat")
        client.close()

    worker_log = log_path.read_text()
    assert exit_code == 0, worker_log
    assert f"it-{token}@" in worker_log and "ready." in worker_log
    assert re.search(r"Task accounts\.tasks\.record_heartbeat\[[0-9a-f-]+\] succeeded", worker_log), (
        worker_log
    )
    assert "Warm shutdown" in worker_log or "worker: Warm shutdown" in worker_log, worker_log
