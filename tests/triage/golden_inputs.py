"""What ``analyze --json`` is pinned on (``test_analyze_golden.py``): every
fixture snapshot, and the part of its output a refactor must not change.

Inputs: the founding seed write-ups (``../shared/seeds/*.txt``, one snapshot
each), the rebuilt seed snapshots (``tests/fixtures/seeds/<slug>/{before,after}``,
every file of a folder one host of one snapshot), every other artifact under
``tests/fixtures/`` (one snapshot each) and the evaluation set
(``tests/evaluation/NN-*``, as ``manage.py evaluate`` reads it).

Regenerate (only when a change of behaviour is intended, and say why in the
commit): ``.venv/bin/python -m tests.triage.golden_inputs``.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

from tests.conftest import FIXTURES, ROOT

GOLDEN = Path(__file__).parent / "golden" / "analyze.json"
SHARED_SEEDS = ROOT.parent / "shared" / "seeds"
EVALUATION = ROOT / "tests" / "evaluation"
SINGLE_FILE_DIRS = ("commands", "libvirt", "mysql", "network", "published")


def snapshots() -> dict[str, list[Path]]:
    """name -> the paths analysed together as one snapshot."""
    from triage.evaluation import snapshot_dirs, snapshot_inputs

    out: dict[str, list[Path]] = {}
    for path in sorted(SHARED_SEEDS.glob("*.txt")):
        out[f"shared-seed/{path.name}"] = [path]
    for folder in sorted((FIXTURES / "seeds").glob("*/*")):
        if folder.is_dir():
            out[f"seed/{folder.parent.name}/{folder.name}"] = sorted(
                p for p in folder.iterdir() if p.is_file()
            )
    for name in SINGLE_FILE_DIRS:
        for path in sorted((FIXTURES / name).iterdir()):
            if path.is_file() and path.name != "README.md":
                out[f"fixture/{name}/{path.name}"] = [path]
    for directory in snapshot_dirs(EVALUATION):
        out[f"evaluation/{directory.name}"] = snapshot_inputs(directory)
    return out


def pinned(payload: dict) -> dict:
    """The parts of the ``--json`` object that a refactor keeps: findings
    (whole), similar cases (slug, rounded score, shared rules), what was
    checked, skipped or not checked, and parse errors."""
    return {
        "findings": payload["findings"],
        "similar_cases": [
            {
                "slug": c.get("slug"),
                "score": round(c.get("score") or 0.0, 3),
                "shared_rules": c.get("shared_rules"),
            }
            for c in payload["similar_cases"]
        ],
        "checked": sorted(payload["checked"]),
        "skipped": payload["skipped"],
        "not_checked": payload["not_checked"],
        "errors": payload["errors"],
    }


def analyze_json(paths: list[Path]) -> dict:
    from django.core.management import call_command

    out = io.StringIO()
    call_command("analyze", *[str(p) for p in paths], "--json", stdout=out, stderr=io.StringIO())
    return pinned(json.loads(out.getvalue()))


def current() -> dict[str, dict]:
    return {name: analyze_json(paths) for name, paths in snapshots().items()}


if __name__ == "__main__":  # pragma: no cover - regeneration helper
    import os
    import tempfile

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["CASEBOOK_DATA_DIR"] = tempfile.mkdtemp(prefix="casebook-golden-")
    os.environ.pop("DATABASE_URL", None)
    django.setup()
    data = current()
    GOLDEN.write_text(json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n")
    sys.stdout.write(f"{len(data)} snapshots written to {GOLDEN}\n")
