"""The complexity gate of ``make lint``: no function of ``engine/`` or
``collectors/`` rated D or worse by radon, except those listed in
``tools/radon-baseline.txt`` (each at most as complex as listed there). The
list only shrinks: split a function (CONTRIBUTING.md, "Complexity") and
remove its line; a new or a worse one fails. The same file holds a ceiling on
radon's average complexity over both packages (``average N``): the average
may not rise above it, and ``--write`` lowers it (rounded up to 0.1) as
functions are split, towards the target of 4 (issue 24).

Usage: ``.venv/bin/python tools/radon_gate.py`` (``--write`` records the
current ones as the baseline).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / "tools" / "radon-baseline.txt"
PACKAGES = ("engine", "collectors")
AVERAGE = "average"  # the baseline line of the ceiling on the average complexity
RANK_D = 21  # radon's rank D starts at this complexity


def blocks() -> list[dict]:
    """radon's blocks (functions, methods, classes) of the packages."""
    radon = Path(sys.executable).parent / "radon"
    out = subprocess.run(
        [str(radon), "cc", "-j", *PACKAGES], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return [dict(block, path=path) for path, found in json.loads(out).items() for block in found]


def current(found: list[dict]) -> dict[str, int]:
    """``path:function`` -> cyclomatic complexity, for every function rated D or worse."""
    worst = {}
    for block in found:
        if block["complexity"] >= RANK_D:
            name = f"{block['classname']}.{block['name']}" if block.get("classname") else block["name"]
            worst[f"{block['path']}:{name}"] = int(block["complexity"])
    return worst


def average(found: list[dict]) -> float:
    """radon's average complexity (``radon cc -a``): over every block."""
    return sum(block["complexity"] for block in found) / len(found) if found else 0.0


def baseline() -> tuple[dict[str, int], float | None]:
    listed, ceiling = {}, None
    for line in BASELINE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            if key == AVERAGE:
                ceiling = float(value)
            else:
                listed[key] = int(value)
    return listed, ceiling


def main() -> int:
    found_blocks = blocks()
    found, mean = current(found_blocks), average(found_blocks)
    if "--write" in sys.argv:
        lines = ["# Functions radon rates D or worse, with their complexity: the list only shrinks."]
        lines += [f"{key} {found[key]}" for key in sorted(found)]
        lines += ["# The ceiling on the average complexity (radon cc -a): it only falls, towards 4."]
        lines += [f"{AVERAGE} {math.ceil(mean * 10) / 10:.1f}"]
        BASELINE.write_text("\n".join(lines) + "\n")
        return 0
    listed, ceiling = baseline()
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
    if ceiling is not None and mean > ceiling:
        failures.append(f"average complexity {mean:.2f} is above the ceiling {ceiling} (split functions)")
        print(f"radon: {failures[-1]}")
    print(f"radon: {len(found)} functions rated D or worse, {len(listed)} in the baseline")
    print(f"radon: average complexity {mean:.2f} (ceiling {ceiling}, target 4)")
    return 1 if failures or gone else 0


if __name__ == "__main__":
    raise SystemExit(main())
