"""Memory per line (issue 29, point 1): a transcript or log is read up to
``Limits.text_lines`` lines, so the splitter's and the normaliser's per-line
bookkeeping is bounded by a count, not only by ``text_bytes`` (a 16 KB gzip of
"$ x" lines decompresses to four million of them).

Each case runs in a fresh interpreter, which reports the growth of its own peak
resident memory (``VmHWM``) over the analysis."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from collectors.limits import Limits
from tests.conftest import ROOT

MiB = 1 << 20

SCRIPT = """
import gzip, json, os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import django
django.setup()
from pathlib import Path
from collectors.archive import load
from collectors.parsers import load_all
load_all()


def peak_kib():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise SystemExit("no VmHWM")


if sys.argv[1] == "gzip":
    data, name = gzip.compress(b"$ x\\n" * 4_000_000, 9), "paste.txt.gz"
else:
    one = Path("tests/fixtures/published/threadripper3960x-numactl-H.txt").read_bytes()
    one = one.rstrip(b"\\n") + b"\\n"
    data, name = one * (16_000_000 // len(one)), "paste.txt"
before = peak_kib()
hosts = load(data, name=name).hosts
growth = (peak_kib() - before) / 1024
r = hosts[0].reading
print(json.dumps({"size": len(data), "growth_mib": growth, "lines": r.lines,
                  "errors": [e.message for h in hosts for e in h.errors]}))
"""


def run_case(case: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, case],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize(("case", "budget_mib"), [("gzip", 128), ("numactl", 64)])
def test_a_paste_of_many_lines_is_read_in_bounded_memory(case, budget_mib):
    result = run_case(case)
    assert result["growth_mib"] <= budget_mib, result
    limit = Limits().text_lines
    assert result["lines"] == limit, result
    assert f"only the first {limit} lines read (the limit for a transcript or log)" in result["errors"], (
        result
    )
