"""The snapshot list, the dashboard, a report and the wizard's snapshots step at 512 snapshots.

Usage::

    .venv/bin/python bench/pages.py [--snapshots 512] [--rounds 20] [--write docs/performance.md]

It works in a fresh temporary data directory (SQLite; ``--database-url`` for
PostgreSQL), migrates, analyses one founding-incident transcript
(``tests/fixtures/seeds/zstack-mariadb-v2v/before``) with the real loader and
engine, and stores ``--snapshots`` snapshots carrying its facts padded to
~200 KB of JSON each (the size that made these pages cost +55 / +104 MB when
they loaded every snapshot's facts). 24 of them are attached to a
troubleshooting session.

Measured, with the Django test client (full middleware stack, one signed-in
engineer): ``GET /snapshots/`` (one page of 50, newest first), ``GET /``
(the dashboard), ``GET /snapshots/<id>/`` (the analysed snapshot's report,
led by its best matching founding case: the founding cases are loaded first)
and ``GET /sessions/<id>/step/snapshots/``,
one warm-up, then ``--rounds`` timed requests each (median and p95), and the
peak Python allocation of one request (tracemalloc). Targets: < 300 ms and
< +20 MB. ``--write`` replaces the "## Pages" section of the given file.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SEED = ROOT / "tests" / "fixtures" / "seeds" / "zstack-mariadb-v2v" / "before"


def setup(data_dir: str, database_url: str | None) -> None:
    os.environ["CASEBOOK_DATA_DIR"] = data_dir
    os.environ.pop("REDIS_URL", None)
    if database_url:
        os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def populate(count: int):
    from django.contrib.auth import get_user_model

    from kb.services import load_all
    from triage import analysis, uploads
    from triage.models import Snapshot
    from troubleshoot import lifecycle, snapshots

    load_all()  # the founding cases: the report's header names the best matching one
    user = get_user_model().objects.create_user("bench", password="bench-password-123")
    source = sorted(SEED.iterdir())[0]
    first = uploads.create_snapshot(owner=user, data=source.read_bytes(), filename=source.name)
    analysis.analyze_snapshot_now(snapshot_id=first.pk, force=True)
    first.refresh_from_db()
    facts = {**first.facts, "padding": [first.facts] * 8}
    rows = [
        Snapshot(
            owner=user,
            label=f"host-{i:03d}",
            cluster=f"rack-{i % 16}",
            original_filename=source.name,
            sha256=hashlib.sha256(str(i).encode()).hexdigest(),
            size=first.size,
            file=first.file.name,
            status=Snapshot.Status.DONE,
            engine_version=first.engine_version,
            facts=facts,
            similar_cases=first.similar_cases,
        )
        for i in range(1, count)
    ]
    Snapshot.objects.bulk_create(rows, batch_size=64)
    session = lifecycle.create_session(owner=user, title="bench")
    for snap in Snapshot.objects.order_by("pk")[:24]:
        snapshots.attach_snapshot(session=session, user=user, snapshot=snap)
    import json

    return user, session, len(json.dumps(facts)), first


def measure(client, url: str, rounds: int) -> dict:
    client.get(url)
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        response = client.get(url)
        samples.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    tracemalloc.start()
    client.get(url)
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    ordered = sorted(samples)
    return {
        "median_ms": statistics.median(samples),
        "p95_ms": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))],
        "peak_mib": peak / 2**20,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--database-url")
    parser.add_argument("--write", type=Path, help="replace the '## Pages' section of this Markdown file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="casebook-bench-pages-") as data_dir:
        setup(data_dir, args.database_url)
        from django.test import Client

        user, session, facts_bytes, first = populate(args.snapshots)
        client = Client()
        client.force_login(user)
        pages = {
            "snapshot list `/snapshots/`": "/snapshots/",
            "dashboard `/`": "/",
            "report with its header `/snapshots/<id>/`": f"/snapshots/{first.pk}/",
            "wizard snapshots step": f"/sessions/{session.pk}/step/snapshots/",
        }
        results = {name: measure(client, url, args.rounds) for name, url in pages.items()}
    lines = [
        "## Pages",
        "",
        f"{args.snapshots} snapshots, each with {facts_bytes / 1024:.0f} KiB of facts JSON "
        f"(real facts of a founding incident, padded); {args.rounds} timed requests per page "
        "after one warm-up, Django test client, SQLite"
        + (" (PostgreSQL)" if args.database_url else "")
        + f". Load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs "
        "(timings scale with it). Targets: < 300 ms and < +20 MB.",
        "",
        "| page | median | p95 | peak Python allocation |",
        "|---|---|---|---|",
    ]
    for name, r in results.items():
        lines.append(f"| {name} | {r['median_ms']:.0f} ms | {r['p95_ms']:.0f} ms | {r['peak_mib']:.1f} MiB |")
    lines += [
        "",
        f"Command: `.venv/bin/python bench/pages.py --snapshots {args.snapshots} --rounds {args.rounds}"
        " --write docs/performance.md`. The test `tests/triage/test_list_pages_bounded.py` checks that "
        "these pages select no facts column and stay under +20 MB.",
        "",
    ]
    section = "\n".join(lines)
    print(section)
    if args.write:
        write_section(args.write, "Pages", section)
    return 0


def write_section(path: Path, heading: str, section: str) -> None:
    """Replace the ``## heading`` section of the Markdown file (or append it)."""
    text = path.read_text()
    pattern = re.compile(rf"^## {re.escape(heading)}\n.*?(?=^## |\Z)", re.MULTILINE | re.DOTALL)
    text = (
        pattern.sub(lambda _m: section + "\n", text)
        if pattern.search(text)
        else (text.rstrip("\n") + "\n\n" + section)
    )
    path.write_text(text)


if __name__ == "__main__":
    sys.exit(main())
