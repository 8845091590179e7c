"""Readers of the fix made after issue 26's blind round O, each on the round O
text that needed it and on a text of the same kind from another source (sources
in tests/fixtures/published/README.md, ``roundo/``): cpufrequtils' cpufreq-info,
iostat flattened onto its command's line (or glued to it), a line holding several
prompts of one session, and cpufreq-info flattened behind them. Then the classifiers
of text that is not output Casebook uses (fix-o2): the post's own text (configuration,
source code, page chrome) or the output of a tool Casebook does not read."""

from __future__ import annotations

from pathlib import Path

from collectors.archive import load
from collectors.facts import SnapshotFacts
from collectors.normalise import normalise
from collectors.transcript import read_transcript
from collectors.unflatten import unflattened
from collectors.unused import unused_output
from engine.run import analyze
from tests.conftest import FIXTURES

ROUND_O = FIXTURES / "published" / "roundo"
BLIND = Path(__file__).resolve().parents[1] / "evaluation_blind"


def _host(name: str, text: str | None = None):
    if text is not None:
        return load(text.encode(), split=False).host
    return load(ROUND_O / name, split=False).host


def _rules(host) -> dict[str, str]:
    return {f.rule: f.severity for f in analyze(SnapshotFacts(hosts=[host])).findings}


def test_cpufreq_info_output_is_read_with_its_banner_and_policy_sentences():
    """HP's RHEL 6 manual (round O 1908): ``# cpufreq-info -c 0``, cpufrequtils'
    banner and address line, the policy's sentences, the frequency steps wrapped
    onto a second line; the governor "ondemand" reaches the facts."""
    host = _host("hp-proliant-rhel6-cpufreq-info-c0-ondemand.txt")
    assert host.cpu_power.governors == {"cpu0": "ondemand"}
    assert host.cpu_power.driver == "acpi-cpufreq"
    assert host.reading.unrecognised_lines == 0
    assert "cpu.governor_not_performance" in _rules(host)


def test_cpufreq_info_with_performance_governor_is_read_and_quiet():
    """Server Fault 704456 (round O 1912): the indented form with the current
    frequency "(asserted by call to hardware)" and the cpufreq stats line."""
    host = _host("serverfault-704456-cpufreq-info-performance.txt")
    assert host.cpu_power.governors == {"cpu0": "performance"}
    assert host.reading.unrecognised_lines == 0
    assert "cpu.governor_not_performance" not in _rules(host)


def test_cpufreq_info_of_another_source_is_read_with_and_without_its_command():
    """Akraino's notes (round G 1101, another source), out of their fence: a
    ``root@host:...# cpufreq-info`` of an intel_pstate host; without the prompt
    line the output is found by cpufrequtils' banner."""
    text = (ROUND_O / "akraino-cpufreq-info-powersave-unfenced.txt").read_text(encoding="utf-8")
    for pasted in (text, text.split("\n", 1)[1]):
        host = _host("", pasted)
        assert host.cpu_power.governors == {"cpu0": "powersave", "cpu1": "powersave"}
        assert host.reading.unrecognised_lines == 0
        assert "cpu.governor_not_performance" in _rules(host)


def test_a_line_holding_several_prompts_of_one_session_is_cut_before_each():
    """e-com-net (round N 1807): ``[[email protected] ~]#lsmod | egrep kvm ...
    [[email protected] ~]#ls /dev/kvm /dev/kvm`` is two commands."""
    text = (ROUND_O / "ecomnet-lsmod-ls-two-prompts-zh.txt").read_text(encoding="utf-8")
    cut = normalise(text)  # the hidden address is read as user@host first
    assert cut.lines[:2] == [
        "[user@host ~]#lsmod | egrep kvm kvm_intel 162153 0 kvm 525259 1 kvm_intel",
        "[user@host ~]#ls /dev/kvm /dev/kvm",
    ]
    assert cut.first[:2] == [0, 0]  # both pieces keep the original line's number
    host = _host("ecomnet-lsmod-ls-two-prompts-zh.txt")
    assert host.reading.unrecognised_lines == 0


def test_a_bare_hash_before_another_word_is_not_a_second_prompt():
    """A shell comment after a command is not the session's next prompt: a bare
    ``#`` is cut only before the same program again."""
    assert unflattened("# cat /etc/sysctl.conf # vm.swappiness is set here by the installer") is None


def test_cpufreq_info_flattened_behind_several_bare_prompts_is_read():
    """kazuhooku (round O 1911): four ``# sudo cpufreq-info`` commands and the
    whole output of the last on one line: CPU 0 "performance", CPU 1 "powersave"."""
    host = _host("kazuhooku-cpufreq-info-flattened-ja.txt")
    assert host.cpu_power.governors == {"cpu0": "performance", "cpu1": "powersave"}
    assert "cpu.governor_not_performance" in _rules(host)


