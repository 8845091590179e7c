"""Disk rule on iostat -x and tsar output."""

from __future__ import annotations

IOSTAT = """```console
[root@db01 ~]# iostat -x 1 1
Linux 3.10.0-1160.el7.x86_64 (db01) \t11/22/2026 \t_x86_64_\t(16 CPU)

avg-cpu:  %user   %nice %system %iowait  %steal   %idle
           5.12    0.00    2.31   18.40    0.00   74.17

Device:         rrqm/s   wrqm/s     r/s     w/s    rkB/s    wkB/s avgrq-sz avgqu-sz   await r_await w_await  svctm  %util
sda               0.00     1.20    0.40    3.10     6.40    52.00    33.37     0.01    2.10    1.50    2.18   0.90   0.32
sdb               0.00   120.40  310.20  890.60 19852.80 61504.00   135.50    28.44   23.70   12.40   27.60   0.82  98.60
loop0             0.00     0.00    0.00    0.00     0.00     0.00     0.00     0.00   45.00   45.00    0.00   0.00   0.00
```
"""  # noqa: E501 (real iostat/syslog lines)


def test_disk_latency_fires_on_slow_saturated_device(analyze_texts):
    result = analyze_texts(IOSTAT)
    findings = [f for f in result.findings if f.rule == "disk.latency_high"]
    assert [f.evidence[0].fact for f in findings] == ["disks[sdb].await_ms"]
    assert {e.fact for e in findings[0].evidence} == {"disks[sdb].await_ms", "disks[sdb].util_pct"}


def test_disk_latency_quiet_on_seed_004_tsar(analyze_texts, seed_text):
    result = analyze_texts(seed_text("oceanbase-bmsql-tuning", "before", "obs-197.txt"))
    assert "disk.latency_high" not in result.rule_ids
    assert ("disk.latency_high", "missing disks") not in result.skipped
