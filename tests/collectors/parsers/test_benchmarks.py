"""Benchmark parsers: seed 004's BenchmarkSQL line, seed 000's CREATE INDEX timing,
timings from the live MariaDB client, and the STREAM 5.10 report layout."""

from __future__ import annotations

import secrets
import shutil
import subprocess

import pytest

from collectors.facts import ParseError
from collectors.parsers.benchmarks import parse_jtpcc, parse_sql_timing, parse_stream
from tests.collectors.parsers.lookup import detect, for_command
from tests.conftest import SEEDS, port_open, service_unavailable


def seed_lines(number: str) -> list[str]:
    seed = next(SEEDS.glob(f"{number}_*.txt"), None)
    if seed is None:
        service_unavailable(f"seed {number} missing")
    return seed.read_text(encoding="utf-8").splitlines()


def test_seed_004_tpm_total():
    lines = seed_lines("004")
    start = next(i for i, ln in enumerate(lines) if "INFO jTPCC" in ln)
    end = next(i for i, ln in enumerate(lines) if "Running Average tpmTOTAL" in ln)
    block = "\n".join(lines[start : end + 1])
    results = {b.name: b for b in parse_jtpcc(block).results}
    assert results["tpmTOTAL"].value == 138777.38
    assert results["tpmTOTAL"].unit == "tpm" and results["tpmTOTAL"].kind == "tpmc"
    assert results["tpmTOTAL current"].value == 1522932
    assert "Running Average" in block.splitlines()[results["tpmTOTAL"].line - 1]
    assert detect(block).kind == "jtpcc"


def test_seed_000_create_index_timing():
    lines = seed_lines("000")
    start = next(i for i, ln in enumerate(lines) if ln.startswith("MariaDB [infoplus-v2]>"))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("Records:"))
    # from the line before the prompt (a previous result's "rows in set") to the end
    block = "\n".join(lines[start - 1 : end + 1])
    results = parse_sql_timing(block).results
    timed = [b for b in results if b.name]
    assert len(timed) == 1
    (create,) = timed
    assert create.kind == "statement" and create.unit == "s"
    assert create.value == 58.371
    assert create.name == "create index Form_Remarks_Timestamp_IX on Form_Remarks (Timestamp)"
    # the earlier "rows in set (0.005 sec)" has no statement in the paste: kept, unnamed
    assert [(b.name, b.value) for b in results if not b.name] == [("", 0.005)]
    assert detect(block).kind == "sql_timing"
    assert for_command(lines[start].split("> ", 1)[1]).kind == "sql_timing"


def test_live_mariadb_verbose_timings():
    client = shutil.which("mariadb") or shutil.which("mysql")
    if client is None or not port_open("127.0.0.1", 3306):
        service_unavailable("MariaDB is not listening on 127.0.0.1:3306")
    # a database of this run only: two runs of the suite may share this server
    db = f"cb_parsers_apps_bench_{secrets.token_hex(4)}"
    sql = (
        f"DO SLEEP(0.3); CREATE DATABASE IF NOT EXISTS {db}; "
        f"CREATE TABLE IF NOT EXISTS {db}.t (a int); "
        f"CREATE INDEX ia ON {db}.t (a); DROP DATABASE {db}"
    )
    proc = subprocess.run(
        [client, "-h127.0.0.1", "-uroot", "-vvv", "-e", sql],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if proc.returncode != 0:
        service_unavailable(f"MariaDB client failed: {proc.stderr.strip()}")
    results = parse_sql_timing(proc.stdout).results
    names = [b.name for b in results]
    assert names == [
        "DO SLEEP(0.3)",
        f"CREATE DATABASE IF NOT EXISTS {db}",
        f"CREATE TABLE IF NOT EXISTS {db}.t (a int)",
        f"CREATE INDEX ia ON {db}.t (a)",
        f"DROP DATABASE {db}",
    ]
    assert results[0].value >= 0.29


def test_minutes_form_and_continuation_lines():
    text = (
        "MariaDB [db]> create index ix\n"
        "    -> on big_table (ts);\n"
        "Query OK, 0 rows affected (1 min 58.37 sec)\n"
        "Records: 0  Duplicates: 0  Warnings: 0\n"
    )
    (b,) = parse_sql_timing(text).results
    assert (b.name, b.value, b.line) == ("create index ix on big_table (ts)", 118.37, 3)


# The layout STREAM 5.10 prints (stream.c's report); no STREAM binary or captured
# report is available to the test suite, so the numbers here are illustrative.
STREAM_REPORT = """\
-------------------------------------------------------------
STREAM version $Revision: 5.10 $
-------------------------------------------------------------
Function    Best Rate MB/s  Avg time     Min time     Max time
Copy:           15012.3     0.010793     0.010658     0.010975
Scale:          14807.9     0.010973     0.010805     0.011228
Add:            16511.2     0.014705     0.014535     0.014902
Triad:          16602.4     0.014640     0.014456     0.014830
-------------------------------------------------------------
Solution Validates: avg error less than 1.000000e-13 on all three arrays
-------------------------------------------------------------
"""


def test_stream_best_rates():
    facts = parse_stream(STREAM_REPORT)
    assert {b.name: b.value for b in facts.results} == {
        "Copy": 15012.3,
        "Scale": 14807.9,
        "Add": 16511.2,
        "Triad": 16602.4,
    }
    assert all(b.unit == "MB/s" and b.kind == "stream" for b in facts.results)
    assert facts.lines["Triad"] == 8
    assert detect(STREAM_REPORT).kind == "stream"
    assert for_command("./stream").kind == "stream"


@pytest.mark.parametrize(
    ("parser", "text"),
    [
        (parse_stream, "Function    Best Rate MB/s  Avg time\n"),
        (parse_jtpcc, "17:18:30,859 [main] INFO jTPCC : Term-00, resultDirectory=null"),
        (parse_sql_timing, "ERROR 1146 (42S02): Table 'db.t' doesn't exist"),
        (parse_sql_timing, "Query OK, 0 rows affected (" + "9" * 400 + " sec)"),
    ],
)
def test_unusable_text_raises_parse_error(parser, text):
    with pytest.raises(ParseError):
        parser(text)
