"""General readers of the fix rounds after issue 26's blind round I, each on
the real output that needed it (sources in tests/fixtures/published/README.md,
``roundi/``).

Part A (snapshots 1300-1316): outputs flattened onto one line by web pages that
lost their line breaks, sar reports no rule reads, prose in other languages than
English and Chinese, a Markdown heading that reads like a root prompt.

Part B (snapshots 1317-1334): a post's HTML table, a how-to's tc notes (``bash$``
prompts, shell history numbers, ``//`` comments, a filter continued inside its
quotes), outputs recognised but not used (strace, lsof, ``sar -r -S``, lshw,
``ansible --version``, the SQL*Plus banner), a sentence naming a setting as
``name=value``."""

from __future__ import annotations

from collectors.archive import load
from collectors.normalise import FLATTENED, normalise
from collectors.transcript import continued_commands, line_class, note_kind, quoted_command
from collectors.unflatten import unflattened
from collectors.unused import unused_command, unused_output
from tests.conftest import FIXTURES

ROUND_I = FIXTURES / "published" / "roundi"


def _lines(name: str) -> list[str]:
    return (ROUND_I / name).read_text().split("\n")


def _host(name: str):
    return load(ROUND_I / name, split=False).host


def _reading(name: str):
    return _host(name).reading


# -- 1. outputs flattened onto one line


def test_cat_of_a_sysfs_value_flattened_with_the_next_prompt():
    """codeprj: ``[root@CENTOS ~]# cat .../scaling_governor conservative [root@CENTOS ~]#``."""
    line = _lines("codeprj-scaling-governor-flattened-prompts-trad-zh.txt")[14]
    assert unflattened(line) == [
        "[root@CENTOS ~]# cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
        "conservative",
        "[root@CENTOS ~]#",
    ]
    host = _host("codeprj-scaling-governor-flattened-prompts-trad-zh.txt")
    assert host.cpu_power is not None and host.cpu_power.governors == {"cpu?0": "conservative"}
    assert host.cpu_power.lines == {"governor.cpu?0": 15}
    # the sentences under the prompts are prose, not the governor's output
    assert host.reading.unrecognised_lines == 0
    assert [a.start_line for a in host.reading.artifacts] == [15]


def test_numactl_hardware_flattened_behind_its_prompt():
    """unixlinux: ``# numactl --hardware available: 2 nodes (0-1) node 0 cpus: ... 1: 20 10``."""
    line = _lines("unixlinux-numactl-hardware-one-line-id.txt")[6]
    pieces = unflattened(line)
    assert pieces is not None
    assert pieces[:3] == [
        "# numactl --hardware",
        "available: 2 nodes (0-1)",
        "node 0 cpus: 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23",
    ]
    assert pieces[-4:] == ["node distances:", "node 0 1", "0: 10 20", "1: 20 10"]
    host = _host("unixlinux-numactl-hardware-one-line-id.txt")
    assert host.numa is not None
    assert [(n.node, n.size_mb, n.free_mb) for n in host.numa.nodes.values()] == [
        (0, 8157, 88),
        (1, 8191, 5176),
    ]
    assert host.numa.lines["node.1.free"] == 7  # the original line
    assert host.reading.unrecognised_lines == 0


def test_free_flattened_without_a_prompt():
    """yaodb: ``free total used free shared buff/cache available Mem: ... Swap: ...`` and ``free -h``."""
    lines = _lines("yaodb-free-flattened-fr.txt")
    assert unflattened(lines[4]) == [
        "free -h",
        "total used free shared buff/cache available",
        "Mem: 15G 507M 10G 834M 5,1G 14G",
        "Swap: 19G 0B 19G",
    ]
    host = _host("yaodb-free-flattened-fr.txt")
    assert host.meminfo is not None and host.meminfo.values["MemTotal"] == 16479408
    assert host.meminfo.values["SwapFree"] == host.meminfo.values["SwapTotal"] == 20969464
    assert host.reading.unrecognised_lines == 0


def test_cpupower_idle_info_flattened_behind_its_prompt():
    """benjr: ``cpupower idle-info CPUidle driver: none CPUidle governor: menu analyzing CPU 0: ...``."""
    line = _lines("benjr-cpupower-idle-info-flattened-trad-zh.txt")[35]
    assert unflattened(line) == [
        "[root@localhost ~]# cpupower idle-info",
        "CPUidle driver: none",
        "CPUidle governor: menu",
        "analyzing CPU 0:",
        "CPU 0: No idle states",
    ]
    host = _host("benjr-cpupower-idle-info-flattened-trad-zh.txt")
    assert host.cpu_power is not None and host.cpu_power.idle_driver == "none"
    assert host.cpu_power.idle_states == []