def test_iostat_flattened_onto_its_prompt_line_is_read_by_the_headers_width():
    """CSDN (round O 1900): ``[root@server]#iostat -x 1 Linux 2.6.33 ... avg-cpu:
    ... Device: rrqm/s ... %util sda 6.00 ... sdb ...`` on one line."""
    host = _host("csdn-iostat-x-1-flattened-zh.txt")
    devices = {d.device: (d.await_ms, d.util_pct) for d in host.disks.devices}
    assert devices == {"sda": (10.57, 84.40), "sdb": (1.58, 18.80)}
    assert "disk.latency_high" in _rules(host)


def test_iostat_glued_to_its_command_without_a_blank_is_read():
    """dtcms (round O 1913): ``# iostatLinux 4.18.0 ... (16 CPU)avg-cpu: ...
    %idle2.22 ... 94.08Device tps ...`` with the device rows on their lines."""
    host = _host("dtcms-iostat-glued-to-command-rhel8-zh.txt")
    assert host.reading.unrecognised_lines == 0
    assert host.reading.read_lines == 9  # the sentence above is prose


def test_an_iostat_device_table_flattened_before_a_markdown_table_is_cut_at_its_rows():
    """mynw (round M 1702, another source): ``Device r/s ... %util nvme0n1 50.0 ...
    95.00| 指标 | ...``: the row ends where the next table's first cell is glued."""
    host = _host("mynw-iostat-x-1-flattened-table-zh.txt")
    (disk,) = host.disks.devices
    assert (disk.device, disk.util_pct) == ("nvme0n1", 95.0)


def test_a_compose_log_wrapped_at_the_terminal_width_is_joined_back():
    """forkdelta 111 (round O 1920): ``redis_1 | ... The TCP backlog sett``, 16
    blanks, ``ing of 511 ...``: the rows of 80 columns are joined, so Redis's
    somaxconn and overcommit warnings are read."""
    text = (ROUND_O / "forkdelta-111-compose-redis-log-wrapped-80-cols.txt").read_text(encoding="utf-8")
    lines = normalise(text).lines
    assert lines[3] == (
        "1:M 11 Sep 06:15:27.018 # WARNING: The TCP backlog setting of 511 cannot be enforced because "
        "/proc/sys/net/core/somaxconn is set to the lower value of 128."
    )
    host = _host("forkdelta-111-compose-redis-log-wrapped-80-cols.txt")
    (service,) = host.services
    assert ("somaxconn", "128") in [(w.code, w.value) for w in service.warnings]
    assert "net.somaxconn_low" in _rules(host)


def test_a_compose_log_that_is_not_wrapped_keeps_its_blanks():
    """redisclustercompose 3 (round O 1919, another source): a compose log of
    Redis containers with whole lines; nothing is taken out of them."""
    text = (ROUND_O / "redisclustercompose-3-compose-redis-log-unwrapped.txt").read_text(encoding="utf-8")
    out = normalise(text)
    assert "padding of lines wrapped at the terminal's width removed" not in out.notes
    assert [line.split("| ", 1)[1] for line in text.splitlines()] == out.lines[: len(text.splitlines())]


def _blind(name: str) -> Path:
    (path,) = [p for p in BLIND.glob(f"round-*/{name}*/*") if p.name not in ("SOURCE.md", "expected.json")]
    return path


def _unused(path: Path) -> list[str]:
    return [u.what for u in load(path, split=False).host.reading.unused]


def _unrecognised(path: Path) -> int:
    return load(path, split=False).host.reading.unrecognised_lines


def test_freebsd_listen_queues_are_netstat_output_not_used():
    """nbari (round O 1904): ``netstat -Lan`` with its table apart from the command, and a
    socket's rows after a line of the author's; transmission issue 1388: the table alone."""
    assert _unused(_blind("1904-")).count("netstat") == 3
    assert _unused(ROUND_O / "transmission-1388-freebsd-netstat-l-listen-queue.txt") == ["netstat"]
    assert _unrecognised(ROUND_O / "transmission-1388-freebsd-netstat-l-listen-queue.txt") == 0


def test_an_nvidia_smi_topology_matrix_is_output_not_used():
    """johng (round O 1906) and kubernetes issue 53497: ``nvidia-smi topo -m`` without its command."""
    assert "nvidia-smi" in _unused(_blind("1906-"))
    table = (ROUND_O / "k8s-53497-nvidia-smi-topo-m.txt").read_text()
    assert unused_output(table) == "nvidia-smi"


