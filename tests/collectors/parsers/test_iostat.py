"""iostat -x and tsar-style disk tables."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from collectors.facts import ParseError
from collectors.parsers.iostat import LAST_REPORT_CUT, parse_iostat
from tests.collectors.parsers.lookup import detect, for_command
from tests.conftest import FIXTURES, service_unavailable

# long table rows are the point of this fixture
# ruff: noqa: E501

OLD_IOSTAT = """Linux 3.10.0-957.el7.x86_64 (db01) \t11/22/2026 \t_x86_64_\t(32 CPU)

avg-cpu:  %user   %nice %system %iowait  %steal   %idle
           2.49    0.00    1.52    0.19    0.01   95.80

Device:         rrqm/s   wrqm/s     r/s     w/s    rkB/s    wkB/s avgrq-sz avgqu-sz   await r_await w_await  svctm  %util
sda               0.00     0.10    1.00    2.00    10.00    20.00    20.00     0.01    1.00    1.00    1.00   0.50   0.10

avg-cpu:  %user   %nice %system %iowait  %steal   %idle
          30.00    0.00    5.00   20.00    0.00   45.00

Device:         rrqm/s   wrqm/s     r/s     w/s    rkB/s    wkB/s avgrq-sz avgqu-sz   await r_await w_await  svctm  %util
sda               0.00     5.00  100.00  300.00  4000.00 12000.00    80.00     9.00   25.50   10.00   30.67   2.40  96.00
dm-0              0.00     0.00    0.00    0.00     0.00     0.00     0.00     0.00    0.00    0.00    0.00   0.00   0.00
"""


def _require(tool: str, package: str) -> None:
    """Skip on a developer box without the tool; fail in CI, which must install it."""
    if shutil.which(tool) is None:
        service_unavailable(f"{tool} not installed (apt-get install -y {package})")


def test_last_report_wins():
    stats = parse_iostat(OLD_IOSTAT)
    assert [d.device for d in stats.devices] == ["sda", "dm-0"]
    sda = stats.devices[0]
    assert (sda.await_ms, sda.r_await_ms, sda.w_await_ms, sda.util_pct) == (25.5, 10.0, 30.67, 96.0)
    assert stats.lines["sda"] == 13


def test_new_columns_compute_await():
    text = (
        "Device            r/s     w/s  r_await w_await  aqu-sz  %util\n"
        "nvme0n1        100.00  300.00     2.00    6.00    1.00  50.00\n"
    )
    disk = parse_iostat(text).devices[0]
    assert disk.await_ms == 5.0  # (2*100 + 6*300) / 400
    assert disk.util_pct == 50.0


def test_seed_004_tsar_history(seeds_dir):
    lines = next(seeds_dir.glob("004_*.txt")).read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Time ---") and "dm-0" in line)
    end = lines.index("NIC soft interrupts")
    stats = parse_iostat("\n".join(lines[start:end]))
    by_name = {d.device: d for d in stats.devices}
    assert set(by_name) == {"dm-0", "dm-1"}
    assert by_name["dm-0"].await_ms == 0.03
    assert 7.5 < by_name["dm-0"].util_pct < 11
    assert by_name["dm-1"].r_await_ms == 0.13
    assert stats.lines["dm-0"] == 1


def test_errors():
    with pytest.raises(ParseError):
        parse_iostat("avg-cpu:  %user\n 1.0\n")


def test_registry():
    assert for_command("iostat -x 1 3").kind == "iostat"
    assert detect(OLD_IOSTAT).kind == "iostat"


def test_this_machine():
    _require("iostat", "sysstat")
    stats = parse_iostat(subprocess.run(["iostat", "-x", "1", "2"], capture_output=True, text=True).stdout)
    assert stats.devices
    assert all(d.util_pct is not None and d.await_ms is not None for d in stats.devices)


# sysstat/sysstat#341 (evaluation snapshot 82): the stored excerpt ends in a row
SYSSTAT_341_CUT = """Device            r/s     rMB/s   rrqm/s  %rrqm r_await rareq-sz  %util
nvme7n1         42.00      2.54     0.00   0.00    0.24    62.00   3.20
nvme8n1         48.00      3.41     0.00   0.00    0.23
"""


def test_a_row_cut_mid_paste_is_kept_and_reported():
    out = parse_iostat(SYSSTAT_341_CUT)
    assert [(d.device, d.r_await_ms, d.util_pct) for d in out.devices] == [
        ("nvme7n1", 0.24, 3.2),
        ("nvme8n1", 0.23, None),
    ]
    (error,) = out.errors
    assert error.line == 3 and "nvme8n1 cut mid-paste: no rareq-sz, %util" in error.message


def test_complete_rows_report_nothing():
    assert parse_iostat(SYSSTAT_341_CUT.rsplit("nvme8n1", 1)[0]).errors == []


def test_a_last_report_cut_by_the_paste_keeps_the_report_before():
    # influxdata/influxdb#6531: the third report is cut inside sda's row; sda and dm-0
    # were at 98 %util in the second one, and dm-0/dm-1 come after the cut
    from tests.conftest import FIXTURES

    text = (FIXTURES / "published" / "influxdb-6531-iostat-xd-last-report-cut.txt").read_text(
        encoding="utf-8"
    )
    r = parse_iostat(text[text.index("Linux 3.19") :])
    assert [(d.device, d.util_pct, d.await_ms) for d in r.devices] == [
        ("sda", 98.0, 8.7),
        ("dm-0", 98.0, 9.51),
        ("dm-1", 0.0, 0.0),
    ]
    assert [e.line for e in r.errors] == [14]


def test_a_paste_cut_at_its_last_reports_header_reads_the_report_before_it():
    """influxdb issue 3885 (blind round N 1821): an ``iostat -x`` report and its CPU line,
    the paste cut right after the next report's header: the first is the latest whole one."""
    text = (FIXTURES / "published" / "roundn" / "influxdb-3885-iostat-x-last-report-cut.txt").read_text()
    stats = parse_iostat(text)
    vdb = next(d for d in stats.devices if d.device == "vdb")
    assert (vdb.await_ms, vdb.util_pct) == (32.36, 98.0)
    assert [e.message for e in stats.errors] == [LAST_REPORT_CUT]