def test_sar_paging_report_flattened_is_recognised_but_not_used():
    """web-dev-qa: ``Sar -B 12:00:08 AM pgpgin/s ... 01:20: 06 AM ... [...]``."""
    line = _lines("web-dev-qa-sar-B-one-line-ja.txt")[8]
    pieces = unflattened(line)
    assert pieces is not None
    assert pieces[:2] == ["Sar -B", "12:00:08 AM pgpgin/s pgpgout/s fault/s majflt/s"]
    assert "01:20: 06 AM 81.37 250.02 4359.93 0.00" in pieces and pieces[-1] == "[...]"
    assert unused_command("sar -B 1 5") == "sar" and unused_command("sar -r") == "sar"
    assert unused_output(pieces[1]) == "sar"
    host = _host("web-dev-qa-sar-B-one-line-ja.txt")
    assert [(u.what, u.start_line, u.end_line) for u in host.reading.unused] == [("sar", 9, 9)]
    assert host.reading.unrecognised_lines == 0


def test_what_is_not_a_flattened_output_is_left_alone():
    assert unflattened("# numactl --hardware") is None
    assert unflattened("free total used free shared buff/cache available") is None  # no Mem: row
    assert unflattened("cat /proc/meminfo | grep Huge") is None
    assert unflattened("查看cpu0當前的策略:cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor") is None
    text = "# numactl --hardware\navailable: 1 nodes (0)\nnode 0 cpus: 0 1\n"
    assert FLATTENED not in normalise(text).notes


def test_each_piece_keeps_its_original_line():
    norm = normalise(
        "x\n# numactl -H available: 1 nodes (0) node 0 cpus: 0 1 node 0 size: 100 MB node 0 free: 10 MB\ny"
    )
    assert norm.lines[1:4] == ["# numactl -H", "available: 1 nodes (0)", "node 0 cpus: 0 1"]
    assert norm.first == norm.last == [0, 1, 1, 1, 1, 1, 2]
    assert FLATTENED in norm.notes


# -- 2. prose in other languages


def test_titles_and_sentences_in_other_languages_are_prose():
    """Indonesian and French titles without a full stop, Russian and Korean sentences."""
    assert line_class(_lines("unixlinux-numactl-hardware-one-line-id.txt")[2]) == "prose"
    assert line_class(_lines("yaodb-free-flattened-fr.txt")[7]) == "prose"
    for line in _lines("bibliboba-vmstat-prose-ru.txt"):
        assert line_class(line) in ("prose", "blank")
    korean = _lines("hongsnet-numastat-heading-sentence-ko.txt")[39]
    assert korean.startswith("`numastat")
    assert line_class(korean) == "prose"
    # column headers and flags stay data
    assert line_class("total used free shared buff/cache available") == "data"
    assert (
        line_class("fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat est tm2 ssse3")
        == "data"
    )


def test_a_hash_heading_over_a_sentence_is_not_a_root_prompt():
    """hongsnet: ``# numastat`` outside the code blocks over a Korean sentence, and
    ``# numastat Overview`` over a list of fields (``* numa_hit``)."""
    lines = _lines("hongsnet-numastat-heading-sentence-ko.txt")
    assert lines[38] == "# numastat" and line_class(lines[39]) == "prose"
    assert lines[51] == "# numastat Overview" and lines[52] == "* numa_hit"
    host = _host("hongsnet-numastat-heading-sentence-ko.txt")
    assert [(a.kind, a.start_line) for a in host.reading.artifacts] == [
        ("numactl_show", 17),
        ("numactl_hardware", 27),
        ("numastat", 43),
    ]
    assert host.numa is not None and host.numa.errors == []
    assert line_class(lines[7]) == "prose"  # [![logo](...)](...)


# -- 3. outputs of commands no rule reads: mpstat's interrupt rates, redis-cli replies


def test_mpstat_interrupt_rates_are_recognised_but_not_used():
    """ecomnet: ``# mpstat -I SUM -P ALL 5`` prints ``CPU intr/s``, no CPU utilisation table."""
    from collectors.transcript import kind_for_command

    assert kind_for_command("mpstat -I SUM -P ALL 5") is None
    assert kind_for_command("mpstat -P ALL 1 2") == "mpstat"
    assert kind_for_command("mpstat -A") == kind_for_command("mpstat -I ALL -u 1") == "mpstat"
    assert unused_command("mpstat -I SUM -P ALL 5") == "mpstat -I"
    assert unused_output("04:15:18 PM CPU intr/s\n04:15:23 PM all 62422.60") == "mpstat -I"
    host = _host("ecomnet-mpstat-I-SUM-zh.txt")
    assert host.cpu_usage is None
    assert [(u.what, u.start_line, u.end_line) for u in host.reading.unused] == [("mpstat -I", 2, 9)]
    assert host.reading.unrecognised_lines == 0


