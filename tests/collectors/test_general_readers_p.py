"""Readers of the fix made after issue 26's blind round P, each on the round P
text that needed it and on a text of the same kind from another source (sources
in tests/fixtures/published/README.md, ``roundp/``)."""

from __future__ import annotations

from pathlib import Path

from collectors.archive import load
from tests.conftest import FIXTURES

ROUND_P = FIXTURES / "published" / "roundp"
BLIND = Path(__file__).resolve().parents[1] / "evaluation_blind" / "round-p"


def test_an_output_an_author_made_a_markdown_list_is_read_without_its_markers():
    """ancii.com (round P 2001): every line of ``iostat -x 5`` under a "- "
    marker, the prompt line included; the reports are read as iostat's."""
    post = next(BLIND.glob("2001-*")) / "post.txt"
    host = load(post, split=False).host
    assert host.reading.unrecognised_lines == 0
    assert host.disks is not None
    assert "sda" in {d.device for d in host.disks.devices}


def test_a_nested_markdown_list_holding_a_prompt_and_its_output_is_read():
    """brucemj/md_docs (another source): ``[root@mj34 3.4]# rpm -ivh ...`` as a
    list item, rpm's lines as items of a list nested under it."""
    host = load(ROUND_P / "md-docs-zabbix-rpm-ivh-dash-listed-zh.txt", split=False).host
    assert host.reading.unrecognised_lines == 0


def test_a_post_s_bullet_points_keep_their_markers_when_nothing_is_behind_them():
    """Prose bullet points are not a logger's prefix: nothing is recognised
    behind their markers, so they stay as they are (and unread as prose is)."""
    from collectors.normalise import strip_log_prefixes

    lines = ["- first point of the post", "- second point of it", "- third one"]
    assert strip_log_prefixes(lines, None, lambda run: None, lambda kind, run: False) == 0
    assert lines[0] == "- first point of the post"


def _unread(path: Path) -> int:
    return load(path, split=False).host.reading.unrecognised_lines


def test_windows_ping_statistics_label_keeps_the_summary_in_the_output():
    """always-pg.com (round P 2014): three unindented Windows pings; the label
    "Approximate round trip times in milli-seconds:" no longer ends the output
    before its Minimum/Maximum/Average line."""
    host = load(next(BLIND.glob("2014-*")) / "post.txt", split=False).host
    assert host.reading.unrecognised_lines == 0
    assert host.pings and host.pings[0].rtt_avg_ms == 20.0


def test_windows_ping_statistics_alone_are_read_with_their_counts():
    """dancol90/ESP8266Ping issue 30 (another source): Windows' statistics block
    without its replies, "Lost = 1 (20.00% loss)" read as the loss."""
    host = load(ROUND_P / "esp8266ping-30-ping-statistics-windows-form.txt", split=False).host
    assert host.reading.unrecognised_lines == 0
    ping = host.pings[0]
    assert (ping.transmitted, ping.received, ping.loss_pct, ping.rtt_max_ms) == (5, 4, 20.0, 142.0)


def test_lone_pipes_and_a_table_rule_row_without_outer_pipes_are_markup():
    """aliyun (round P 2005): ``----|:---- |-----|----`` under rows read as text;
    always-pg's neighbour beginners-network (2015) and xinuos (2013): lone ``|``
    lines a page left of a table; linuxmemo (round C 629) stays read."""
    for name in ("2005-*", "2015-*"):
        assert _unread(next(BLIND.glob(name)) / "post.txt") == 0
    older = BLIND.parent / "round-c" / "629-linuxmemo-knoppix-tc-del-windows-ping-ja" / "page.txt"
    assert _unread(older) == 0


def test_sysctl_complaints_above_its_settings_are_part_of_its_output():
    """redis issue 10916 (round P 2025): four ``sysctl: reading key ...`` lines
    above the settings (one in bold, not read as a setting): all are sysctl's output."""
    host = load(next(BLIND.glob("2025-*")) / "issue.txt", split=False).host
    assert host.sysctl is not None and host.sysctl.values["vm.overcommit_ratio"] == "50"
    assert host.reading.unrecognised_lines <= 1  # the inline-code command line alone


def test_sysctl_permission_denied_lines_of_a_user_run_are_read():
    """This machine, ``sysctl -a 2>&1 | grep ...`` run as nobody (procps-ng 4.0.2):
    two ``permission denied on key`` lines, then two settings."""
    host = load(ROUND_P / "this-machine-sysctl-a-as-nobody-usermodehelper-denied.txt", split=False).host
    assert host.reading.unrecognised_lines == 0
    assert host.sysctl.values["kernel.watchdog_thresh"] == "10"


def test_a_jvm_vitals_report_is_the_output_of_a_tool_not_used():
    """SapMachine PR 755 (round P 2031): ``Vitals:`` and its system section as a
    numbered listing; the SapMachine wiki (another source): the system legend,
    each line tagged ``[host]``. Both are jcmd's output, not used."""
    host = load(next(BLIND.glob("2031-*")) / "pr.txt", split=False).host
    assert host.reading.unrecognised_lines == 0
    host = load(ROUND_P / "sapmachine-wiki-vitals-system-legend.txt", split=False).host
    assert host.reading.unrecognised_lines == 0
    assert host.reading.unused_lines >= 7
