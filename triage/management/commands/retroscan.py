"""``manage.py retroscan (--case SLUG | --rule ID | --changed-rules) [--now]``:
match a case or a rule against the newest stored snapshot of every host
(from the stored facts), as publishing a case or deploying a rule does by
itself; ``--changed-rules`` is the check a worker makes when it starts. The
workers do the scan unless ``--now`` runs it here to its end."""

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from engine.rules import load_all as load_rules
from kb.models import Case, RetroScan
from triage import retroscan


class Command(BaseCommand):
    help = "Match a case or a rule against every stored host again, from the stored facts."

    def add_arguments(self, parser):
        what = parser.add_mutually_exclusive_group(required=True)
        what.add_argument("--case", help="a published case group's slug")
        what.add_argument("--rule", help="a rule ID")
        what.add_argument(
            "--changed-rules",
            action="store_true",
            help="the rules added or changed since the workers last started (the first run records them)",
        )
        parser.add_argument("--now", action="store_true", help="run the scans here instead of in the workers")

    def handle(self, *args, case=None, rule=None, changed_rules=False, now=False, **options):
        with transaction.atomic():
            scans = self._start(case, rule, changed_rules)
        for scan in scans:
            if now:
                retroscan.scan_now(scan_id=scan.pk)
                scan.refresh_from_db()
            self.stdout.write(" ".join(f"{k}={v}" for k, v in retroscan.describe(scan).items()))
        if not scans:
            self.stdout.write("nothing to scan")

    def _start(self, case, rule, changed_rules) -> list[RetroScan]:
        if changed_rules:
            return retroscan.check_rule_catalogue()
        if rule is not None:
            if rule not in load_rules():
                raise CommandError(f"no rule {rule!r}")
            return [
                retroscan.start_scan(kind=RetroScan.Kind.RULE, target=rule, reason=RetroScan.Reason.REQUESTED)
            ]
        if not Case.objects.filter(slug=case, state=Case.State.PUBLISHED).exists():
            raise CommandError(f"no published case {case!r}")
        return [
            retroscan.start_scan(kind=RetroScan.Kind.CASE, target=case, reason=RetroScan.Reason.REQUESTED)
        ]