def test_redis_memory_section_replies_and_bigkeys():
    """yongjin: ``CONFIG GET maxmemory`` replies, ``--bigkeys`` lines, INFO MEMORY's fields."""
    lines = _lines("yongjin-redis-config-get-bigkeys-info-memory-zh.txt")
    assert unused_output("\n".join(lines[7:9])) == "redis-cli"  # 1) "maxmemory" / 2) "8589934592"
    assert unused_output("\n".join(lines[36:38])) == "redis-cli"  # Biggest string found '...' has ...
    assert unused_command("redis-cli --bigkeys") == "redis-cli"
    assert unused_command("CONFIG GET maxmemory-policy") == "redis-cli"
    host = _host("yongjin-redis-config-get-bigkeys-info-memory-zh.txt")
    (info,) = [s for s in host.services if s.kind == "redis"]
    assert info.settings["used_memory"] == "104857600" and info.lines["used_memory"] == 46
    assert info.settings["mem_fragmentation_ratio"] == "1.50"
    assert host.reading.unrecognised_lines == 0


def test_cpupower_usage_and_a_list_of_states():
    """benjr: ``cpupower`` alone prints its usage; the C-states are a list of the post."""
    lines = _lines("benjr-cpupower-idle-info-flattened-trad-zh.txt")
    assert unused_command("cpupower") == unused_output(lines[22]) == "cpupower usage"
    assert unused_command("cpupower idle-info") is None  # read by the cpupower parser
    assert line_class(lines[0]) == "prose"  # ![]()
    for line in lines[6:20]:  # - C0 – Operating State ... - C8 – C7 + LLC must be flushed
        assert line.startswith("- C")
        assert line_class(line) == "prose" or line == "- C3 – AltVID", line
    host = _host("benjr-cpupower-idle-info-flattened-trad-zh.txt")
    assert ("cpupower usage", 23) in [(u.what, u.start_line) for u in host.reading.unused]


# ---------------------------------------------------------------- part B

# -- B1. a post's own HTML table (pandoc's <table> for a table Markdown cannot keep)


def test_html_table_lines_of_a_post_are_prose():
    """plantegg: sysbench times per CPU in ``<table>``/``<col>``/``<td>`` lines."""
    lines = _lines("plantegg-cpu-pk-sysbench-html-table-zh.md")
    table = lines[lines.index('<table style="width:100%;">') : lines.index("</table>") + 1]
    assert len(table) == 38
    assert {line_class(line) for line in table} == {"prose"}
    assert line_class('<col style="width: 14%" />') == "prose"
    assert line_class("<td>59秒 IPC 0.56</td>") == "prose"
    # an XML document's elements stay data
    assert line_class("<vcpu placement='static'>8</vcpu>") == "data"


def test_html_table_post_has_no_unrecognised_line():
    reading = _reading("plantegg-cpu-pk-sysbench-html-table-zh.md")
    assert reading.unrecognised_lines == 0
    assert reading.prose_lines == reading.lines


# -- B2. a how-to's tc notes


def test_commands_a_how_to_quotes_behind_prompts_history_numbers_and_paths():
    lines = _lines("plantegg-tc-qdisc-netem-notes-zh.md")
    assert "bash$ tc qdisc add dev eth0 root netem delay 2ms" in lines
    assert quoted_command("bash$ tc qdisc add dev eth0 root netem delay 2ms")
    assert "  179  tc qdisc del dev eth0 root" in lines
    assert quoted_command("  179  tc qdisc del dev eth0 root")
    assert quoted_command("/sbin/tc qdisc add dev eth0 root tbf rate 500kbit latency 50ms burst 15kb")
    assert quoted_command("sudo /sbin/tc qdisc ls dev eth0")
    # a row of numbers is no command, nor is a word behind a history number
    assert not quoted_command("  179  12  34")
    assert not quoted_command("  17  Hello world")


def test_c_comments_and_steps_in_words_are_lines_of_notes():
    assert note_kind("//Server: 4 Mbit 50 ms", line_class("//Server: 4 Mbit 50 ms")) == "comment"
    step = "2.change the delay to 300ms"
    assert note_kind(step, line_class(step)) == "prose"
    assert note_kind("3.display eth0 delay setting", "data") == "prose"
    assert note_kind("2.1234 5678", "data") is None


