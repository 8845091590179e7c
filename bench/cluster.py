"""A large cluster uploaded host by host through the real stack.

Usage (PostgreSQL on 127.0.0.1:5432, redis-server on PATH)::

    .venv/bin/python bench/cluster.py [--hosts 2000] [--write docs/performance.md]

It starts its own redis-server, a gunicorn web process and one Celery worker
(prefork, concurrency 1) against a fresh database ``casebook_bench_cluster``
(the harness of ``bench/pipeline.py``), then uploads ``--hosts`` hosts of one
cluster through the web form, one after the other, each measured from the start
of the HTTP upload to its row reaching ``done``. Every host is seed 001's
healthy Kunpeng host (``gp-sdw01``, a Greenplum segment host) under its own
hostname with its own STREAM figures; three of them, spread over the run, have
``vm.zone_reclaim_mode = 1`` (the drift of seed 001).

Figures: upload -> done p50/p95 of the first and of the last 100 hosts (the
last analysis compares its host with every other one: if a cluster's size cost
a parse per member, the last hosts would be ``hosts / 100`` times slower), the
cluster page's render time for all hosts (median of 5 requests, first page),
and whether the page's fleet finding names exactly the three drifted hosts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.pipeline import Stack, WebClient, percentile, session_key_for, wait_done, write_section  # noqa: E402

TEMPLATE = ROOT / "tests" / "fixtures" / "seeds" / "kunpeng-stream-zone-reclaim" / "before" / "gp-sdw01.txt"
CLUSTER = "greenplum-2000"
WINDOW = 100
# Polling the row every 50 ms (not pipeline.py's 5 ms): over thousands of uploads
# the polling itself would load the 2-CPU machine the worker runs on.
POLL = 0.05


def host_name(index: int) -> str:
    return f"gp-seg{index:04d}"


def drifted_indexes(hosts: int) -> set[int]:
    """Three hosts spread over the run (a quarter, half and three quarters in)."""
    return {hosts // 4, hosts // 2, (3 * hosts) // 4}


def host_transcript(index: int, *, drifted: bool = False) -> str:
    """Seed 001's healthy host as host ``index``: its own hostname, STREAM
    figures within 2 % of each other (no benchmark spread), and
    ``vm.zone_reclaim_mode = 1`` when ``drifted``."""
    text = TEMPLATE.read_text(encoding="utf-8").replace("gp-sdw01", host_name(index))
    if drifted:
        text = text.replace("vm.zone_reclaim_mode = 0", "vm.zone_reclaim_mode = 1")
    jitter = 1 + ((index * 37) % 41 - 20) / 1000  # within +-2 %
    for name in ("Copy", "Scale", "Add", "Triad"):
        line = re.search(rf"^{name}:\s+(\d+\.\d)", text, re.M)
        value = float(line.group(1)) * jitter
        text = text.replace(line.group(0), line.group(0).replace(line.group(1), f"{value:.1f}"))
    return text


def _window(latencies: list[float]) -> dict:
    return {
        "n": len(latencies),
        "p50": percentile(latencies, 0.5),
        "p95": percentile(latencies, 0.95),
        "max": max(latencies),
    }


def run_bench(hosts: int, database: str) -> dict:
    base_url = os.environ.get("BENCH_POSTGRES", "postgres://postgres@127.0.0.1:5432")
    database_url = f"{base_url}/{database}"
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import psycopg

    with psycopg.connect(f"{base_url}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{database}"')

    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from triage.models import Snapshot

    call_command("migrate", verbosity=0)
    call_command("loadcases", verbosity=0)
    user = get_user_model().objects.create_user("bench", password="bench-password-123")
    # One user uploads thousands of hosts, faster than the per-user upload
    # rate allows (120/min): this measures the analyses, not the throttle.
    os.environ.setdefault("CASEBOOK_UPLOAD_RATE", "100000/min")
    workdir = Path(tempfile.mkdtemp(prefix="casebook-bench-cluster-"))
    stack = Stack(database_url=database_url, workdir=workdir, secret_key=settings.SECRET_KEY, conn_max_age=60)
    drifted = drifted_indexes(hosts)
    latencies: list[float] = []
    failed = 0
    try:
        stack.start_redis()
        stack.start_worker()
        client = WebClient(stack.start_web(), session_key_for(user))
        warm = client.upload(b"$ uname -r\n6.1.0\n", "warm-up.txt", label="warm-up")
        wait_done(WebClient.snapshot_id(warm))
        started = time.perf_counter()
        for index in range(1, hosts + 1):
            data = host_transcript(index, drifted=index in drifted).encode()
            name = f"{host_name(index)}.txt"
            t0 = time.time()
            response = _upload(client, data, name, index)
            snapshot_id = WebClient.snapshot_id(response)
            status = wait_done(snapshot_id, timeout=300, poll=POLL)
            # Up to the row's finish time (the worker's clock, this machine's),
            # not to the poll that saw it: at ~70 ms per host a 50 ms poll
            # would measure in steps of 50 ms.
            finished = Snapshot.objects.filter(pk=snapshot_id).values_list("finished_at", flat=True).first()
            elapsed = (finished.timestamp() if finished else time.time()) - t0
            if status == "done":
                latencies.append(elapsed)
            else:
                failed += 1
            autovacuum_like()
            if index % 100 == 0:
                recent = latencies[-WINDOW:]
                print(
                    f"{index} hosts, last {len(recent)}: p50 {percentile(recent, 0.5) * 1000:.0f} ms "
                    f"p95 {percentile(recent, 0.95) * 1000:.0f} ms, failed {failed}, "
                    f"load average {os.getloadavg()[1]:.1f}, {time.strftime('%H:%M:%S', time.gmtime())} UTC",
                    file=sys.stderr,
                    flush=True,
                )
        upload_seconds = time.perf_counter() - started

        renders, html = _page(client, stack)
        named = _drift_hosts_named(html)
        expected = sorted(host_name(i) for i in drifted)
        first, last = _window(latencies[:WINDOW]), _window(latencies[-WINDOW:])
        return {
            "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "hosts": hosts,
            "failed": failed,
            "cpus": os.cpu_count(),
            "upload_minutes": round(upload_seconds / 60, 1),
            "first": first,
            "last": last,
            "p95_ratio": last["p95"] / first["p95"],
            "page": {"median": statistics.median(renders), "max": max(renders), "bytes": len(html)},
            "drift_named": named,
            "drift_expected": expected,
            "drift_correct": named == expected,
            "load_average_5min": round(os.getloadavg()[1], 1),
        }
    finally:
        stack.close()
        shutil.rmtree(workdir, ignore_errors=True)


# PostgreSQL's default autovacuum thresholds: a table is vacuumed once its
# dead rows exceed 50 + 20 % of its rows, analysed once the rows changed since
# its last analysis exceed 50 + 10 %.
AUTOVACUUM_THRESHOLD, AUTOVACUUM_SCALE = 50, 0.2
AUTOANALYZE_THRESHOLD, AUTOANALYZE_SCALE = 50, 0.1


def autovacuum_like() -> list[str]:
    """What autovacuum with its default settings would have done by now, done
    between two uploads (outside the timed window). This machine's PostgreSQL
    runs with ``autovacuum = off``; a production server has it on, and without
    it a growing table is read through its dead row versions and planned
    without statistics, which the upload times would show as a cost of the
    cluster's size. Returns the statements run."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT relname, n_live_tup, n_dead_tup, n_mod_since_analyze FROM pg_stat_user_tables")
        rows = cursor.fetchall()
        done = []
        for table, live, dead, changed in rows:
            if dead > AUTOVACUUM_THRESHOLD + AUTOVACUUM_SCALE * live:
                done.append(f'VACUUM (ANALYZE) "{table}"')
            elif changed > AUTOANALYZE_THRESHOLD + AUTOANALYZE_SCALE * live:
                done.append(f'ANALYZE "{table}"')
        for statement in done:
            cursor.execute(statement)
    return done


