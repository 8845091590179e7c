"""ping parser: seed 004's replies without a summary, and a live ``ping`` of 127.0.0.1."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from collectors.facts import ParseError
from collectors.parsers.ping import parse_ping, parse_ping_summaries
from tests.collectors.parsers.lookup import detect, for_command
from tests.conftest import SEEDS, service_unavailable


def test_seed_004_average_from_replies():
    seed = next(SEEDS.glob("004_*.txt"), None)
    if seed is None:
        service_unavailable("seed 004 missing")
    lines = seed.read_text(encoding="utf-8").splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("PING "))
    end = max(i for i, ln in enumerate(lines) if " bytes from " in ln)
    block = "\n".join(lines[start : end + 1])
    r = parse_ping(block)
    assert r.target == "xx.xx.xx.196"
    assert r.replies_ms == [1.07, 1.06, 1.06, 1.06, 1.07, 1.07, 1.07]
    # no summary in the paste: mean 1.0657... rounded half-up to 2 decimals
    assert r.rtt_avg_ms == 1.07
    assert (r.rtt_min_ms, r.rtt_max_ms, r.received, r.transmitted) == (1.06, 1.07, 7, None)
    assert detect(block).kind == "ping"
    assert for_command(lines[start - 1].lstrip("$")).kind == "ping"


def test_rounding_is_half_up():
    r = parse_ping("64 bytes from h: icmp_seq=1 time=0.125 ms\n64 bytes from h: icmp_seq=2 time=0.125 ms")
    assert r.rtt_avg_ms == 0.13


def test_live_ping_localhost():
    if shutil.which("ping") is None:
        service_unavailable("ping is not installed (apt-get install iputils-ping)")
    proc = subprocess.run(
        ["ping", "-c", "3", "-i", "0.2", "127.0.0.1"], capture_output=True, text=True, timeout=60, check=False
    )
    if proc.returncode != 0:
        service_unavailable(f"ping 127.0.0.1 failed: {proc.stderr.strip() or proc.stdout.strip()}")
    r = parse_ping(proc.stdout)
    assert r.target == "127.0.0.1"
    assert (r.transmitted, r.received, r.loss_pct) == (3, 3, 0.0)
    assert len(r.replies_ms) == 3
    # the summary, not the recomputed mean, is reported when ping printed one
    summary = next(ln for ln in proc.stdout.splitlines() if ln.startswith(("rtt ", "round-trip ")))
    assert r.rtt_avg_ms == float(summary.split("=")[1].split("/")[1])
    assert r.rtt_min_ms <= r.rtt_avg_ms <= r.rtt_max_ms
    assert r.rtt_mdev_ms is not None
    assert proc.stdout.splitlines()[r.lines["rtt_avg_ms"] - 1] == summary


def test_busybox_summary_and_total_loss():
    busybox = (
        "PING 10.0.0.2 (10.0.0.2): 56 data bytes\n"
        "64 bytes from 10.0.0.2: seq=0 ttl=64 time=0.177 ms\n"
        "\n--- 10.0.0.2 ping statistics ---\n"
        "1 packets transmitted, 1 packets received, 0% packet loss\n"
        "round-trip min/avg/max = 0.177/0.177/0.177 ms\n"
    )
    r = parse_ping(busybox)
    assert (r.transmitted, r.received, r.rtt_avg_ms, r.rtt_mdev_ms) == (1, 1, 0.177, None)
    lost = parse_ping(
        "PING 10.9.9.9 (10.9.9.9) 56(84) bytes of data.\n\n--- 10.9.9.9 ping statistics ---\n"
        "3 packets transmitted, 0 received, 100% packet loss, time 2047ms\n"
    )
    assert (lost.transmitted, lost.received, lost.loss_pct, lost.rtt_avg_ms) == (3, 0, 100.0, None)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "ping: unknown host db01",
        "PING db01 (10.0.0.1) 56(84) bytes of data.",
        "64 bytes from h: time=1e999 ms",
    ],
)
def test_unusable_text_raises_parse_error(text):
    with pytest.raises(ParseError):
        parse_ping(text)


# cockroachdb/cockroach#15702 (comment by jlauro, 2017-05-04): a full-mesh script's
# summaries, one labelled line per peer, as the stored excerpt shows them
COCKROACH_MESH = """Here is full-mesh latency of 100 packets per check:
Processing crdb1a
crdb1a to 1a rtt min/avg/max/mdev = 0.002/0.004/0.015/0.002 ms, ipg/ewma 0.025/0.004 ms
crdb1a to 1c rtt min/avg/max/mdev = 0.213/0.281/1.048/0.091 ms, ipg/ewma 0.641/0.309 ms
crdb1a to 1d rtt min/avg/max/mdev = 46.212/46.958/53.371/1.129 ms, pipe 2, ipg/ewma 47.406/47.519 ms
Connection to crdb1a closed.