def test_collectl_reports_and_commands_are_not_used():
    """rook issue 3132 (round O 1929): ``collectl -sD`` quoted in a comment, then its disk
    report; collectl issue 4: the header of its CPU and disk summary."""
    assert _unrecognised(_blind("1929-")) == 0
    assert "collectl" in _unused(_blind("1929-"))
    assert unused_output((ROUND_O / "collectl-4-header-cpu-disks.txt").read_text()) == "collectl"


def test_juju_status_tables_and_rows_are_not_used():
    """mongodb-operator issue 518 (round O 1924): applications' rows without their header;
    juju pull request 12643: the model, application, unit and machine tables."""
    assert "juju" in _unused(_blind("1924-"))
    assert unused_output((ROUND_O / "juju-12643-status-tables.txt").read_text()) == "juju"


def test_an_interactive_cli_session_is_not_used():
    """atlas-cli pull request 2272 (round O 1923): ``./bin/atlas deployments setup`` and the
    questions it asked, answered; github/docs issue 10600: ``gh auth login``'s questions."""
    assert "interactive CLI" in _unused(_blind("1923-"))
    gh = (ROUND_O / "github-docs-10600-gh-auth-login-questions.txt").read_text()
    assert unused_output(gh) == "interactive CLI"
    assert unused_output("? What would you like to deploy? local\n") == "interactive CLI"
    assert unused_output("? Is this ok\n") is None


def test_sysbench_progress_lines_are_not_used():
    """tidb issue 10219 (round N 1833) and sysbench-tpcc issue 48: ``[ 93s ] thds: 56 tps: ...``."""
    assert "sysbench" in _unused(_blind("1833-"))
    assert _unused(ROUND_O / "sysbench-tpcc-48-progress-lines.txt") == ["sysbench"]


def test_tidb_servers_version_blocks_are_not_used():
    """tidb issue 10219 (round N 1833), tidb issue 13942 quoting it (round L 1626) and
    pd issue 2023: ``Release Version: v2.1.8`` / ``Git Commit Hash: ...``."""
    assert "TiDB version" in _unused(_blind("1833-"))
    assert "TiDB version" in _unused(_blind("1626-"))
    assert unused_output((ROUND_O / "pd-2023-pd-server-version.txt").read_text()) == "TiDB version"


def test_a_process_list_without_psr_and_without_its_command_is_not_used():
    """tidb-style ``ps auxw`` rows under a heading (round N 1834): the ps reader takes a
    prompted list; without one, and without a PSR column, it is a ps listing not used."""
    assert "ps" in _unused(_blind("1834-"))
    rows = (
        "UID        PID  PPID  C STIME TTY          TIME CMD\nroot  1  0  0 Jul17 ?   00:00:09 /sbin/init\n"
    )
    split = read_transcript(rows)
    assert [what for *_, what in split.unused] == ["ps"]


def test_an_sql_plus_banner_whose_version_a_page_dropped_is_not_used():
    """closson (round O 1916): ``SQL*Plus: Release - Production on Tue Jul 8 11:25:14 2008``;
    the banner with its version (round I's Exadata post) stays one."""
    assert "sqlplus" in _unused(_blind("1916-"))
    exadata = FIXTURES / "published" / "roundi" / "exadata-11-sqlplus-banner-show-parameter.txt"
    banner = next(line for line in exadata.read_text().splitlines() if line.startswith("SQL*Plus"))
    assert unused_output(banner) == "sqlplus"


def test_javascript_a_post_quotes_is_its_text():
    """yzsam (round O 1903): a Node.js script, lines of it read as words between its
    pieces; practical.dev: a Redis client's example, unindented, then what it printed."""
    split = read_transcript(_blind("1903-").read_text())
    text = _blind("1903-").read_text().splitlines()
    assert not [
        u for u in split.unrecognised if "require(" in text[u[0] - 1] or "process.exit" in text[u[0] - 1]
    ]
    assert _unrecognised(ROUND_O / "practicaldev-redis-node-client-javascript.txt") == 0


def test_an_nginx_block_its_comment_cuts_apart_is_configuration():
    """nbari (round O 1904): ``server {`` / ``listen 80 backlog=4096;`` / a comment / ``}``."""
    split = read_transcript(_blind("1904-").read_text())
    assert not [u for u in split.unrecognised if u[0] >= 46]


def test_python_modules_and_interpreter_sessions_are_code():
    """A redis script's imports (round N 1806) and an interpreter session with its
    traceback (avocado-vt pull request 3753, round N 1832)."""
    assert _unrecognised(_blind("1806-")) == 0
    assert _unrecognised(_blind("1832-")) == 0