def _fresh_database(database: str) -> str:
    """Create database ``database`` anew, point Django at it and set Django up;
    returns its URL."""
    base_url = os.environ.get("BENCH_POSTGRES", "postgres://postgres@127.0.0.1:5432")
    database_url = f"{base_url}/{database}"
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import psycopg

    with psycopg.connect(f"{base_url}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{database}"')
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return database_url


def _store_members(user, hosts: int) -> None:
    """``hosts`` analysed members of the cluster stored as their analysis
    stores them (fleet profiles of the parsed template host, three drifted)."""
    import dataclasses

    from django.db import connection

    from collectors.archive import load_host_bytes
    from collectors.derived.fleet import fleet_profile, profile_to_json
    from engine.run import ENGINE_VERSION
    from triage.models import Snapshot

    drifted = drifted_indexes(hosts)
    usual, odd = (
        fleet_profile(load_host_bytes(host_transcript(1, drifted=d).encode(), name="h.txt"))
        for d in (False, True)
    )
    rows = []
    for i in range(1, hosts + 1):
        profile = dataclasses.replace(
            odd if i in drifted else usual, label=host_name(i), hostname=host_name(i)
        )
        rows.append(
            Snapshot(
                owner=user,
                label=host_name(i),
                cluster=CLUSTER,
                sha256=f"{i:064x}",
                size=1,
                file=f"snapshots/bench/{host_name(i)}.txt",
                status=Snapshot.Status.DONE,
                engine_version=ENGINE_VERSION,
                facts={"hostname": host_name(i)},
                fleet_facts=profile_to_json(profile),
            )
        )
    Snapshot.objects.bulk_create(rows, batch_size=500)
    # The statistics a live database has (autovacuum analyses a table that
    # grew): right after the bulk insert the planner would take the 2,000
    # members for a handful of rows and plan their queries accordingly.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def page_only(hosts: int, database: str) -> dict:
    """The cluster page for ``hosts`` members stored as their analysis stores
    them (``_store_members``), without uploading them one by one: the page's
    figure for a cluster larger than the upload run had time for. Only
    gunicorn is started."""
    database_url = _fresh_database(database)
    from django.conf import settings
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user("bench", password="bench-password-123")
    _store_members(user, hosts)
    drifted = drifted_indexes(hosts)
    workdir = Path(tempfile.mkdtemp(prefix="casebook-bench-cluster-"))
    stack = Stack(database_url=database_url, workdir=workdir, secret_key=settings.SECRET_KEY, conn_max_age=60)
    try:
        client = WebClient(stack.start_web(), session_key_for(user))
        renders, html = _page(client, stack)
        named = _drift_hosts_named(html)
        return {
            "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "hosts": hosts,
            "page": {"median": statistics.median(renders), "max": max(renders), "bytes": len(html)},
            "drift_named": named,
            "drift_correct": named == sorted(host_name(i) for i in drifted),
            "load_average_5min": round(os.getloadavg()[1], 1),
        }
    finally:
        stack.close()
        shutil.rmtree(workdir, ignore_errors=True)


def analysis_only(hosts: int, database: str, runs: int = 6) -> dict:
    """One member's analysis, in this process, with ``hosts`` members stored
    (``_store_members``): ``runs`` new members analysed one after the other
    (the first one also writes the cluster's fleet finding on every member, as
    the upload run does once when the drift appears), each timed whole and by
    step. No server is started; the uploads go to a temporary directory."""
    os.environ.setdefault("CASEBOOK_DATA_DIR", tempfile.mkdtemp(prefix="casebook-bench-cluster-"))
    _fresh_database(database)
    from django.contrib.auth import get_user_model
    from django.db import connection

    from triage import analysis, uploads

    user = get_user_model().objects.create_user("bench", password="bench-password-123")
    _store_members(user, hosts)
    uploads.enqueue_analysis = lambda **_kw: True  # analysed below, timed
    timings = []
    for index in range(hosts + 1, hosts + runs + 1):
        snap = uploads.create_snapshot(
            owner=user,
            data=host_transcript(index).encode(),
            filename=f"{host_name(index)}.txt",
            label=host_name(index),
            cluster=CLUSTER,
        )
        t0 = time.perf_counter()
        done = analysis.analyze_snapshot_now(snapshot_id=snap.pk, force=True, renew_lease=False)
        total = time.perf_counter() - t0
        assert done is not None and done.status == "done", done and done.last_error
        timings.append(
            {
                "total_ms": round(total * 1000),
                "parse_ms": round(done.parse_seconds * 1000),
                "rules_ms": round(done.rules_seconds * 1000),
            }
        )
        print(f"member {index}: {timings[-1]}", file=sys.stderr, flush=True)
        if index == hosts + 1:
            # the first one wrote the drift finding on every member: the
            # statistics autovacuum would gather for the grown table
            with connection.cursor() as cursor:
                cursor.execute("ANALYZE")
    steady = [t["total_ms"] for t in timings[1:]] or [timings[0]["total_ms"]]
    return {
        "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "hosts": hosts,
        "runs": timings,
        "median_ms_after_first": statistics.median(steady),
        "load_average_5min": round(os.getloadavg()[1], 1),
    }


def _page(client: WebClient, stack: Stack) -> tuple[list[float], str]:
    """Five requests of the cluster page (the first one warms the process up
    and is not counted); their durations and the last page."""
    page_url = f"{stack.base_url}/snapshots/clusters/{quote(CLUSTER, safe='')}/"
    renders, html = [], ""
    for attempt in range(6):
        t0 = time.perf_counter()
        response = client.http.get(page_url, timeout=120)
        if attempt:
            renders.append(time.perf_counter() - t0)
        response.raise_for_status()
        html = response.text
    return renders, html


def _upload(client: WebClient, data: bytes, name: str, index: int):
    """One upload; once more on a connection the server closed while we waited
    (gunicorn drops idle keep-alive connections after 2 s). The same bytes
    again are the same snapshot: the retry cannot add a host."""
    import requests

    try:
        return client.upload(data, name, label=host_name(index), cluster=CLUSTER)
    except requests.ConnectionError:
        return client.upload(data, name, label=host_name(index), cluster=CLUSTER)


def _drift_hosts_named(html: str) -> list[str]:
    """The hosts the page's fleet.numa_config_drift finding names as different."""
    article = re.search(r'<article[^>]*data-rule="fleet\.numa_config_drift".*?</article>', html, re.S)
    if not article:
        return []
    text = re.sub(r"<[^>]+>", " ", article.group(0))
    different = re.search(r"different:\s*(.*?)\)\.", text, re.S)
    return sorted(set(re.findall(r"gp-seg\d{4}", different.group(1)))) if different else []


def markdown(summary: dict) -> str:
    def ms(v):
        return f"{v * 1000:.0f} ms"

    first, last = summary["first"], summary["last"]
    lines = [
        "## Cluster",
        "",
        f"A {summary['hosts']}-host cluster uploaded host by host through the real stack (gunicorn, Redis,",
        "one Celery worker, PostgreSQL): seed 001's healthy Kunpeng host under a new hostname each time,",
        "three hosts with `vm.zone_reclaim_mode = 1`. Each analysis parses its own upload only and",
        "compares its host with every other member through the members' stored fleet profiles.",
        "Between two uploads (outside the timed window) the benchmark vacuums and analyses the tables",
        "that autovacuum with its default thresholds would have by then: this machine's PostgreSQL",
        "runs with `autovacuum = off`, a production server with it on (`autovacuum_like`).",
        f"Machine: {summary['cpus']} CPUs shared with other agents' jobs while measured "
        f"({summary['measured_at']}, 5-minute load average {summary['load_average_5min']} at the end); "
        f"the uploads took {summary['upload_minutes']} minutes, {summary['failed']} failed.",
        "",
        "Command: "
        f"`.venv/bin/python bench/cluster.py --hosts {summary['hosts']} --write docs/performance.md`",
        "",
        "| hosts | upload -> done p50 | p95 | max |",
        "| --- | ---: | ---: | ---: |",
        f"| first {first['n']} | {ms(first['p50'])} | {ms(first['p95'])} | {ms(first['max'])} |",
        f"| last {last['n']} | {ms(last['p50'])} | {ms(last['p95'])} | {ms(last['max'])} |",
        "",
        f"p95 of the last 100 / p95 of the first 100: **{summary['p95_ratio']:.2f}x** (target <= 1.5x).",
        f"The cluster page for all {summary['hosts']} hosts (first page of the paginated matrix, fleet",
        f"findings and charts computed over every host): median **{ms(summary['page']['median'])}** over 5",
        f"requests, max {ms(summary['page']['max'])} (target <= 1 s).",
        f"The drift finding names {', '.join(summary['drift_named']) or 'no host'}"
        f" ({'exactly the three drifted hosts' if summary['drift_correct'] else 'NOT the drifted hosts'}).",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=2000)
    parser.add_argument("--database", default="casebook_bench_cluster")
    parser.add_argument("--write", type=Path, help="update the Cluster section of this markdown file")
    parser.add_argument(
        "--page-only", type=int, metavar="HOSTS", help="only time the cluster page of HOSTS stored members"
    )
    parser.add_argument(
        "--analysis-only",
        type=int,
        metavar="HOSTS",
        help="only time new members' analyses (in process) with HOSTS stored members",
    )
    args = parser.parse_args()
    # A SIGTERM runs the ``finally`` that stops the stack's processes.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    if args.page_only:
        print(json.dumps(page_only(args.page_only, args.database), indent=2))
        return 0
    if args.analysis_only:
        print(json.dumps(analysis_only(args.analysis_only, args.database), indent=2))
        return 0
    summary = run_bench(args.hosts, args.database)
    print(json.dumps(summary, indent=2))
    section = markdown(summary)
    print(section)
    if args.write:
        write_section(args.write, section, heading="Cluster")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
