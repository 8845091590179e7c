"""``manage.py analyze PATH [PATH ...] [--json]``: offline analysis.

Every PATH is one host (a collector archive, a sosreport, a transcript, a
single artifact or a directory of artifacts) -- or several, when a transcript's
prompts name other hosts (``ssh guest``; ``collectors.archive.load_hosts``); all
of them are analysed together as one multi-host snapshot. Nothing is stored: no server, no Snapshot row. The
configured database is only read for similar cases.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from collectors.archive import load_snapshot
from collectors.decoding import input_text
from collectors.derived.features import prose_only
from engine.run import analyze, result_to_json
from kb.models import Case
from kb.similarity import similar_cases_for

log = logging.getLogger(__name__)


def ensure_database() -> str | None:
    """Make similar cases available on a fresh data directory: apply pending
    migrations quietly, then load the founding cases (``loadcases``, from the
    knowledge base app) when no case is stored yet. Returns a warning instead
    of raising, because the analysis itself needs no database."""
    try:
        executor = MigrationExecutor(connection)
        if executor.migration_plan(executor.loader.graph.leaf_nodes()):
            call_command("migrate", interactive=False, verbosity=0)
        if not Case.objects.exists():
            call_command("loadcases", verbosity=0, stdout=_Null())
    except Exception as exc:  # no database server, read-only volume ...
        log.debug("database not prepared", exc_info=True)
        return f"similar cases unavailable: {type(exc).__name__}: {exc}"
    return None


def prose_symptom(snapshot, paths) -> str:
    """The input's text when the snapshot is prose only (nothing read into an
    artifact): similar cases can then only be matched by what it says."""
    return input_text(paths) if prose_only(snapshot) else ""


class _Null:
    def write(self, *_args, **_kwargs) -> None:
        pass

    def flush(self) -> None:
        pass


class Command(BaseCommand):
    help = "Analyse snapshot files offline (several paths: one multi-host snapshot) and print the findings."

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", help="archive, sosreport, transcript, artifact or directory")
        parser.add_argument("--json", action="store_true", help="print the JSON object of DESIGN.md")
        parser.add_argument(
            "--no-similar", action="store_true", help="do not touch the database (no similar cases)"
        )

    def handle(self, *args, paths, json=False, no_similar=False, **options):
        missing = [p for p in paths if not Path(p).exists()]
        if missing:
            raise CommandError(f"no such file or directory: {', '.join(missing)}")
        warning = None if no_similar else ensure_database()
        snapshot = load_snapshot([Path(p) for p in paths])
        result = analyze(snapshot)
        similar = [] if no_similar else _similar_cases(result, snapshot, prose_symptom(snapshot, paths))
        payload = result_to_json(snapshot, result, similar_cases=similar)
        if warning:
            sys.stderr.write(warning + "\n")
        if json:
            self.stdout.write(_dumps(payload))
        else:
            self.stdout.write(render_text(payload))


def _similar_cases(result, snapshot, symptom: str) -> list:
    """The knowledge base's similar cases; the offline analysis stands without
    them when the database cannot answer."""
    try:
        return list(similar_cases_for(result.findings, snapshot, symptom=symptom))
    except Exception:
        log.exception("similar cases lookup failed")
        return []


def _dumps(payload) -> str:
    return json.dumps(payload, ensure_ascii=False, indent=2, default=str)


def render_text(payload: dict) -> str:
    """A readable report of the ``--json`` object."""
    out = []
    hosts = payload["facts"].get("hosts", [])
    out.append(f"Engine {payload.get('engine_version', '')}: {len(hosts)} host(s)")
    for h in hosts:
        role = h.get("role") or "unknown role"
        out.append(f"  - {h.get('label') or h.get('hostname') or 'host'} ({role})")
        reading = h.get("reading") or {}
        if reading.get("lines"):
            blocks = reading.get("unrecognised") or []
            out.append(
                f"    read {reading.get('read_lines', 0)} of {reading['lines']} lines into "
                f"{len(reading.get('artifacts') or [])} artifacts; {len(blocks)} unrecognised block(s)"
            )
            for block in blocks[:10]:
                out.append(
                    f"      lines {block['start_line']}-{block['end_line']}: {block['first_line'][:80]}"
                )
    findings = payload["findings"]
    out.append("")
    out.append(f"Findings: {len(findings)}")
    for f in findings:
        out.append(f"[{f['severity'].upper()}] {f['rule']} on {f['host']}: {f['title']}")
        out.append(f"    {f['explanation']}")
        for e in f["evidence"]:
            where = e["artifact"] + (f":{e['line']}" if e["line"] else "")
            out.append(f"    evidence: {e['fact']} = {e['value']}  ({where})")
        if f["measures"]:
            out.append(f"    measures: {', '.join(f['measures'])}")
    if payload.get("similar_cases"):
        out.append("")
        out.append("Similar cases:")
        for c in payload["similar_cases"]:
            shared = ", ".join(c.get("shared_rules", []))
            out.append(f"  {c.get('slug')} (score {c.get('score', 0):.2f}) shared: {shared}")
    if payload.get("skipped"):
        out.append("")
        out.append("Skipped rules:")
        for s in payload["skipped"]:
            out.append(f"  {s['rule']}: {s['reason']}")
    if payload.get("errors"):
        out.append("")
        out.append("Parse errors:")
        for e in payload["errors"]:
            out.append(f"  {e['artifact']}{':' + str(e['line']) if e.get('line') else ''}: {e['message']}")
    return "\n".join(out) + "\n"
