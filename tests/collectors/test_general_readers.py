"""General readers of issue 26's second fix round, each on the real outputs that
needed it (sources in tests/fixtures/published/README.md): a command named by a
Markdown heading or a fence's info string, a web page's listing numbers before
every line, other shells' and tools' prompts, Redis >= 7's start-up warnings,
/proc/interrupts rows without their CPU header (and flattened onto one line),
configuration a post proposes, and more outputs recognised but not used."""

from __future__ import annotations

import pytest

from collectors.archive import load
from collectors.normalise import LOG_PREFIXES
from collectors.parsers.interrupts import NO_HEADER
from collectors.transcript import PROMPT, _fence_info_command, match_prompt, read_transcript
from collectors.unused import unused_command, unused_output
from tests.conftest import FIXTURES

PUBLISHED = FIXTURES / "published"


def _split(name: str):
    return read_transcript((PUBLISHED / name).read_text())


# -- 1. Markdown headings and fence info strings naming a command


def test_a_heading_gives_its_command_to_the_fenced_output_below_it():
    """A Gentoo T470 write-up: ``### lscpu`` then an ``ini`` fence, ``### lspci`` then another."""
    split = _split("gentoo-t470-headings-lscpu-lspci.md")
    lscpu, lspci = split.blocks
    assert (lscpu.command, lscpu.kind, lscpu.start_line) == ("lscpu", "lscpu", 4)
    assert (lspci.command, lspci.kind) == ("lspci", "lspci")
    assert split.roles[0] == PROMPT and not split.unrecognised
    host = load(PUBLISHED / "gentoo-t470-headings-lscpu-lspci.md", split=False).host
    assert (host.cpu.cpus, host.cpu.threads_per_core, host.cpu.sockets) == (4, 2, 1)
    assert host.reading.unused_lines == 0  # lspci is read (guest signals), no longer "not used"


def test_a_heading_naming_another_command_leaves_the_output_to_its_content():
    """An issue titled ``# vmstat`` whose body is an ``iostat -x`` device table
    (the export's ``[turn 0 by ...]`` line between them is the thread's, so the
    title names no command of the table: it is read by its content)."""
    (block,) = _split("cmp-issue-vmstat-title-iostat.txt").blocks
    assert (block.command, block.kind) == (None, "iostat")
    host = load(PUBLISHED / "cmp-issue-vmstat-title-iostat.txt", split=False).host
    assert "dm-11" in {d.device for d in host.disks.devices}


def test_a_fence_info_string_may_name_the_command():
    assert _fence_info_command("```console title='numactl -H'") == "numactl -H"
    assert _fence_info_command("```sh $ cat /proc/meminfo") == "cat /proc/meminfo"
    assert _fence_info_command("```bash") is None
    assert _fence_info_command("```ini") is None


# -- 2. a listing's line numbers learnt like a log prefix


def test_listing_numbers_before_a_prompt_and_its_iostat_are_removed():
    """A CSDN post whose ``iostat -x`` has the page's ``  N. `` before every line (1-16)."""
    split = _split("csdn-iostat-x-numbered-listing.txt")
    assert [n for n in split.notes if n.endswith(LOG_PREFIXES)]
    (block,) = [b for b in split.blocks if b.kind]
    assert (block.command, block.kind) == ("iostat -x", "iostat")
    host = load(PUBLISHED / "csdn-iostat-x-numbered-listing.txt", split=False).host
    assert {d.device for d in host.disks.devices} >= {"sda", "dm-0", "dm-5"}
    assert host.reading.unrecognised_lines == 0


def test_listing_numbers_before_a_redis_log_are_removed_though_the_log_reads_with_them():
    """A Chinese forum post: Redis 7's start-up log behind ``  1. `` .. ``  4. ``."""
    split = _split("cxy5-redis7-startup-log-numbered.txt")
    (block,) = split.blocks
    assert block.kind == "service_log" and (block.start_line, block.end_line) == (2, 5)
    assert not split.unrecognised


