"""Network rules on seed 004's tc, ping and top output."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES

OB = "oceanbase-bmsql-tuning"
HOST = "obs-197.txt"

CPUS = 16
SOFTIRQS_ROWS = {
    "HI": [0] * CPUS,
    "TIMER": [8123456] * CPUS,
    "NET_TX": [1204] * CPUS,
    "NET_RX": [98234567, 87345123] + [10234] * (CPUS - 2),
    "BLOCK": [5123] * CPUS,
    "TASKLET": [312] * CPUS,
    "SCHED": [4123456] * CPUS,
    "RCU": [6123456] * CPUS,
}


def _softirqs(rows) -> str:
    header = " " * 12 + "".join(f"{'CPU' + str(i):>11}" for i in range(CPUS))
    body = [f"{name + ':':>12}" + "".join(f"{v:>11}" for v in values) for name, values in rows.items()]
    return "```console\n[root@ob-host ~]# cat /proc/softirqs\n" + "\n".join([header, *body]) + "\n```\n"


def test_netem_delay_fires_on_seed_004_tc(analyze_texts, seed_text):
    result = analyze_texts(seed_text(OB, "before", HOST))
    finding = next(f for f in result.findings if f.rule == "net.netem_delay")
    assert finding.severity == "critical"
    assert finding.evidence[0].value == 1.0
    assert finding.evidence[0].fact == "tc.qdiscs[bond0].delay_ms"


def test_netem_delay_quiet_without_netem(analyze_texts, seed_text):
    assert "net.netem_delay" not in analyze_texts(seed_text(OB, "after", HOST)).rule_ids


def test_lan_rtt_fires_on_replies_without_summary(analyze_texts, seed_text):
    result = analyze_texts(seed_text(OB, "before", HOST))
    finding = next(f for f in result.findings if f.rule == "net.lan_rtt_high")
    # mean of the seven replies (1.06-1.07 ms)
    assert finding.evidence[0].value == pytest.approx(1.066, abs=0.005)


def test_lan_rtt_quiet_on_fast_lan(analyze_texts, seed_text):
    assert "net.lan_rtt_high" not in analyze_texts(seed_text(OB, "after", HOST)).rule_ids


def test_softirq_hotspot_fires_on_two_hot_cpus(analyze_texts, seed_text):
    result = analyze_texts(seed_text(OB, "before", HOST))
    finding = next(f for f in result.findings if f.rule == "net.softirq_hotspot")
    assert [e.value for e in finding.evidence] == [30.2, 25.4]


def test_softirq_hotspot_quiet_when_spread(analyze_texts, seed_text):
    assert "net.softirq_hotspot" not in analyze_texts(seed_text(OB, "after", HOST)).rule_ids


def test_softirq_hotspot_from_proc_softirqs(analyze_texts):
    assert "net.softirq_hotspot" in analyze_texts(_softirqs(SOFTIRQS_ROWS)).rule_ids
    spread = dict(SOFTIRQS_ROWS, NET_RX=[12345678] * CPUS)
    assert "net.softirq_hotspot" not in analyze_texts(_softirqs(spread)).rule_ids


def test_lan_rtt_quiet_for_a_public_internet_target(analyze_texts, seed_text):
    text = seed_text(OB, "before", HOST).replace("xx.xx.xx.196", "8.8.8.8")
    assert "net.lan_rtt_high" not in analyze_texts(text).rule_ids


def test_netem_delay_from_tc_qdisc_show_dev_names_the_device_once(analyze_texts):
    # a published transcript (tests/fixtures/published/README.md): "tc qdisc show dev
    # enp5s0f0" prints no device on its lines, and the same qdisc is shown twice
    from tests.conftest import FIXTURES

    text = (FIXTURES / "published" / "cephci-netem-transcript.txt").read_text(encoding="utf-8")
    result = analyze_texts("```console\n" + text + "```\n")
    findings = [f for f in result.findings if f.rule == "net.netem_delay"]
    assert len(findings) == 1
    finding = findings[0]
    assert finding.evidence[0].fact == "tc.qdiscs[enp5s0f0].delay_ms"
    assert "Device enp5s0f0 " in finding.explanation
    assert [e.line for e in finding.evidence] == [5, 7]  # both places it was read


def test_netem_delay_from_a_qdisc_line_quoted_without_its_command(analyze_texts):
    # facebookarchive/augmented-traffic-control#164: the line is all there is, inside prose
    text = (
        "The value used in TestShapeOn generated the following tc output:\n"
        "qdisc netem 800b: parent 1:5 limit 1000 delay 10.0ms  15.0ms 1% loss 10% 6.3% reorder 6% 0.6%"
        " corrupt 3.4% gap 1\n"
        "\nThe unittest could be better but this is what I have for now.\n"
    )
    finding = next(f for f in analyze_texts(text).findings if f.rule == "net.netem_delay")
    assert finding.evidence[0].value == 10.0
    assert "Device ? " in finding.explanation


def test_netem_delay_quiet_when_the_netem_line_is_cut_before_its_delay(analyze_texts):
    text = "pi@raspberrypi:~ $ tc qdisc show  dev eth1\nqdisc netem 8003: root refcnt\n"
    result = analyze_texts(text)
    assert "net.netem_delay" not in result.rule_ids
    assert "net.netem_delay" in result.checked  # the cut line itself: tests/collectors/parsers/test_tc.py


# raspberrypi/Raspberry-Pi-OS-64bit#182: top's head during a download, ksoftirqd/0 busy
RPI_TOP = """top - 14:31:10 up 1 day, 56 min,  2 users,  load average: 1.01, 1.73, 2.16
Threads: 697 total,   2 running, 695 sleeping,   0 stopped,   0 zombie
%Cpu(s):  4.2 us, 10.4 sy,  0.0 ni, 61.5 id,  0.0 wa,  0.0 hi, 23.9 si,  0.0 st
MiB Mem :   7813.0 total,   4144.3 free,   1103.2 used,   2565.5 buff/cache
MiB Swap:      0.0 total,      0.0 free,      0.0 used.   6555.2 avail Mem

  PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND
   12 root      20   0       0      0      0 R  93.2   0.0  43:47.43 ksoftirqd/0
