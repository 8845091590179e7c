"""top / mpstat / sar parsers: seeds 000, 002, 004 and this machine."""

# real sysstat tables are wider than our line limit
# ruff: noqa: E501

from __future__ import annotations

import shutil
import subprocess

import pytest

from collectors.facts import ParseError
from collectors.parsers.cpu_usage import parse_mpstat, parse_sar_cpu, parse_top
from tests.collectors.parsers.lookup import detect, for_command
from tests.conftest import ROOT, service_unavailable


def _require(tool: str, package: str) -> None:
    """Skip on a developer box without the tool; fail in CI, which must install it."""
    if shutil.which(tool) is None:
        service_unavailable(f"{tool} not installed (apt-get install -y {package})")


def _lines(seeds_dir, prefix: str) -> list[str]:
    return next(seeds_dir.glob(f"{prefix}_*.txt")).read_text(encoding="utf-8").splitlines()


def _block(lines: list[str], first: str, stop) -> str:
    start = next(i for i, line in enumerate(lines) if line.startswith(first))
    end = next(i for i in range(start + 1, len(lines)) if stop(lines[i]))
    return "\n".join(lines[start:end])


def test_seed_000_per_cpu_idle(seeds_dir):
    usage = parse_top(_block(_lines(seeds_dir, "000"), "top - 11:38:32", lambda s: s.startswith("```")))
    assert len(usage.per_cpu) == 54
    assert [c.cpu for c in usage.per_cpu] == [str(i) for i in range(54)]
    idle = {c.cpu: c.id for c in usage.per_cpu}
    assert idle["0"] == 96.1 and idle["1"] == 100.0 and idle["51"] == 96.6 and idle["53"] == 100.0
    assert usage.per_cpu[0].si == 1.1
    assert usage.load_average == (1.09, 1.23, 1.42)
    assert usage.uptime_days == 64
    assert usage.tasks_total == 1225
    assert usage.per_cpu[2].line == 5


def test_seed_004_softirq_hotspot(seeds_dir):
    lines = _lines(seeds_dir, "004")
    usage = parse_top(_block(lines, "top - 14:07:35", lambda s: not s.startswith(("%Cpu", "Tasks"))))
    assert usage.per_cpu[0].si == 30.2
    assert usage.per_cpu[1].si == 25.4
    assert all(c.si < 1 for c in usage.per_cpu[2:])
    assert len(usage.per_cpu) == 18


def test_seed_004_truncated_memory_and_processes(seeds_dir):
    lines = _lines(seeds_dir, "004")
    usage = parse_top(_block(lines, "top - 17:19:08", lambda s: s == "Deploy the environment"))
    assert usage.mem_total_kb == 79179116  # printed "79179116+total": at least this much
    assert usage.mem_truncated is True
    assert usage.mem_cache_kb == 12576206
    assert usage.overall.us == 29.7 and usage.overall.si == 1.1
    assert [p.pid for p in usage.processes] == [45497, 43217, 40579]
    # 43217's row lost its PR column; %CPU, %MEM and the command still line up
    second = usage.processes[1]
    assert (second.cpu_pct, second.mem_pct, second.command) == (
        1257.0,
        11.2,
        "/home/test/obdocker.z2.obs0/bin/observer",
    )


def test_two_cpus_per_line_and_old_style():
    text = (
        "%Cpu0  :  3.0 us,  1.0 sy,  0.0 ni, 96.0 id,  0.0 wa,  0.0 hi,  0.0 si,  0.0 st"
        "   %Cpu1  : 10.0 us,  2.0 sy,  0.0 ni, 80.0 id,  0.0 wa,  0.0 hi,  8.0 si,  0.0 st\n"
        "MiB Mem :  15921.4 total,   1234.5 free,   8000.0 used,   6686.9 buff/cache\n"
    )
    usage = parse_top(text)
    assert [(c.cpu, c.id, c.si) for c in usage.per_cpu] == [("0", 96.0, 0.0), ("1", 80.0, 8.0)]
    assert usage.mem_total_kb == int(15921.4 * 1024)
    old = parse_top(
        "Cpu(s):  1.2%us,  0.5%sy,  0.0%ni, 98.1%id,  0.2%wa\nMem:  32827556k total, 30903752k used\n"
    )
    assert (old.overall.us, old.overall.id, old.mem_total_kb, old.mem_used_kb) == (
        1.2,
        98.1,
        32827556,
        30903752,
    )


def test_pt_summary_processes_and_uptime(corpus):
    procs = parse_top((corpus / "pt-summary" / "007" / "processes").read_text())
    assert procs.processes[0].pid == 21837 and procs.processes[0].cpu_pct == 76.9
    up = parse_top((corpus / "pt-summary" / "007" / "uptime").read_text())
    assert up.load_average == (3.72, 4.25, 4.97) and up.uptime_days == 38


