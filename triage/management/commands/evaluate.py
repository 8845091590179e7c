"""``manage.py evaluate DIR [--json] [--min-recall R] [--max-false-alarms N] [--min-top1 R]``.

Analyses every snapshot directory of an evaluation set like ``manage.py
analyze`` (similar cases from the configured database, prepared the same way;
the published library too when an expectation names a ``library_case`` that is
not loaded) and scores it against its ``expected.json`` (see :mod:`triage.evaluation`).
Exits non-zero when a requested threshold is not met.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from kb.models import Case
from kb.similarity import similar_cases_for
from triage.evaluation import (
    EXPECTED,
    EvaluationError,
    evaluate_set,
    load_expectation,
    render_text,
    snapshot_dirs,
    thresholds_failed,
)
from triage.management.commands.analyze import ensure_database


class Command(BaseCommand):
    help = "Score the engine on an evaluation set (recall, false alarms, top-1 case, lines read)."

    def add_arguments(self, parser):
        parser.add_argument(
            "directory", help="evaluation set (e.g. tests/evaluation/) or one snapshot directory"
        )
        parser.add_argument("--json", action="store_true", help="print the totals and outcomes as JSON")
        parser.add_argument("--no-similar", action="store_true", help="do not look up similar cases")
        parser.add_argument("--min-recall", type=float, default=None, help="fail below this must-fire recall")
        parser.add_argument(
            "--max-false-alarms", type=int, default=None, help="fail above this many false alarms"
        )
        parser.add_argument(
            "--min-top1", type=float, default=None, help="fail below this top-1 case accuracy"
        )

    def handle(self, *args, directory, json=False, no_similar=False, **options):
        if not Path(directory).exists():
            raise CommandError(f"no such directory: {directory}")
        similar = None
        if not no_similar:
            warning = ensure_database()
            if warning:
                sys.stderr.write(warning + "\n")
            else:
                _load_library_cases(Path(directory))
                similar = similar_cases_for
        try:
            report = evaluate_set(Path(directory), similar)
        except EvaluationError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(_dumps(report) if json else render_text(report))
        failed = thresholds_failed(
            report["totals"],
            min_recall=options.get("min_recall"),
            max_false_alarms=options.get("max_false_alarms"),
            min_top1=options.get("min_top1"),
        )
        if failed:
            raise CommandError("below threshold: " + "; ".join(failed), returncode=1)


def _dumps(payload) -> str:
    return json.dumps(payload, ensure_ascii=False, indent=2, default=str)


def _load_library_cases(directory: Path) -> None:
    """``loadcases --library`` when an expectation names a library case the
    database does not hold published (the founding cases alone are loaded by
    ``ensure_database``)."""
    try:
        wanted = {
            slug for d in snapshot_dirs(directory) if (slug := load_expectation(d / EXPECTED).library_case)
        }
    except EvaluationError:
        return  # reported by the evaluation itself
    held = set(
        Case.objects.filter(slug__in=wanted, state=Case.State.PUBLISHED).values_list("slug", flat=True)
    )
    if wanted - held:
        call_command("loadcases", library=True, verbosity=0, stdout=io.StringIO())