def test_a_redis_conf_a_post_quotes_is_configuration():
    """yzsam (round O 1903): ``bind 0.0.0.0`` ... ``logfile "..."``; cnblogs q 135575 (round O
    1914): ``include /path/to/local.conf``, ``loadmodule ...`` and the units its comments list
    (``1k => 1000 bytes``), their ``#`` lost; 553668.com: each directive over its comment."""
    text = _blind("1903-").read_text().splitlines()
    split = read_transcript("\n".join(text))
    assert not [u for u in split.unrecognised if text[u[0] - 1].startswith("bind ")]
    thread = _blind("1914-").read_text().splitlines()
    split = read_transcript("\n".join(thread))
    assert not [u for u in split.unrecognised if u[0] >= 11]
    assert _unrecognised(ROUND_O / "553668-redis-conf-directives-zh.txt") == 0


def test_a_grub_conf_stanza_is_configuration():
    """cuhk sfluk (round O 1910) and theko board (round N 1802): ``title ...``, ``root
    (hd0,0)``, ``kernel /vmlinuz-... elevator=noop``, ``initrd ...`` of /boot/grub/grub.conf."""
    for name, first in (("1910-", 12), ("1802-", 10)):
        split = read_transcript(_blind(name).read_text())
        assert not [u for u in split.unrecognised if first <= u[0] <= first + 2]


def test_shell_variables_of_a_configuration_file_are_configuration():
    """GRUB_CMDLINE_LINUX lines of /etc/default/grub, under a Korean label (round N 1814)
    and indented in a how-to (round A 206). A kernel's CONFIG_ options a prompt's grep
    printed (round A 211) stay that command's output, which no parser read."""
    assert _unrecognised(_blind("1814-")) == 0
    text = _blind("206-").read_text().splitlines()
    split = read_transcript("\n".join(text))
    assert not [u for u in split.unrecognised if "GRUB_CMDLINE" in text[u[0] - 1]]
    text = _blind("211-").read_text().splitlines()
    split = read_transcript("\n".join(text))
    assert [u for u in split.unrecognised if text[u[0] - 1].startswith("CONFIG_")]


def _unread_lines(name: str) -> list[str]:
    path = _blind(name)
    text = path.read_text().splitlines()
    return [text[a - 1].strip() for a, *_ in read_transcript("\n".join(text)).unrecognised]


def test_an_issue_templates_answers_are_the_posts_text():
    """cnblogs q 135575 (round O 1914): ``win10`` under ``环境``, ``6.0.6`` under
    ``Redis版本``; interactiontimeline pull request 112 (round O 1922): ``- macOS 10.14.6
    (18G87)``; mongodb-operator issue 518 (round O 1924): ``Juju 3.5.4`` under ``## Versions``;
    MISP issue 9459 (round F 1002): ``2.4.182`` under ``### MISP version``."""
    assert not {"win10", "21H1", "CentOS 8", "6.0.6"} & set(_unread_lines("1914-"))
    assert "- macOS 10.14.6 (18G87)" not in _unread_lines("1922-")
    assert "Juju 3.5.4" not in _unread_lines("1924-")
    assert not {"2.4.182", "8.8", "7.4.33"} & set(_unread_lines("1002-"))


def test_a_pages_metadata_and_footer_are_its_chrome():
    """galeracluster (round O 1905): ``Length: 221 words; Published: ...``; yzsam (round O
    1903): ``2022-03-22 20:14:00 半生瓜丶``; franckpachot (round N 1813): ``6 min readMay 12,
    2019``; w3cub (round O 1915): ``© 2019 MariaDB``; the CentOS deployment guide (round N
    1812): Red Hat's notice."""
    assert _unread_lines("1905-") == []
    assert not [line for line in _unread_lines("1903-") if line.startswith("2022-03-22")]
    assert "6 min readMay 12, 2019" not in _unread_lines("1813-")
    assert _unread_lines("1915-") == []
    assert not [line for line in _unread_lines("1812-") if line.startswith("Note: This documentation")]


def test_a_diagrams_frame_a_lone_mark_a_definition_and_a_label_are_the_posts_text():
    """johng (round O 1906): ``┌────┐`` and ``↑ ↑ ↑`` around a diagram's words; w3cub (round O
    1915): ``).``; codewithyury (round O 1909): ``: Total installed memory.``; atop issue 137
    (round O 1928): ``10sec average:``; tp-qemu (round A 215): ``Power8:``."""
    assert _unread_lines("1906-") == []
    assert not [line for line in _unread_lines("1909-") if line.startswith(": ")]
    assert _unread_lines("1928-") == []
    assert not {"Power8:", "Power9:"} & set(_unread_lines("215-"))
