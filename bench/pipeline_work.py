"""The computation the pipeline benchmark's worker does on each of its inputs,
in one process and without the database: read the upload (``collectors.archive.load``)
and run the rules over it (``engine.run.analyze``), ``--reps`` times.

It is what ``bench/pipeline.py`` measures minus the web process, Redis, Celery
and PostgreSQL, so it can be run under ``valgrind --tool=callgrind``, whose
instruction count does not depend on the load of a shared machine. It reads
the packages of the current directory, so one copy of it measures another
checkout (an older commit) the same way::

    .venv/bin/python bench/pipeline_work.py --archive /tmp/collector-2MB.tar.gz   # write the archive once
    cd ../old && valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        .venv/bin/python ../new/bench/pipeline_work.py --reps 3 INPUTS...

Inputs (as in ``bench/pipeline.py``): ``tests/fixtures/seeds/*/before/*`` and one
generated collector archive, written once (it holds this machine's /proc
files, which change) and given to both checkouts. The instructions of one
repetition are those of ``--reps 3`` minus those of ``--reps 1``, halved: the
imports cancel.
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", nargs="*")
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--archive", help="write the generated 2 MB collector archive here, and stop")
    args = parser.parse_args()
    sys.path.insert(0, os.getcwd())
    if args.archive:
        from bench.pipeline import collector_archive

        with open(args.archive, "wb") as fh:
            fh.write(collector_archive())
        return 0
    from collectors.archive import load
    from collectors.facts import SnapshotFacts
    from engine.run import analyze

    started = time.process_time()
    for _ in range(args.reps):
        for path in args.inputs:
            analyze(SnapshotFacts(hosts=load(path).hosts))
    print(f"{time.process_time() - started:.3f} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
