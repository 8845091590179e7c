"""Write ``tests/durations.json``: seconds per test file, from a JUnit report.

``tests/conftest.py`` runs the longest files first, so that with pytest-xdist's
``--dist loadfile`` no worker is left running a long file alone at the end of
the run (longest processing time first). Refresh it after a CI run when files
were added or got much slower or faster:

    .venv/bin/python tools/test_durations.py test-output/junit.xml

Only the order matters: figures from a loaded machine do as well as quiet ones.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from defusedxml import ElementTree as ET

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "durations.json"


def test_file(classname: str) -> str | None:
    """``tests.kb.test_kb_search.TestX`` -> ``tests/kb/test_kb_search.py``."""
    parts = classname.split(".")
    while parts:
        path = Path(*parts).with_suffix(".py")
        if (ROOT / path).is_file():
            return path.as_posix()
        parts.pop()
    return None


def durations(report: Path) -> dict[str, float]:
    seconds: Counter[str] = Counter()
    for case in ET.parse(report).getroot().iter("testcase"):
        path = test_file(case.get("classname", ""))
        if path is not None:
            seconds[path] += float(case.get("time", 0))
    return {path: round(value, 1) for path, value in sorted(seconds.items())}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    found = durations(Path(argv[0]))
    OUT.write_text(json.dumps(found, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{OUT.relative_to(ROOT)}: {len(found)} files, {sum(found.values()):.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