def test_seed_002_ocr_sar_tables(seeds_dir):
    lines = _lines(seeds_dir, "002")
    first = parse_sar_cpu(_block(lines, "inux 3.0.76", lambda s: s.startswith("## ")))
    assert len(first.samples) == 21
    # decimal commas ("38,28") and OCR'd headers ("Zuser", "Zidle")
    assert first.samples[15].us == 38.28
    assert first.samples[0].id == 21.96
    second = parse_sar_cpu(_block(lines, "09:52:49", lambda s: not s.strip()))
    assert len(second.samples) == 6  # CPU "a11" read as "all"
    assert second.samples[0].wa == 0.0 and second.samples[0].ni == 3.89  # "%n1ce", "%10wa1t"


def test_mpstat_average_lines():
    text = """Linux 5.14.0 (db01) \t11/22/26 \t_x86_64_\t(4 CPU)

10:00:01 AM  CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle
10:00:02 AM  all   20.00    0.00    5.00    0.00    0.00   10.00    0.00    0.00    0.00   65.00
10:00:02 AM    0   80.00    0.00   10.00    0.00    0.00   10.00    0.00    0.00    0.00    0.00
10:00:02 AM    1    0.00    0.00    0.00    0.00    0.00   30.00    0.00    0.00    0.00   70.00

Average:     CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle
Average:     all   20.00    0.00    5.00    0.00    0.00   10.00    0.00    0.00    0.00   65.00
Average:       0   80.00    0.00   10.00    0.00    0.00   10.00    0.00    0.00    0.00    0.00
Average:       1    0.00    0.00    0.00    0.00    0.00   30.00    0.00    0.00    0.00   70.00
"""
    usage = parse_mpstat(text)
    assert usage.tool == "mpstat"
    assert [(c.cpu, c.si, c.line) for c in usage.per_cpu] == [("0", 10.0, 10), ("1", 30.0, 11)]
    assert usage.overall.id == 65.0
    assert len(usage.samples) == 1


def test_errors():
    for parser in (parse_top, parse_mpstat, parse_sar_cpu):
        with pytest.raises(ParseError):
            parser("nothing to see\n")


def test_registry():
    assert for_command("top -bn1").kind == "top"
    assert for_command("mpstat -P ALL 1 3").kind == "mpstat"
    assert for_command("sar -u 1 5").kind == "sar_cpu"
    assert for_command("sar -P ALL").kind == "sar_cpu"
    assert detect("top - 10:00:00 up 3 days,  1 user,  load average: 0.1, 0.2, 0.3\n").kind == "top"


def test_this_machine_top():
    _require("top", "procps")
    text = subprocess.run(["top", "-bn1"], capture_output=True, text=True, check=True).stdout
    usage = parse_top(text)
    assert usage.load_average is not None and usage.tasks_total and usage.mem_total_kb
    assert usage.overall is not None
    assert usage.processes and all(p.pid > 0 for p in usage.processes)
    # top lists itself
    assert any(p.command.startswith("top") for p in usage.processes)


def test_this_machine_mpstat_and_sar():
    import os

    _require("mpstat", "sysstat")
    _require("sar", "sysstat")
    usage = parse_mpstat(
        subprocess.run(["mpstat", "-P", "ALL", "1", "1"], capture_output=True, text=True).stdout
    )
    assert len(usage.per_cpu) == os.cpu_count()
    assert usage.overall is not None and usage.overall.id is not None
    sar = parse_sar_cpu(subprocess.run(["sar", "-u", "1", "2"], capture_output=True, text=True).stdout)
    assert len(sar.samples) == 2 and sar.overall is not None
    sar_all = parse_sar_cpu(
        subprocess.run(["sar", "-P", "ALL", "1", "1"], capture_output=True, text=True).stdout
    )
    assert len(sar_all.per_cpu) == os.cpu_count()


def test_threads_mode_header():
    usage = parse_top("Threads: 2345 total,   3 running, 2342 sleeping,   0 stopped,   0 zombie\n")
    assert usage.tasks_total == 2345


def test_sar_all_report_reads_only_the_cpu_table():
    text = """Linux 5.14.0 (db01) \t11/22/26 \t_x86_64_\t(2 CPU)

12:00:01 AM     CPU      %usr     %nice      %sys   %iowait    %steal      %irq     %soft    %guest    %gnice     %idle
12:10:01 AM     all      5.00      0.00      2.00      0.00      0.00      0.00      1.00      0.00      0.00     92.00
12:10:01 AM       0      6.00      0.00      2.00      0.00      0.00      0.00      2.00      0.00      0.00     90.00

12:00:01 AM   runq-sz  plist-sz   ldavg-1   ldavg-5  ldavg-15   blocked
12:10:01 AM         2       500      0.50      0.40      0.30         0
"""
    usage = parse_sar_cpu(text)
    assert [c.cpu for c in usage.per_cpu] == ["0"]
    assert usage.per_cpu[0].si == 2.0