Processing crdb2a
crdb2a to 1a rtt min/avg/max/mdev = 0.069/0.115/1.120/0.102 ms, ipg/ewma 0.179/0.102 ms
crdb2a to 1
"""


def test_labelled_summaries_of_a_ping_mesh_give_one_result_per_peer_and_say_where_the_paste_is_cut():
    assert detect(COCKROACH_MESH).kind == "ping_summaries"
    with pytest.raises(ParseError) as caught:
        parse_ping_summaries(COCKROACH_MESH)
    # "crdb2a to 1" is a summary line cut mid-paste: reported, the rest kept
    assert "cut" in caught.value.message and "'crdb2a to 1'" in caught.value.message
    assert caught.value.line == 10
    results = caught.value.partial
    assert [(r.from_host, r.target, r.rtt_avg_ms, r.lines["rtt_avg_ms"]) for r in results] == [
        ("crdb1a", "1a", 0.004, 3),
        ("crdb1a", "1c", 0.281, 4),
        ("crdb1a", "1d", 46.958, 5),
        ("crdb2a", "1a", 0.115, 9),
    ]
    assert results[2].rtt_mdev_ms == 1.129


def test_complete_labelled_summaries_parse_without_error():
    complete = COCKROACH_MESH.rsplit("crdb2a to 1\n", 1)[0]
    assert [r.from_host for r in parse_ping_summaries(complete)] == ["crdb1a"] * 3 + ["crdb2a"]
    # a label without "<source> to" names no source; a later "to" line of an
    # unseen source without rtt figures is prose, not a cut summary
    results = parse_ping_summaries(
        "db2: rtt min/avg/max/mdev = 0.048/0.076/0.138/0.016 ms\nwe went to lunch\n"
    )
    assert [(r.from_host, r.target) for r in results] == [(None, "db2")]


def test_a_plain_ping_is_not_read_as_labelled_summaries():
    plain = (
        "PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.\n\n--- 10.0.0.2 ping statistics ---\n"
        "2 packets transmitted, 2 received, 0% packet loss, time 1001ms\n"
        "rtt min/avg/max/mdev = 1.060/1.065/1.070/0.005 ms\n"
    )
    assert detect(plain).kind == "ping"
    with pytest.raises(ParseError):
        parse_ping_summaries(plain)


def _published(name: str) -> str:
    from tests.conftest import FIXTURES

    return (FIXTURES / "published" / name).read_text(encoding="utf-8")


def test_the_address_of_a_name_is_kept_from_the_ping_line():
    # jaywcjlove/linux-command's ping page: a name that resolves to a public address
    block = "\n".join(_published("linuxcommand-ping-public-name.txt").splitlines()[1:-1])
    r = parse_ping(block)
    assert (r.target, r.address, r.rtt_avg_ms, r.received) == ("host.1.jsdig.com", "100.42.212.8", 176.916, 4)


def test_replies_without_ping_line_or_statistics_are_a_ping():
    # RT-Thread's msh ping prints replies only (icmp_seq from 0, no statistics)
    text = _published("rtthread-msh-ping-no-statistics.txt")
    lan = text[text.index("msh />ping 192.168.10.12") :].splitlines()[1:5]
    block = "\n".join(lan)
    assert detect(block).kind == "ping"
    r = parse_ping(block)
    assert (r.target, r.address, r.replies_ms, r.rtt_avg_ms) == (
        "192.168.10.12",
        "192.168.10.12",
        [5, 1, 2, 3],
        2.75,
    )


def test_statistics_alone_name_their_peer():
    block = "\n".join(_published("chirpstack-ping-statistics-only.txt").splitlines()[:3])
    assert detect(block).kind == "ping"
    r = parse_ping(block)
    assert (r.target, r.address, r.transmitted, r.rtt_avg_ms) == (
        "192.168.128.73",
        "192.168.128.73",
        393,
        5.136,
    )


def test_replies_and_statistics_without_the_ping_line():
    lines = _published("cloudatlas-ping-replies-statistics-no-header.txt").splitlines()[1:-1]
    block = "\n".join(lines)
    assert detect(block).kind == "ping"
    r = parse_ping(block)
    assert (r.target, r.replies_ms, r.rtt_avg_ms, r.rtt_max_ms) == (
        "192.168.47.127",
        [0.198, 120, 0.493],
        2.323,
        120.569,
    )


def test_windows_ping_in_japanese():
    # linux-memo.net: a Windows PC's replies through a netem bridge, 100 ms then <1 ms
    lines = _published("linuxmemo-windows-ping-ja.txt").splitlines()[1:]
    block = "\n".join(lines)
    assert detect(block).kind == "ping"
    r = parse_ping(block)
    assert r.address == "192.168.1.13"
    assert r.replies_ms == [100] * 5 + [1] * 5
    assert r.rtt_avg_ms == 50.5