# -- 3. prompts of other shells and tools


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("PS C:\\Users\\me> Get-Process", ("shell", "Get-Process", None)),
        ("C:\\Users\\>ipconfig", ("shell", "ipconfig", None)),
        ("postgres=# show shared_buffers;", ("sql", "show shared_buffers;", None)),
        ("app=> select 1;", ("sql", "select 1;", None)),
        ("127.0.0.1:6379> info memory", ("shell", "redis-cli info memory", None)),
        ("redis 127.0.0.1:6379[2]> config get maxmemory", ("shell", "redis-cli config get maxmemory", None)),
        ("MariaDB [(none)]> show variables;", ("sql", "show variables;", None)),
        ("(venv) $ numactl -H", ("shell", "numactl -H", None)),
        ("sh-4.2# lscpu", ("shell", "lscpu", None)),
    ],
)
def test_prompts_of_other_shells_and_tools(line, expected):
    assert match_prompt(line) == expected


@pytest.mark.parametrize(
    "line", ["a=b", "x => y", "C: drive is full", "PS: see above", "10.0.0.1 is the gateway"]
)
def test_lines_like_those_prompts_are_not_prompts(line):
    assert match_prompt(line) is None


def test_windows_cmd_prompts_name_their_commands():
    """A Chinese-locale Windows ``ipconfig``, ``tracert`` and ``ping`` behind ``C:\\Users\\>``."""
    split = _split("billfeller-windows-ipconfig-tracert-zh.txt")
    commands = [b.command for b in split.blocks]
    assert commands == ["ipconfig", "tracert 10.68.55.1", "ping 10.68.55.1"]


# -- 4. Redis >= 7 start-up warnings, and configuration a post proposes


def test_redis_7_startup_warnings_are_read_with_the_thp_mode_they_imply():
    host = load(PUBLISHED / "cxy5-redis7-startup-log-numbered.txt", split=False).host
    (log,) = host.services
    warnings = {w.code: w.value for w in log.warnings}
    assert log.kind == "redis"
    assert warnings == {"somaxconn": "128", "overcommit_memory": None, "thp_enabled": "always"}


def test_a_sysctl_line_a_chinese_post_proposes_is_not_the_hosts_value():
    """A Chinese note on Redis's backlog warning, then ``在/etc/sysctl.conf文件中添加如下配置:``
    and ``net.core.somaxconn = 2048``: the value Redis found (128) is the host's."""
    host = load(PUBLISHED / "phpnote-redis-somaxconn-sysctl-proposal-zh.txt", split=False).host
    assert host.sysctl is None
    (log,) = host.services
    assert [(w.code, w.value) for w in log.warnings] == [("somaxconn", "128")]


# -- 5. /proc/interrupts rows without the CPU header


def test_interrupt_rows_flattened_without_header_are_read_by_their_width():
    """A Chinese FAQ: ``grep eth0 /proc/interrupts`` flattened by the page onto one line."""
    host = load(PUBLISHED / "sqjnqi-grep-interrupts-flattened-zh.txt", split=False).host
    irq = host.interrupts
    assert irq.cpus == ["CPU0", "CPU1", "CPU2", "CPU3"]
    assert irq.rows == {"125": [124856789, 0, 0, 0], "126": [987654321, 0, 0, 0], "127": [876543210, 0, 0, 0]}
    assert irq.descriptions["127"] == "PCI-MSI 122882-edge eth0-TxRx-2"
    assert [e.message for e in host.errors] == [f"interrupts_grep: {NO_HEADER}"]


# -- 6. outputs recognised but not used


@pytest.mark.parametrize(
    ("command", "what"),
    [
        ("tracert 10.68.55.1", "traceroute"),
        ("ipconfig /all", "ipconfig"),
        ("connmanctl services", "nmcli"),
        ("dstat -tdD sda --disk-wait", "dstat"),
        ("whoami", "whoami"),
        ("ip r", "ip"),
    ],
)
def test_more_commands_are_recognised_as_not_used(command, what):
    assert unused_command(command) == what


def test_windows_ipconfig_and_tracert_outputs_are_recognised_by_their_shape():
    text = (PUBLISHED / "billfeller-windows-ipconfig-tracert-zh.txt").read_text()
    assert unused_output(text.split("\n", 2)[2]) == "ipconfig"
    assert unused_output("通过最多 30 个跃点跟踪到 10.68.55.1 的路由") == "traceroute"