30615 pi        20   0   94628   8348   7172 S  32.4   0.1   0:06.17 curl
"""


def test_softirq_hotspot_asks_for_per_cpu_lines_when_only_the_total_shows_softirq(analyze_texts):
    result = analyze_texts(RPI_TOP)
    assert "net.softirq_hotspot" not in result.rule_ids
    asked = [n for n in result.not_checked if n.rule == "net.softirq_hotspot"]
    assert asked and "mpstat -P ALL 5 3" in asked[0].commands
    quiet = RPI_TOP.replace("23.9 si", " 0.0 si")
    assert not [n for n in analyze_texts(quiet).not_checked if n.rule == "net.softirq_hotspot"]


def test_lan_rtt_names_the_host_each_mesh_ping_ran_on(analyze_texts):
    # cockroachdb/cockroach#15702 (evaluation snapshot 66): one file, pings run
    # on two hosts of the mesh; the excerpt is cut in crdb2a's second line
    text = (
        "Processing crdb1a\n"
        "crdb1a to 1c rtt min/avg/max/mdev = 0.213/0.281/1.048/0.091 ms, ipg/ewma 0.641/0.309 ms\n"
        "crdb1a to 1d rtt min/avg/max/mdev = 46.212/46.958/53.371/1.129 ms, pipe 2, "
        "ipg/ewma 47.406/47.519 ms\n"
        "Connection to crdb1a closed.\n\nProcessing crdb2a\n"
        "crdb2a to 1a rtt min/avg/max/mdev = 0.069/0.115/1.120/0.102 ms, ipg/ewma 0.179/0.102 ms\n"
        "crdb2a to 1\n"
    )
    result = analyze_texts(text)
    (finding,) = [f for f in result.findings if f.rule == "net.lan_rtt_high"]
    assert finding.evidence[0].fact == "pings[crdb1a to 1d].rtt_avg_ms"
    assert "from crdb1a to 1d" in finding.explanation


def _published(name: str) -> str:
    from tests.conftest import FIXTURES

    return (FIXTURES / "published" / name).read_text(encoding="utf-8")


def test_lan_rtt_quiet_for_a_name_that_resolves_to_a_public_address(analyze_texts):
    # jaywcjlove/linux-command: "PING host.1.jsdig.com (100.42.212.8)", 177 ms
    text = _published("linuxcommand-ping-public-name.txt")
    result = analyze_texts("```\n" + text)
    assert "net.lan_rtt_high" in result.checked
    assert "net.lan_rtt_high" not in result.rule_ids


def test_lan_rtt_quiet_for_loopback(analyze_texts):
    # github/advisory-database#7554: 127.0.0.1 at 0.567 ms is the machine itself
    result = analyze_texts(_published("advisorydb-ping-loopback-cut-unit.txt"))
    assert "net.lan_rtt_high" in result.checked
    assert "net.lan_rtt_high" not in result.rule_ids


def test_lan_rtt_fires_on_replies_of_a_shell_without_ping_line(analyze_texts):
    # RT-Thread's msh />ping: the public peer (10-12 ms) is not judged, the LAN one (2.75 ms) is
    result = analyze_texts(_published("rtthread-msh-ping-no-statistics.txt"))
    findings = [f for f in result.findings if f.rule == "net.lan_rtt_high"]
    assert [f.evidence[0].value for f in findings] == [2.75]


def test_lan_rtt_fires_on_statistics_alone(analyze_texts):
    result = analyze_texts(_published("chirpstack-ping-statistics-only.txt"))
    finding = next(f for f in result.findings if f.rule == "net.lan_rtt_high")
    assert finding.evidence[0].value == 5.136


def test_lan_rtt_fires_on_windows_replies(analyze_texts):
    result = analyze_texts(_published("linuxmemo-windows-ping-ja.txt"))
    finding = next(f for f in result.findings if f.rule == "net.lan_rtt_high")
    assert finding.evidence[0].value == 50.5


def test_lan_rtt_is_not_checked_on_windows_replies_below_a_millisecond_without_statistics(analyze_texts):
    """imangodoc (round Q 2104): ``ping -t 192.168.0.1`` with four Windows replies
    ``time<1ms`` and no statistics. ``<1ms`` bounds the round trip, it does not
    measure it (it was read as 1.00 ms and fired): not checked, with ping's
    statistics asked for."""
    text = (
        FIXTURES / "published" / "roundq" / "imangodoc-windows-ping-time-below-1ms-no-statistics-zh.txt"
    ).read_text()
    result = analyze_texts(text)
    assert "net.lan_rtt_high" not in result.rule_ids
    [skipped] = [n for n in result.not_checked if n.rule == "net.lan_rtt_high"]
    assert "below a millisecond" in skipped.reason
