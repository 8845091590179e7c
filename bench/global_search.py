"""The one search box (``GET /api/v1/search/?q=``) at 100,000 snapshots and
100,000 cases on PostgreSQL.

Usage (PostgreSQL on 127.0.0.1:5432)::

    .venv/bin/python bench/global_search.py [--snapshots 100000] [--cases 100000] [--rounds 5]
                                            [--reuse] [--write docs/performance.md]

It (re)creates its own database ``casebook_bench_global`` (``--database-url``
to point elsewhere), migrates, loads the founding cases and ``--cases``
generated cases with ``bench/search.py``'s loader, then ``--snapshots``
snapshots of 5,000 hosts in 20 teams (one in ten with a ticket key), and 5,000
troubleshooting sessions. Measured with the Django test client (full DRF stack,
token auth) for 40 mixed queries (host names whole and in part, ticket keys,
snapshot ids, rule ids, a sha256 prefix, ticket text in English and Chinese),
as an engineer of one team and as support staff (who see every team); one
warm-up round, then ``--rounds`` rounds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import search as case_bench  # noqa: E402  bench/search.py: the case loader and percentiles

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/casebook_bench_global"
TEAMS = 20
HOSTS = 5_000
SESSIONS = 5_000
BATCH = 5_000


def host_name(i: int) -> str:
    kinds = ("db", "kvm", "obs", "pg", "redis", "web")
    return f"{kinds[i % len(kinds)]}-{i:05d}.dc{i % 7}.example.net"


def load_desk(n_snapshots: int, seed: int) -> dict:
    """Teams, one engineer each, a support user, snapshots, tickets and sessions."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from accounts.models import Membership, Team
    from triage.models import Snapshot, TicketRef
    from troubleshoot.models import Session

    rng = random.Random(seed)
    t = time.monotonic()
    user_model = get_user_model()
    teams = [Team.objects.create(name=f"Team {i:02d}", slug=f"team-{i:02d}") for i in range(TEAMS)]
    engineers = []
    for i, team in enumerate(teams):
        user = user_model.objects.create_user(f"bench-eng-{i:02d}")
        Membership.objects.create(user=user, team=team, role="engineer")
        engineers.append(user)
    support = user_model.objects.create_user("bench-support")
    Membership.objects.create(user=support, team=teams[0], role="support")
    now = timezone.now()
    made = 0
    while made < n_snapshots:
        rows = []
        for i in range(made, min(made + BATCH, n_snapshots)):
            host = i % HOSTS
            rows.append(
                Snapshot(
                    owner=engineers[host % TEAMS],
                    team=teams[host % TEAMS],
                    label=host_name(host).split(".")[0],
                    host_key=host_name(host),
                    cluster=f"cluster-{host % 400:03d}",
                    original_filename=f"snapshot-{i}.txt",
                    sha256=hashlib.sha256(f"{seed}-{i}".encode()).hexdigest(),
                    size=rng.randint(2_000, 400_000),
                    file=f"snapshots/bench-{i}.txt",
                    status=Snapshot.Status.DONE,
                    engine_version="bench",
                )
            )
        Snapshot.objects.bulk_create(rows, batch_size=BATCH)
        made += len(rows)
    Snapshot.objects.update(created_at=now)
    ids = list(Snapshot.objects.order_by("id").values_list("id", "owner_id"))
    tickets = [
        TicketRef(key=f"{'ZSTACK' if k % 2 else 'OPS'}-{40000 + k}", snapshot_id=sid, added_by_id=owner)
        for k, (sid, owner) in enumerate(ids[::10])
    ]
    TicketRef.objects.bulk_create(tickets, batch_size=BATCH)
    sessions = [
        Session(owner=engineers[k % TEAMS], team=teams[k % TEAMS], title=f"Slow database on {host_name(k)}")
        for k in range(SESSIONS)
    ]
    Session.objects.bulk_create(sessions, batch_size=BATCH)
    return {
        "snapshots": n_snapshots,
        "tickets": len(tickets),
        "sessions": SESSIONS,
        "load_s": time.monotonic() - t,
    }


def queries() -> list[str]:
    return [
        # host names, whole and in part
        host_name(17),
        host_name(4242),
        "db-00017",
        "kvm-0",
        "redis-04",
        "dc3.example",
        "obs-01234",
        # ticket keys, whole and in part
        "ZSTACK-40001",
        "OPS-40000",
        "zstack-4500",
        "OPS-4",
        "ZSTACK-48375",
        # snapshot ids
        "#1",
        "#50000",
        "99999",
        "#123456",
        # rule ids
        "numa.balancing_disabled",
        "kvm.vcpus_unpinned",
        "zone_reclaim",
        "mysql.",
        # a sha256 prefix
        hashlib.sha256(b"20260722-77").hexdigest()[:12],
        # ticket text, English and Chinese, and a typo
        "mysql slow after migrating to kvm",
        "STREAM bandwidth dropped",
        "buffer pool startup slow",
        "huge pages",
        "netem delay",
        "remote memory access",
        "vcpu pinning",
        "zone reclaim",
        "大页",
        "绑核",
        "内存",
        "软中断",
        "启动慢",
        "远端内存",
        "numa balancng",
        "innodb_numa_interleave",
        "Slow database on db-00017",
        "cluster-042",
        "secret",
    ]


