"""General readers of the fix round after issue 26's blind round I, part B
(snapshots 1317-1334), each on the real output that needed it (sources in
tests/fixtures/published/README.md, ``roundi/``): a post's HTML table, a how-to's
tc notes (``bash$`` prompts, shell history numbers, ``//`` comments, a filter
continued inside its quotes), outputs recognised but not used (strace, lsof,
``sar -r -S``, lshw, ``ansible --version``, the SQL*Plus banner), a sentence naming a
setting as ``name=value``."""

from __future__ import annotations

from collectors.archive import load
from collectors.transcript import continued_commands, line_class, note_kind, quoted_command
from collectors.unused import unused_command, unused_output
from tests.conftest import FIXTURES

ROUND_I = FIXTURES / "published" / "roundi"


def _lines(name: str) -> list[str]:
    return (ROUND_I / name).read_text().split("\n")


def _reading(name: str):
    return load(ROUND_I / name, split=False).host.reading


# -- 1. a post's own HTML table (pandoc's <table> for a table Markdown cannot keep)


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


# -- 2. a how-to's tc notes


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


# -- 3. recognised but not used


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


# -- 4. a sentence naming a setting as name=value


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
