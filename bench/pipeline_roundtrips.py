"""Round trips of one upload on its way to ``done``, counted (not timed).

Usage (PostgreSQL on 127.0.0.1:5432, redis-server on PATH)::

    .venv/bin/python bench/pipeline_roundtrips.py [--root CHECKOUT] [--rounds 3]

Wall-clock figures of ``bench/pipeline.py`` move by 2x with the load of the
shared machine; what each stage asks of PostgreSQL and Redis does not. This
uploads the inputs of ``bench/pipeline.py`` (the founding snapshots, each with
its case as the cluster, byte-distinct every round) through the web form with
Django's test client, in autocommit as gunicorn runs it (the ``on_commit``
enqueue runs), then runs ``triage.tasks.analyze_snapshot`` in the same process,
and counts per upload, for each stage of the pipeline benchmark:

- ``upload``: the POST (session, user, the durable write, the enqueue);
- ``task_to_claim``: from the task's start to the claim that stamps
  ``started_at`` (the end of the benchmark's "queue" stage);
- ``done_to_commit``: from the save of the row as ``done`` (its
  ``finished_at``, the end of the "task" stage) to the commit that lets anyone
  see it done: outside both stages, inside the end-to-end figure;
- ``after_commit``: what the worker still does before it can take the next
  message.

SQL statements (COPY excluded: it bypasses the cursor wrapper), commits, new
Redis connections and Redis commands, from the first round after a warm-up
round. ``--root`` measures another checkout's code (a worktree at an older
commit) with this script: it creates database ``casebook_roundtrips_<name>``
and starts its own redis-server on a free port. Milliseconds are printed too
(medians, and per input and stage in ``ms_per_input``): wall time, for
orientation only, or with ``--cpu`` this process's CPU time, which the load of
the machine moves far less.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

STAGES = ("upload", "task_to_claim", "done_to_commit", "after_commit")

# The clock of the "ms" figures: wall time, or with ``--cpu`` this process's
# CPU time (what the code costs, whatever the machine's load).
CLOCK = time.perf_counter


class Recorder:
    """Every SQL statement, commit, new Redis connection and Redis command of
    the process while :attr:`on` is set, with its time."""

    def __init__(self) -> None:
        self.on = threading.Event()
        self.events: list[tuple[float, str, str, object, float]] = []

    def note(self, kind: str, what: object, seconds: float = 0.0) -> None:
        if self.on.is_set():
            self.events.append((CLOCK(), threading.current_thread().name, kind, what, seconds))

    def take(self) -> list[tuple]:
        events, self.events = self.events, []
        return events

    def install(self) -> None:
        import redis.connection
        from django.db.backends.base.base import BaseDatabaseWrapper
        from django.db.backends.utils import CursorWrapper

        recorder = self
        execute = CursorWrapper._execute_with_wrappers
        commit = BaseDatabaseWrapper._commit
        on_connect = redis.connection.AbstractConnection.on_connect_check_health
        send = redis.connection.AbstractConnection.send_command

        def timed_execute(self, sql, params, many, executor):
            t0 = CLOCK()
            try:
                return execute(self, sql, params, many, executor)
            finally:
                recorder.note("sql", (sql, params), CLOCK() - t0)

        def timed_commit(self):
            t0 = CLOCK()
            try:
                return commit(self)
            finally:
                recorder.note("commit", "", CLOCK() - t0)

        def counted_connect(self, *args, **kwargs):
            recorder.note("redis-connect", "")
            return on_connect(self, *args, **kwargs)

        def counted_send(self, *args, **kwargs):
            recorder.note("redis", " ".join(str(a) for a in args[:2]))
            return send(self, *args, **kwargs)

        CursorWrapper._execute_with_wrappers = timed_execute
        BaseDatabaseWrapper._commit = timed_commit
        redis.connection.AbstractConnection.on_connect_check_health = counted_connect
        redis.connection.AbstractConnection.send_command = counted_send


def _summary(events: list[tuple], start: float, end: float) -> dict:
    main = [e for e in events if e[1] == "MainThread"]
    sql = [e for e in main if e[2] == "sql"]
    return {
        "sql": len(sql),
        "commits": sum(1 for e in main if e[2] == "commit"),
        "redis_connections": sum(1 for e in events if e[2] == "redis-connect"),
        "redis_commands": [e[3] for e in events if e[2] == "redis"],
        "statements": [e[3][0][:100] for e in sql],
        "ms": round((end - start) * 1000, 2),
        "sql_ms": round(sum(e[4] for e in sql) * 1000, 2),
    }


def _row_update(event: tuple, status: str) -> bool:
    if event[2] != "sql":
        return False
    sql, params = event[3]
    return sql.startswith('UPDATE "triage_snapshot"') and status in [str(p) for p in params or ()]


def split_task(events: list[tuple], start: float, end: float) -> dict[str, dict]:
    """The task's events cut at the claim, the save as done and its commit."""
    main = [e for e in events if e[1] == "MainThread"]
    claim = next(e[0] for e in main if _row_update(e, "analyzing"))
    i_done = next(i for i, e in enumerate(main) if _row_update(e, "done"))
    done = main[i_done][0]
    committed = next(e[0] for e in main[i_done:] if e[2] == "commit")
    return {
        "task_to_claim": _summary([e for e in events if e[0] <= claim], start, claim),
        "done_to_commit": _summary([e for e in events if done < e[0] <= committed], done, committed),
        "after_commit": _summary([e for e in events if e[0] > committed], committed, end),
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis(port: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return proc
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("redis-server did not start")


def set_up(root: Path, database: str, redis_port: int, workdir: Path) -> None:
    base = os.environ.get("BENCH_POSTGRES", "postgres://postgres@127.0.0.1:5432")
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": f"{base}/{database}",
            "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
            "CASEBOOK_DATA_DIR": str(workdir / "data"),
            "CASEBOOK_MANIFEST_STATIC": "0",
            "DEBUG": "0",
            "CONN_MAX_AGE": "60",
        }
    )
    os.environ.setdefault("SECRET_KEY", "roundtrips-" + os.urandom(24).hex())
    import psycopg

    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{database}"')
    # the measured checkout's packages, never this one's (nor the working directory's)
    os.chdir(root)
    sys.path[:] = [str(root), str(HERE), *(p for p in sys.path if p not in ("", ".", str(HERE.parent)))]
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def measure(rounds: int) -> list[dict]:
    from django.contrib.auth import get_user_model
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.test import Client
    from pipeline import distinct, seed_inputs

    from triage import tasks
    from triage.models import Snapshot

    recorder = Recorder()
    recorder.install()
    client = Client()
    client.force_login(get_user_model().objects.create_user("bench", password="bench-password-123"))
    inputs = [(p.parent.parent.name, p.read_bytes(), p.name) for p in seed_inputs()]
    rows = []
    for round_ in range(rounds + 1):  # round 0 warms the caches and connections
        for case, data, filename in inputs:
            upload = SimpleUploadedFile(filename, distinct(data, filename, round_))
            recorder.on.set()
            t0 = CLOCK()
            response = client.post(
                "/snapshots/new/", {"label": Path(filename).stem, "cluster": case, "files": upload}
            )
            t1 = CLOCK()
            uploaded = recorder.take()
            pk = int(response["Location"].rstrip("/").rsplit("/", 1)[1])
            t2 = CLOCK()
            tasks.analyze_snapshot(pk)
            t3 = CLOCK()
            recorder.on.clear()
            task = recorder.take()
            status = Snapshot.objects.filter(pk=pk).values_list("status", flat=True).first()
            if status != "done":
                raise RuntimeError(f"{case}/{filename}: {status}")
            if round_:
                rows.append(
                    {"input": f"{case}/{filename}", "upload": _summary(uploaded, t0, t1)}
                    | split_task(task, t2, t3)
                )
    return rows