def test_sos_paths():
    from tests.collectors.parsers.lookup import for_path

    assert for_path("sosreport-h/sos_commands/process/top_-b_-n_1").kind == "top"
    assert for_path("var/log/sa/sar22").kind == "sar_cpu"
    assert for_path("sosreport-h/sos_commands/filesys/df_-al_-x_autofs").kind == "df"


def test_this_machine_top_chinese_locale():
    import os

    _require("top", "procps")
    env = {**os.environ, "LANGUAGE": "zh_CN", "LC_ALL": "C.UTF-8"}
    text = subprocess.run(["top", "-bn1"], capture_output=True, text=True, check=True, env=env).stdout
    usage = parse_top(text)
    assert usage.tasks_total and usage.load_average is not None and usage.overall is not None


def test_this_machine_sysstat_chinese_locale():
    import os

    _require("mpstat", "sysstat")
    env = {**os.environ, "LANGUAGE": "zh_CN", "LC_ALL": "C.UTF-8"}
    text = subprocess.run(["mpstat", "-P", "ALL", "1", "1"], capture_output=True, text=True, env=env).stdout
    usage = parse_mpstat(text)
    assert len(usage.per_cpu) == os.cpu_count()
    # the "平均时间:" (Average) rows give per_cpu and overall
    lines = text.splitlines()
    assert all(lines[c.line - 1].startswith("平均时间") for c in [usage.overall, *usage.per_cpu])


def test_mpstat_per_cpu_soft_reaches_si_this_machine():
    """parsers-mem: ``mpstat -P ALL`` per-CPU %soft is CpuUtil.si (net.softirq_hotspot reads it)."""
    import os

    from tests.collectors.parsers.machine import paste, run

    out = run("mpstat -P ALL 1 1", tool="mpstat", package="sysstat")
    usage = parse_mpstat(out)
    assert [u.cpu for u in usage.per_cpu] == [str(c) for c in range(os.cpu_count())]
    average = [line.split() for line in out.splitlines() if line.startswith("Average:")]
    header = average[0]
    soft = header.index("%soft")
    for util in usage.per_cpu:
        row = next(r for r in average if r[1] == util.cpu)
        assert util.si == float(row[soft])
    assert detect(out).kind == "mpstat"
    host = paste(("mpstat -P ALL 1 1", out))
    assert len(host.cpu_usage.per_cpu) == os.cpu_count()
    assert all(u.si is not None for u in host.cpu_usage.per_cpu)


# kubevirt issue 5999 (tests/evaluation/88-*/SOURCE.md): top and top -Hp of a
# guest's QEMU, the task tables alone (no summary lines, no prompt), the last
# thread row cut by the stored copy
KUBEVIRT_TOP = (ROOT / "tests/evaluation/88-kubevirt-top-qemu-tcg-threads-cut/issue.txt").read_text(
    encoding="utf-8"
)


def test_top_task_table_without_summary_is_top():
    table = KUBEVIRT_TOP.split("```")[1]
    assert detect(table).kind == "top"
    usage = parse_top(table)
    (qemu,) = usage.processes
    assert (qemu.pid, qemu.user, qemu.cpu_pct, qemu.command) == (49443, "qemu", 312.9, "qemu-kvm")


def test_top_thread_rows_keep_names_with_spaces_and_a_cut_row_is_reported():
    table = KUBEVIRT_TOP.split("```")[3]
    usage = parse_top(table)
    assert [(p.pid, p.cpu_pct, p.command) for p in usage.processes] == [
        (49451, 99.3, "CPU 3/TCG"),
        (49452, 99.3, "CPU 4/TCG"),
    ]
    assert [e.message for e in usage.errors] == ["top: process row 49449 cut: '49449 qemu      20'"]


def test_solaris_mpstat_is_reported_as_such_not_read():
    # illumos-kvm-cmd issue 8 (tests/evaluation/92-*/SOURCE.md): an OpenIndiana KVM host
    text = (ROOT / "tests/evaluation/92-illumos-kvm-mpstat-solaris/issue.txt").read_text(encoding="utf-8")
    table = text.split("# mpstat 1 3\n", 1)[1]
    with pytest.raises(ParseError, match="illumos/Solaris mpstat"):
        parse_mpstat(table)