def test_a_filter_continued_inside_its_quotes_is_one_command():
    lines = _lines("plantegg-tc-qdisc-netem-notes-zh.md")
    start = next(
        i for i, line in enumerate(lines) if line.startswith("tc filter add dev eth0 parent 1: protocol")
    )
    block = lines[start : start + 5]
    assert block[-1].rstrip().endswith("flowid 1:4")
    kinds = continued_commands(block, [note_kind(line, line_class(line)) for line in block])
    assert kinds == ["command"] * 5
    # a closed quote continues nothing
    assert continued_commands(['echo "a"', "x  y  z"], ["command", None]) == ["command", None]


def test_tc_notes_have_no_unrecognised_line():
    reading = _reading("plantegg-tc-qdisc-netem-notes-zh.md")
    assert reading.unrecognised_lines == 0
    assert reading.prompt_lines > 30


def test_commands_under_a_commented_out_command_are_notes():
    """``#tc filter add ...`` reads as a root prompt: what follows it (comments and
    ``sudo tc ... show`` quoted without output) is the script's notes."""
    reading = _reading("plantegg-tc-qdisc-bw-script-cat-zh.md")
    assert [(u.what, u.start_line) for u in reading.unused] == [("cat", 5)]
    assert reading.unrecognised_lines == 0


# -- B3. recognised but not used


def test_strace_lsof_and_sar_memory_reports_are_recognised_but_not_used():
    """ermaot: ``strace -p``, ``lsof -p`` and ``sar -r -S 1`` in a Chinese I/O case."""
    lines = _lines("ermaot-io-case-strace-lsof-sar-zh.md")
    assert unused_command("strace -p 18940") == "strace"
    assert unused_output("\n".join(lines[lines.index("strace -p 18940 ") + 1 :])) == "strace"
    assert unused_output("\n".join(lines[lines.index("lsof -p 18940 ") + 1 :])) == "lsof"
    assert unused_output("\n".join(lines[lines.index("$ sar -r -S 1") + 1 :])) == "sar"
    reading = _reading("ermaot-io-case-strace-lsof-sar-zh.md")
    assert {"strace", "lsof", "sar"} <= {u.what for u in reading.unused}
    assert reading.unrecognised_lines == 0


def test_sar_reports_a_parser_reads_are_not_in_the_catalogue():
    host = load(
        b"$ sar -u 1 1\n12:00:01 AM CPU %user %nice %system %iowait %steal %idle\n"
        b"12:00:02 AM all 1.00 0.00 1.00 0.00 0.00 98.00\n",
        name="t.txt",
        split=False,
    ).host
    assert not host.reading.unused


def test_lshw_tree_is_recognised_but_not_used():
    """lshw pull request 11: an IBM S824's tree, without its command."""
    lines = _lines("lshw-11-power8-powernv-lshw-tree-cut.txt")
    assert unused_output("\n".join(lines[lines.index("tul176p1") :])) == "lshw"
    assert unused_output("\n".join(lines[lines.index("  *-core") :])) == "lshw"
    reading = _reading("lshw-11-power8-powernv-lshw-tree-cut.txt")
    assert [(u.what, u.start_line, u.end_line) for u in reading.unused] == [("lshw", 5, 32)]
    assert reading.unrecognised_lines == 0


def test_ansible_version_and_sqlplus_banner_are_recognised_but_not_used():
    assert [u.what for u in _reading("community-mongodb-664-ansible-version.txt").unused] == ["ansible"]
    assert unused_command("ansible-playbook site.yml") == "ansible"
    reading = _reading("exadata-11-sqlplus-banner-show-parameter.txt")
    assert [u.what for u in reading.unused] == ["sqlplus", "sqlplus"]
    assert reading.unrecognised_lines == 0


# -- B4. a sentence naming a setting as name=value


def test_a_sentence_naming_a_setting_is_prose():
    """raspiblitz 3983: ``To set overcommit_memory=1 seems like the more stable option.``
    under two italic paragraphs quoting what overcommit_memory does."""
    lines = _lines("raspiblitz-3983-sentence-with-setting.txt")
    sentence = "To set overcommit_memory=1 seems like the more stable option."
    assert sentence in lines
    assert line_class(sentence) == "prose"
    reading = _reading("raspiblitz-3983-sentence-with-setting.txt")
    assert reading.unrecognised_lines == 0 and reading.read_lines == 0
    # sysctl's output, a setting alone and a Redis warning quoting a spaced one stay data
    assert line_class("vm.overcommit_memory = 1") == "data"
    assert line_class("vm.overcommit_memory=1") == "data"
    assert line_class("To fix this issue add 'vm.overcommit_memory = 1' to /etc/sysctl.conf.") == "data"
