"""The complexity gate of ``make lint``: no function of ``engine/`` or
``collectors/`` rated D or worse by radon, except those listed in
``tools/radon-baseline.txt`` (each at most as complex as listed there). The
list only shrinks: split a function (CONTRIBUTING.md, "Complexity") and
remove its line; a new or a worse one fails.

Usage: ``.venv/bin/python tools/radon_gate.py`` (``--write`` records the
current ones as the baseline).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "tools" / "radon-baseline.txt"
PACKAGES = ("engine", "collectors")


def current() -> dict[str, int]:
    """``path:function`` -> cyclomatic complexity, for every function rated D or worse."""
    radon = Path(sys.executable).parent / "radon"
    out = subprocess.run(
        [str(radon), "cc", "-j", "-n", "D", *PACKAGES], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    found = {}
    for path, blocks in json.loads(out).items():
        for block in blocks:
            name = f"{block['classname']}.{block['name']}" if block.get("classname") else block["name"]
            found[f"{path}:{name}"] = int(block["complexity"])
    return found


def baseline() -> dict[str, int]:
    listed = {}
    for line in BASELINE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, complexity = line.rsplit(" ", 1)
            listed[key] = int(complexity)
    return listed


def main() -> int:
    found = current()
    if "--write" in sys.argv:
        lines = ["# Functions radon rates D or worse, with their complexity: the list only shrinks."]
        lines += [f"{key} {found[key]}" for key in sorted(found)]
        BASELINE.write_text("\n".join(lines) + "\n")
        return 0
    listed = baseline()
    failures = [
        f"{key}: complexity {value}" + (f" (was {listed[key]})" if key in listed else " (new)")
        for key, value in sorted(found.items())
        if key not in listed or value > listed[key]
    ]
    gone = sorted(set(listed) - set(found))
    for key in gone:
        print(f"radon: {key} is no longer rated D or worse: remove it from {BASELINE.relative_to(ROOT)}")
    for failure in failures:
        print(f"radon: {failure}")
    print(f"radon: {len(found)} functions rated D or worse, {len(listed)} in the baseline")
    return 1 if failures or gone else 0


if __name__ == "__main__":
    raise SystemExit(main())
