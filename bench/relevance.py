"""Relevance of case search: does the right case come first?

Usage::

    # the founding cases and the published library, on a scratch SQLite
    # database (the test tests/bench/test_relevance.py runs the same function)
    .venv/bin/python bench/relevance.py

    # the 100k-case benchmark set with the founding cases inside, on
    # PostgreSQL, loaded by bench/search.py (same database URL)
    .venv/bin/python bench/relevance.py --database-url postgres://postgres@127.0.0.1:5432/casebook_bench_search

    # another queries file of the same format (the held-out set)
    .venv/bin/python bench/relevance.py --queries bench/relevance_heldout.yaml

    # the library set (issue 27): 162 queries over the 52 published and the 5
    # founding cases, a tuning part and a held-out part written together
    .venv/bin/python bench/relevance.py --queries bench/relevance_library.yaml
    .venv/bin/python bench/relevance.py --queries bench/relevance_library_heldout.yaml

The queries are ``bench/relevance_queries.yaml``: support-ticket phrasings in
English, Chinese and both, with typos and inflections, each with the founding
case that must rank first. Every query is searched as the API does (published
cases, one hit per case) in the reader's language: Chinese when the query has
Chinese characters, else English. Reported: top-1 (share of queries whose case
ranks first) and MRR (mean of 1 / rank of the case within the first page, 0
when absent), overall and per kind.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUERIES_PATH = ROOT / "bench" / "relevance_queries.yaml"
TOP1_TARGET = 0.95


def load_queries(path: Path = QUERIES_PATH) -> list[dict]:
    import yaml

    return yaml.safe_load(path.read_text(encoding="utf-8"))


def evaluate(queries: list[dict]) -> dict:
    """Run every query through ``kb.search.search``; ranks, top-1 and MRR."""
    from kb.search import searching

    rows = []
    for entry in queries:
        language = "zh" if re.search(r"[\u4e00-\u9fff]", entry["q"]) else "en"
        results = searching.search(entry["q"], filters={"state": "published"}, language=language)
        slugs = [hit.case.slug for hit in results.hits]
        right = [entry["expect"], *entry.get("also", [])]
        ranks = [slugs.index(slug) + 1 for slug in right if slug in slugs]
        rank = min(ranks) if ranks else 0
        # The founding case's own rank, for the queries other cases answer too.
        own = slugs.index(entry["expect"]) + 1 if entry["expect"] in slugs else 0
        rows.append(
            {**entry, "rank": rank, "own_rank": own, "top": slugs[:3], "suggestion": results.suggestion}
        )
    by_kind: dict[str, list[dict]] = {}
    for row in rows:
        by_kind.setdefault(row["kind"], []).append(row)

    def summary(items: list[dict]) -> dict:
        return {
            "queries": len(items),
            "top1": sum(r["rank"] == 1 for r in items) / len(items),
            "mrr": sum(1 / r["rank"] for r in items if r["rank"]) / len(items),
        }

    return {
        **summary(rows),
        "kinds": {kind: summary(items) for kind, items in sorted(by_kind.items())},
        "misses": [r for r in rows if r["rank"] != 1],
        "shared": [r for r in rows if r["rank"] == 1 and r["own_rank"] != 1],
    }


def report(result: dict, label: str) -> str:
    lines = [
        f"{label}: {result['queries']} queries, top-1 {result['top1']:.1%}, MRR {result['mrr']:.3f}",
        "  " + ", ".join(f"{k} {v['top1']:.0%} ({v['queries']})" for k, v in result["kinds"].items()),
    ]
    for miss in result["misses"]:
        lines.append(f"  miss: {miss['q']!r} -> rank {miss['rank'] or '-'} (top {miss['top']})")
    for row in result.get("shared", []):
        lines.append(
            f"  shared: {row['q']!r} -> {row['top'][0]} first, {row['expect']} at {row['own_rank'] or '-'}"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--database-url",
        help="an already loaded database (bench/search.py); default: scratch SQLite, every case of kb/data",
    )
    parser.add_argument(
        "--queries",
        type=Path,
        default=QUERIES_PATH,
        help=f"a queries file of the same format (default: {QUERIES_PATH.relative_to(ROOT)})",
    )
    args = parser.parse_args()
    scratch = None
    if args.database_url:
        os.environ["DATABASE_URL"] = args.database_url
    else:
        scratch = tempfile.TemporaryDirectory(prefix="casebook-relevance-")
        os.environ["DATABASE_URL"] = f"sqlite:///{scratch.name}/relevance.sqlite3"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("CASEBOOK_DATA_DIR", scratch.name if scratch else str(ROOT / "data"))
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    call_command("loadcases", verbosity=0, library=True)
    from kb.models import Case

    label = f"{args.queries.name}, {connection.vendor}, {Case.objects.count()} case versions"
    result = evaluate(load_queries(args.queries))
    print(report(result, label))
    return 0 if result["top1"] >= TOP1_TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
