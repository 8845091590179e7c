"""``manage.py reanalyze [--all] [--enqueue] [--id N ...]``: re-run the analysis
of snapshots analysed by an older engine version (``--all``: every finished
snapshot)."""

from django.core.management.base import BaseCommand

from engine.run import ENGINE_VERSION
from triage import analysis
from triage.models import Snapshot


class Command(BaseCommand):
    help = "Re-analyse snapshots analysed by an older engine version (or all with --all)."

    def add_arguments(self, parser):
        parser.add_argument("--all", action="store_true", help="re-analyse every finished snapshot")
        parser.add_argument(
            "--id", type=int, action="append", dest="ids", help="only this snapshot (repeatable)"
        )
        parser.add_argument(
            "--enqueue",
            action="store_true",
            help="hand the work to the Celery workers instead of running here",
        )

    def handle(self, *args, all=False, ids=None, enqueue=False, **options):
        if ids:
            targets = list(Snapshot.objects.filter(pk__in=ids).order_by("pk"))
        else:
            targets = list(analysis.outdated_snapshots(include_current=all))
        count = analysis.reanalyze(snapshots=targets, enqueue=enqueue)
        verb = "enqueued" if enqueue else "re-analysed"
        self.stdout.write(f"{verb} {count} snapshot(s) with engine {ENGINE_VERSION}")
        if not enqueue and targets:
            failed = Snapshot.objects.filter(pk__in=[s.pk for s in targets], status=Snapshot.Status.FAILED)
            for snap in failed:
                self.stderr.write(f"snapshot {snap.pk} failed: {snap.last_error}")