def measure(rounds: int) -> dict:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from accounts.services import rotate_api_token

    users = {
        "engineer": get_user_model().objects.get(username="bench-eng-03"),
        "support": get_user_model().objects.get(username="bench-support"),
    }
    out = {}
    for role, user in users.items():
        client = Client(HTTP_AUTHORIZATION=f"Token {rotate_api_token(user=user).key}")
        per_query: dict[str, list[float]] = {q: [] for q in queries()}
        hits: dict[str, int] = {}
        for round_number in range(rounds + 1):
            for q in queries():
                t = time.perf_counter()
                response = client.get("/api/v1/search/", {"q": q})
                elapsed = (time.perf_counter() - t) * 1000
                assert response.status_code == 200, (q, response.status_code, response.content[:300])
                if round_number:
                    per_query[q].append(elapsed)
                else:
                    hits[q] = sum(len(g["items"]) for g in response.json()["groups"])
        samples = [s for v in per_query.values() for s in v]
        slowest = sorted(((statistics.median(v), q) for q, v in per_query.items()), reverse=True)[:5]
        out[role] = {
            "samples": len(samples),
            "p50_ms": case_bench.percentile(samples, 50),
            "p95_ms": case_bench.percentile(samples, 95),
            "max_ms": max(samples),
            "slowest": [(q, round(ms, 1), hits[q]) for ms, q in slowest],
            "with_hits": sum(1 for n in hits.values() if n),
        }
    return out


def render(result: dict, command: str) -> str:
    lines = [
        "## Global search at 100,000 snapshots and 100,000 cases",
        "",
        f"Command: `{command}` ({result['when']}, {result['pg']}, load average "
        f"{result['load_before']:.1f} before / {result['load_after']:.1f} after).",
        "",
        f"Data: {result['cases']:,} cases, {result['desk']['snapshots']:,} snapshots of {HOSTS:,} hosts in "
        f"{TEAMS} teams, {result['desk']['tickets']:,} ticket keys, {result['desk']['sessions']:,} sessions. "
        f"Queries: {len(queries())} (host names whole and in part, ticket keys, snapshot ids, rule ids, "
        "a sha256 prefix, ticket text in English and Chinese), "
        f"{result['rounds']} rounds after a warm-up round, `GET /api/v1/search/?q=` with token auth.",
        "",
        "| reader | p50 | p95 | max | queries with hits | slowest (median ms, hits) |",
        "|---|---|---|---|---|---|",
    ]
    for role, r in result["measured"].items():
        slow = "; ".join(f"`{q}` {ms} ({n})" for q, ms, n in r["slowest"][:3])
        lines.append(
            f"| {role} | {r['p50_ms']:.1f} ms | **{r['p95_ms']:.1f} ms** | {r['max_ms']:.1f} ms | "
            f"{r['with_hits']}/{len(queries())} | {slow} |"
        )
    lines += ["", "Target (issue 28): p95 ≤ 50 ms.", ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--snapshots", type=int, default=100_000)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=20260722)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL))
    parser.add_argument("--reuse", action="store_true", help="measure an already loaded database again")
    parser.add_argument("--write", type=Path, help="replace the Global search section of this markdown file")
    args = parser.parse_args()

    os.environ["DATABASE_URL"] = args.database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("CASEBOOK_DATA_DIR", str(ROOT / "data"))
    if not args.reuse:
        case_bench.prepare_database(args.database_url)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    state = ROOT / "data" / f"bench-global-{urlsplit(args.database_url).path.lstrip('/')}.json"
    if args.reuse:
        desk = json.loads(state.read_text())
    else:
        call_command("loadcases", verbosity=0)
        case_bench.load_generated(args.cases, args.seed, args.workers)
        desk = load_desk(args.snapshots, args.seed)
        state.parent.mkdir(parents=True, exist_ok=True)
        state.write_text(json.dumps(desk))
    with connection.cursor() as cursor:
        for table in ("triage_snapshot", "triage_ticketref", "troubleshoot_session", "kb_case"):
            cursor.execute(f"VACUUM ANALYZE {table}")
        cursor.execute("SELECT count(*) FROM kb_case")
        cases = cursor.fetchone()[0]
        cursor.execute("SELECT version()")
        pg = cursor.fetchone()[0].split(" on ")[0]
    load_before = os.getloadavg()[0]
    measured = measure(args.rounds)
    result = {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "pg": pg,
        "cases": cases,
        "desk": desk,
        "rounds": args.rounds,
        "measured": measured,
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
    }
    command = (
        f".venv/bin/python bench/global_search.py --snapshots {args.snapshots} "
        f"--cases {args.cases} --rounds {args.rounds}"
    )
    if args.reuse:
        command += " --reuse"
    text = render(result, command)
    print(text)
    if args.write:
        case_bench.write_section(args.write, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