def report(rows: list[dict]) -> dict:
    def median(stage: str, key: str) -> float:
        return statistics.median(r[stage][key] for r in rows)

    last = {r["input"]: r for r in rows}  # the last round of each input
    first = rows[0]
    return {
        "uploads": len(rows),
        "median": {
            stage: {
                key: median(stage, key) for key in ("sql", "commits", "redis_connections", "ms", "sql_ms")
            }
            for stage in STAGES
        },
        "sql_per_input": {name: [r[stage]["sql"] for stage in STAGES] for name, r in last.items()},
        "ms_per_input": {
            name: [statistics.median(r[stage]["ms"] for r in rows if r["input"] == name) for stage in STAGES]
            for name in last
        },
        "redis_commands": {stage: first[stage]["redis_commands"] for stage in STAGES},
        "statements": {name: {stage: r[stage]["statements"] for stage in STAGES} for name, r in last.items()},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=HERE.parent, help="the checkout whose code is measured")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--database", default="")
    parser.add_argument("--cpu", action="store_true", help="milliseconds of CPU time, not wall time")
    args = parser.parse_args()
    if args.cpu:
        global CLOCK
        CLOCK = time.process_time
    root = args.root.resolve()
    database = args.database or f"casebook_roundtrips_{root.name.replace('-', '_')}"
    workdir = Path(tempfile.mkdtemp(prefix="casebook-roundtrips-"))
    port = free_port()
    redis_proc = start_redis(port)
    try:
        set_up(root, database, port, workdir)
        print(json.dumps(report(measure(args.rounds)), indent=1))
    finally:
        os.killpg(redis_proc.pid, 15)
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
