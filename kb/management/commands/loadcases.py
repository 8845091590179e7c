"""Load or update the founding cases and the measures catalogue (idempotent)."""

import argparse
import time

from django.core.management.base import BaseCommand

from kb import services


class Command(BaseCommand):
    help = (
        "Load kb/data/measures.yaml, the founding cases of kb/data/cases/*.yaml and the published "
        "library of kb/data/library/*.yaml. Signatures are computed by the engine from "
        "tests/fixtures/seeds/<slug>/before/ or tests/fixtures/cases/<slug>/before/ when the engine "
        "version or the fixtures changed; without fixtures the stored signatures are kept."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--force", action="store_true", help="rewrite every case and recompute signatures"
        )
        parser.add_argument("--reindex", action="store_true", help="rebuild the search index of every case")
        parser.add_argument(
            "--library",
            action=argparse.BooleanOptionalAction,
            default=None,
            help="also load the published library of kb/data/library (default: CASEBOOK_KB_LIBRARY, on)",
        )

    def handle(self, *args, force=False, reindex=False, library=None, **options):
        started = time.monotonic()
        report = services.load_all(force=force, library=library)
        if reindex:
            services.reindex_all()
        m = report.measures
        self.stdout.write(
            f"measures: {m['total']} ({m['created']} created, {m['updated']} updated); "
            f"cases: {len(report.created)} created, {len(report.updated)} updated, "
            f"{len(report.unchanged)} unchanged in {time.monotonic() - started:.1f}s"
        )
        for slug, state in sorted(report.signatures.items()):
            self.stdout.write(f"  signature {slug}: {state}")
