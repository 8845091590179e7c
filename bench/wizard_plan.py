"""The wizard's plan step with the remediation planner's placement.

Usage::

    .venv/bin/python bench/wizard_plan.py [--rounds 10] [--write docs/performance.md]

It works in a fresh temporary data directory (SQLite), migrates, loads the
founding cases and opens a session with the rebuilt ZStack before-snapshots
(``tests/fixtures/seeds/zstack-mariadb-v2v/before``: the hypervisor with its
guest's domain XML, and the guest), analysed by the real loader and engine.

Measured with the Django test client (one signed-in engineer):
``GET /sessions/<id>/step/plan/`` with the placement cache cleared before
every request (cold: the host's stored upload is parsed again and
``domain_remedy`` runs, as on the remediation page) and with it warm, after
one warm-up, ``--rounds`` requests each (median and p95). ``--write``
replaces the "## Wizard plan step" section of the given file.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SEED = ROOT / "tests" / "fixtures" / "seeds" / "zstack-mariadb-v2v" / "before"


def setup(data_dir: str) -> None:
    os.environ["CASEBOOK_DATA_DIR"] = data_dir
    os.environ.pop("REDIS_URL", None)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("loadcases", verbosity=0)


def populate():
    from django.contrib.auth import get_user_model
    from django.core.files.uploadedfile import SimpleUploadedFile

    from triage import analysis, uploads
    from troubleshoot import lifecycle, snapshots

    uploads.enqueue_analysis = lambda *, snapshot_id: True
    user = get_user_model().objects.create_user("bench", password="bench-password-123")
    session = lifecycle.create_session(owner=user, title="bench", metric_baseline=120.0)
    for path in sorted(SEED.iterdir()):
        upload = SimpleUploadedFile(path.name, path.read_bytes())
        snap = snapshots.upload_snapshot(session=session, user=user, uploaded_file=upload, phase="before")
        analysis.analyze_snapshot_now(snapshot_id=snap.pk, force=True)
    lifecycle.update_session(session=session, user=user, changes={"guest_reboot_allowed": True})
    return user, session


def measure(client, url: str, rounds: int, *, cold: bool) -> dict:
    from django.core.cache import cache

    client.get(url)
    samples = []
    for _ in range(rounds):
        if cold:
            cache.clear()
        start = time.perf_counter()
        response = client.get(url)
        samples.append((time.perf_counter() - start) * 1000)
        assert response.status_code == 200 and b'id="placement"' in response.content
    ordered = sorted(samples)
    return {
        "median_ms": statistics.median(samples),
        "p95_ms": ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--write", type=Path, help="replace the '## Wizard plan step' section of this file")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="casebook-bench-plan-") as data_dir:
        setup(data_dir)
        from django.test import Client

        user, session = populate()
        client = Client()
        client.force_login(user)
        url = f"/sessions/{session.pk}/step/plan/"
        results = {
            "cold (placement not cached)": measure(client, url, args.rounds, cold=True),
            "warm (placement cached)": measure(client, url, args.rounds, cold=False),
        }
    lines = [
        "## Wizard plan step",
        "",
        "`GET /sessions/<id>/step/plan/` of a session with the rebuilt ZStack before-snapshots "
        "(hypervisor and guest), Django test client, SQLite, locmem cache; "
        f"{args.rounds} requests each after one warm-up. Cold: the placement cache is cleared before "
        "each request, so the host's upload is parsed again and the remediation planner runs. "
        f"Load average {load_before:.1f} before and {os.getloadavg()[0]:.1f} after on {os.cpu_count()} "
        "CPUs (other agents shared the machine; timings scale with it).",
        "",
        "| plan step | median | p95 |",
        "|---|---|---|",
    ]
    for name, r in results.items():
        lines.append(f"| {name} | {r['median_ms']:.0f} ms | {r['p95_ms']:.0f} ms |")
    lines += [
        "",
        "Command: `.venv/bin/python bench/wizard_plan.py "
        f"--rounds {args.rounds} --write docs/performance.md`.",
        "",
    ]
    section = "\n".join(lines)
    print(section)
    if args.write:
        from bench.pages import write_section

        write_section(args.write, "Wizard plan step", section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
