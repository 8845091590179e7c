"""The rule pages over a large fleet: ``/rules/`` (every rule with its count of
affected hosts) and ``/rules/<id>/`` (every host whose newest snapshot has the
finding, weekly counts, acknowledgements).

Usage::

    .venv/bin/python bench/rules.py [--hosts 5000] [--history 3] [--rounds 10] [--write docs/performance.md]

It works in a fresh temporary data directory (SQLite; ``--database-url`` for
PostgreSQL), migrates, analyses one founding-incident transcript
(``tests/fixtures/seeds/kunpeng-stream-zone-reclaim/before/gp-sdw01.txt``)
with the real loader and engine, and stores ``--history`` analysed snapshots
of each of ``--hosts`` hosts (one team), each with that analysis's findings;
the newest snapshot of every third host no longer has the measured rule (it
was fixed), and one host in ten has an acknowledgement. Measured with the
Django test client (full middleware stack, one signed-in engineer): one
warm-up, then ``--rounds`` timed requests per page (median and p95), and the
number of SQL queries of one request, which must not grow with the fleet.
``--write`` replaces the "## Rule pages" section of the given file.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
from datetime import timedelta
from pathlib import Path

from pages import measure, setup, write_section  # bench/pages.py: data directory, timings, docs

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "fixtures" / "seeds" / "kunpeng-stream-zone-reclaim" / "before" / "gp-sdw01.txt"
RULE = "numa.high_remote_distance"


def populate(hosts: int, history: int):
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from accounts.models import Membership, Team
    from triage import analysis, uploads
    from triage.models import Acknowledgement, Finding, Snapshot

    team = Team.objects.create(name="Fleet", slug="fleet")
    user = get_user_model().objects.create_user("bench", password="bench-password-123")
    Membership.objects.create(user=user, team=team)
    first = uploads.create_snapshot(owner=user, data=SOURCE.read_bytes(), filename=SOURCE.name)
    analysis.analyze_snapshot_now(snapshot_id=first.pk, force=True)
    first.refresh_from_db()
    template = list(first.current_findings())
    extra = Finding(rule="numa.balancing_disabled", severity="warning", title="x", measures=[], evidence=[])
    now = timezone.now()
    rows = []
    for h in range(hosts):
        for k in range(history):
            rows.append(
                Snapshot(
                    owner=user,
                    team=team,
                    label=f"node-{h:05d}",
                    cluster=f"rack-{h // 20}",
                    original_filename=SOURCE.name,
                    sha256=hashlib.sha256(f"{h}-{k}".encode()).hexdigest(),
                    size=first.size,
                    file=first.file.name,
                    status=Snapshot.Status.DONE,
                    engine_version=first.engine_version,
                    host_key=f"node-{h:05d}",
                    facts={"hostname": f"node-{h:05d}"},
                )
            )
    Snapshot.objects.bulk_create(rows, batch_size=500)
    snaps = list(Snapshot.objects.filter(team=team).order_by("pk").values_list("pk", "host_key"))
    # spread the history over the last weeks: snapshot k of a host is k weeks old
    for k in range(history):
        ids = [pk for i, (pk, _key) in enumerate(snaps) if i % history == k]
        Snapshot.objects.filter(pk__in=ids).update(created_at=now - timedelta(weeks=history - 1 - k))
    findings = []
    for i, (pk, _key) in enumerate(snaps):
        h, k = divmod(i, history)
        fixed = k == history - 1 and h % 3 == 0
        for f in [*template, extra]:
            if fixed and f.rule == RULE:
                continue
            findings.append(
                Finding(
                    snapshot_id=pk,
                    rule=f.rule,
                    severity=f.severity,
                    host=f"node-{h:05d}",
                    title=f.title,
                    evidence=f.evidence,
                    measures=f.measures,
                    engine_version=first.engine_version,
                )
            )
    Finding.objects.bulk_create(findings, batch_size=1000)
    Acknowledgement.objects.bulk_create(
        [
            Acknowledgement(rule=RULE, team=team, host=f"node-{h:05d}", reason="bench", created_by=user)
            for h in range(0, hosts, 10)
        ]
    )
    # the hosts that did not fix it, and the analysed source snapshot itself
    affected = sum(1 for h in range(hosts) if h % 3 != 0) + 1
    return user, len(rows), len(findings), affected


def count_queries(client, url: str) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as ctx:
        client.get(url)
    return len(ctx)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=5000)
    parser.add_argument("--history", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--database-url")
    parser.add_argument(
        "--write", type=Path, help="replace the '## Rule pages' section of this Markdown file"
    )
    args = parser.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory(prefix="casebook-bench-rules-") as data_dir:
        setup(data_dir, args.database_url)
        from django.test import Client

        user, n_snaps, n_findings, affected = populate(args.hosts, args.history)
        client = Client()
        client.force_login(user)
        shown = client.get(f"/api/v1/rules/{RULE}/").json()["hosts_affected"]
        assert shown == affected, (shown, affected)
        pages = {
            "rule list `/rules/`": "/rules/",
            f"rule page `/rules/{RULE}/`": f"/rules/{RULE}/",
            f"API `/api/v1/rules/{RULE}/`": f"/api/v1/rules/{RULE}/",
        }
        results = {name: measure(client, url, args.rounds) for name, url in pages.items()}
        queries = {name: count_queries(client, url) for name, url in pages.items()}
    engine = "PostgreSQL" if args.database_url else "SQLite"
    lines = [
        "## Rule pages",
        "",
        f"{args.hosts} hosts x {args.history} analysed snapshots ({n_snaps} snapshots, "
        f"{n_findings} findings, one team, {engine}); the rule's newest-snapshot hosts: {affected} "
        "(every third host fixed it in its newest snapshot), the page lists the first 200. "
        f"{args.rounds} timed requests per page after one "
        f"warm-up, Django test client. Load average during the run: {os.getloadavg()[0]:.1f} on "
        f"{os.cpu_count()} CPUs shared with other agents' work (timings scale with it).",
        "",
        "| page | median | p95 | peak Python allocation | SQL queries |",
        "|---|---|---|---|---|",
    ]
    for name, r in results.items():
        lines.append(
            f"| {name} | {r['median_ms']:.0f} ms | {r['p95_ms']:.0f} ms | {r['peak_mib']:.1f} MiB "
            f"| {queries[name]} |"
        )
    lines += [
        "",
        f"Command: `.venv/bin/python bench/rules.py --hosts {args.hosts} --history {args.history} "
        f"--rounds {args.rounds}" + (" --database-url postgres://..." if args.database_url else "") + "`. "
        "The query count does not depend on the fleet's size "
        "(`tests/triage/test_rule_pages.py::test_rule_page_queries_do_not_grow_with_the_fleet`): "
        "the newest snapshot of each host is a NOT EXISTS over the `snapshot_host_newest` index "
        "(host key, team, created).",
        "",
    ]
    section = "\n".join(lines)
    print(section)
    if args.write:
        write_section(args.write, "Rule pages", section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
