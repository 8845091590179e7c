"""General readers of the fix round after issue 26's blind round L (branch
``gen``), each on the real output that needed it and, where one exists, on a
second real input of the same kind from another round or from this machine
(sources in tests/fixtures/published/README.md, ``roundl/``).

readl: a program's output at a shell prompt or under a lone command line is
its output, not used (no catalogue row needed); shell loops and tests quoted in
notes are commands; options documented in words, usage text, syslog lines,
captions, titles, typographic bullets, issue references, thread marks, reading
times and setext underlines read as what they are; a bare command's label colon
and an author's caret marks under a scheduler value; Redis's THP warning quoted
with ``WARNING:`` and its advice wrapped onto the next line; sentences naming a
setting and references with a version word are prose; cpupower's state headers
no longer make a post's ``Before:`` data."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from collectors.archive import load
from collectors.facts import SnapshotFacts
from collectors.transcript import (
    PROMPT,
    PROSE,
    READ,
    UNRECOGNISED,
    UNUSED,
    caption_line,
    line_class,
    program_name,
    quoted_command,
    read_transcript,
)
from collectors.unused import unused_output
from engine.run import analyze
from tests.conftest import FIXTURES

ROUND_L = FIXTURES / "published" / "roundl"
HOST = FIXTURES / "published" / "host"

# one letter a line for what the splitter read it as
_ROLE_LETTERS = {PROSE: ".", UNRECOGNISED: "?", UNUSED: "u", PROMPT: ">", READ: "r"}


def _text(name: str) -> str:
    return (ROUND_L / name).read_text(encoding="utf-8")


def _host(path: Path):
    return load(path, split=False).host


def _roles(text: str) -> str:
    """What each line of ``text`` was read as, one letter a line (``.`` prose,
    ``>`` prompt, ``r`` read, ``u`` not used, ``?`` unrecognised)."""
    roles = read_transcript(text).roles
    return "".join(_ROLE_LETTERS[r] for r in roles[: len(text.splitlines())])


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.txt"
    path.write_text(text, encoding="utf-8")
    return path


def _run(*argv: str) -> str:
    return subprocess.run(list(argv), capture_output=True, text=True, check=True).stdout


# -- readl 1. a program run at a shell prompt that nothing reads


def test_readl_program_at_a_prompt_that_nothing_reads_is_its_output_not_used(tmp_path):
    """This machine's ``findmnt /`` and ``lsipc`` behind a root prompt: no parser and no
    catalogue row reads them; the prompt names the program that printed each."""
    findmnt, lsipc = _run("findmnt", "/"), _run("lsipc")
    text = f"[root@h ~]# findmnt /\n{findmnt}[root@h ~]# lsipc\n{lsipc}"
    reading = _host(_write(tmp_path, text)).reading
    second = 2 + len(findmnt.splitlines())
    assert [(u.what, u.start_line) for u in reading.unused] == [("findmnt", 2), ("lsipc", second + 1)]
    assert reading.unrecognised_lines == 0 and reading.prompt_lines == 2
    assert program_name("sudo lsscsi -g") == "lsscsi"
    assert program_name("/usr/bin/findmnt /") == "findmnt"


def test_readl_shell_words_and_sentences_name_no_program():
    assert program_name("for i in 1 2; do echo $i; done") is None
    assert program_name("FOO=1 bar") is None
    assert program_name("Note that the disk is busy") is None


# (a file reader at a prompt, ``grep -c processor /proc/cpuinfo``, stays unrecognised:
# tests/collectors/parsers/test_cpuinfo.py)


# -- readl 2. a lone command line without a prompt over its output


def test_readl_lone_command_without_a_prompt_over_output_nothing_reads(tmp_path):
    """This machine's ``findmnt /`` and ``lsmem -b`` each under its command typed alone, no
    prompt: the command line is a prompt line, what it printed is its output, not used."""
    for argv in (("findmnt", "/"), ("lsmem", "-b")):
        output = _run(*argv)
        text = f"{' '.join(argv)}\n{output}"
        assert _roles(text) == ">" + "u" * len(output.splitlines()), argv
        reading = _host(_write(tmp_path, text)).reading
        assert [(u.what, u.start_line) for u in reading.unused] == [(argv[0], 2)]
        assert reading.unrecognised_lines == 0 and reading.prompt_lines == 1


def test_readl_lone_one_word_command_over_output_nothing_reads():
    """``lsmem`` alone on its line is prose by its class (one word): with an output's
    line under it, it is the command of that output (Splitter.word_command)."""
    output = _run("lsmem")
    assert _roles(f"lsmem\n{output}") == ">" + "u" * len(output.splitlines())


# -- readl 3. shell loops and tests quoted in notes


def test_readl_for_loop_quoted_in_korean_notes_is_commands():
    """onestepcloser (round K 1510): ``for CPU in /sys/.../cpu[0-9]*; do``, ``echo
    performance | sudo tee ...``, ``done`` under a Korean line."""
    assert quoted_command("for CPU in /sys/devices/system/cpu/cpu[0-9]*; do")
    assert quoted_command("done")
    # the loop's lines are commands (or, for ``done``, the notes' text): nothing unrecognised
    assert _roles(_text("onestepcloser-governor-for-loop-ko.txt")) == ".>>."


def test_readl_for_loop_with_an_if_test_in_a_fence_is_commands():
    """chinabin's isolation notes (round A 206): ``for I in $(ls /proc/irq)``, ``do``, ``if
    [[ -d "/proc/irq/$I" ]]``, ``then``, two echoes, ``fi``, ``done`` in a bash fence."""
    for line in ("for I in $(ls /proc/irq)", "do", 'if [[ -d "/proc/irq/$I" ]]', "then", "fi"):
        assert quoted_command(line), line
    assert _roles(_text("chinabin-irq-affinity-for-if-loop-zh.md")) == "..>>>>>>>>."


# -- readl 4. options documented in words, usage text


def test_readl_options_documented_in_chinese_in_a_fence_are_prose():
    """chinabin's numastat note (round A 201): ``-c：紧凑的显示信息...`` to ``-z: 忽略...``."""
    text = _text("chinabin-numastat-options-fenced-zh.md")
    options = text.splitlines()[1:-1]
    assert len(options) == 6 and all(line_class(line) == "prose" for line in options)
    assert _roles(text) == "." * 8


def test_readl_perf_option_documented_in_chinese_is_prose():
    """chinabin's isolation notes (round A 206, line 289): ``--switch-events: 上下文切换次数``."""
    line = _text("chinabin-perf-switch-events-notes-zh.md").splitlines()[1]
    assert line == "--switch-events: 上下文切换次数"
    assert line_class(line) == "prose"


@pytest.mark.xfail(
    strict=True,
    reason="readl gap: the fenced notes after the option (TLB shootdowns: /proc/interrupts, "
    "perf stat lines) leave lines 289-297 of round A 206 unrecognised",
)
def test_readl_perf_notes_around_the_option_are_read():
    assert "?" not in _roles(_text("chinabin-perf-switch-events-notes-zh.md"))


def test_readl_numactl_usage_text_in_a_fence_is_not_used():
    """chinabin's numactl note (round A 205): ``usage: numactl [--all | -a] ...`` to
    ``<length> can have g (GB), m (MB) or k (KB) suffixes``, in a fence."""
    text = _text("chinabin-numactl-usage-fenced.md")
    assert unused_output(text.split("\n", 1)[1]) == "usage text"
    roles = _roles(text)
    assert roles[0] == "." and roles[1:26] == "u" * 25  # the usage text, lines 2-26
    assert "?" not in roles


def _numactl_help() -> str:
    """This machine's ``numactl --help``: it exits 1 and prints its usage on stderr."""
    done = subprocess.run(["numactl", "--help"], capture_output=True, text=True, check=False)
    assert done.returncode != 0 and done.stderr.startswith("numactl: unrecognized option")
    return done.stderr


def test_readl_numactl_help_on_this_machine_starts_as_usage_text(tmp_path):
    usage = _numactl_help()
    reading = _host(_write(tmp_path, f"$ numactl --help\n{usage}")).reading
    assert [(u.what, u.start_line) for u in reading.unused] == [("usage text", 2)]


@pytest.mark.xfail(
    strict=True,
    reason="readl gap: the usage block of this machine's numactl --help ends at "
    "'<nodes> is a comma delimited list ...'; three of its later lines are unrecognised",
)
def test_readl_numactl_help_on_this_machine_is_all_usage_text(tmp_path):
    usage = _numactl_help()
    reading = _host(_write(tmp_path, f"$ numactl --help\n{usage}")).reading
    assert reading.unrecognised_lines == 0


# -- readl 5. syslog lines


def test_readl_kernel_lines_of_a_system_log_are_not_used():
    """cloudatlas's mpt2sas note (round C 615): twelve ``Feb 15 20:05:28 host1.example.com
    kernel: : ...`` lines in a fence."""
    text = _text("cloudatlas-mpt2sas-kern-log-zh.md")
    assert unused_output(text.splitlines()[1]) == "system log"
    reading = _host(ROUND_L / "cloudatlas-mpt2sas-kern-log-zh.md").reading
    assert [(u.what, u.start_line, u.end_line) for u in reading.unused] == [("system log", 2, 13)]
    assert reading.unrecognised_lines == 0


# -- readl 6. captions, titles, bullets, issue references, thread marks, underlines


def test_readl_caption_over_an_image_and_an_output_is_prose():
    """TiDB issue 9069 (round L 1625): ``Disk IO(sdb) info of tikv-3`` over a screenshot
    and the ``iostat -x`` report; a row of the inventory above is not a caption."""
    assert caption_line("Disk IO(sdb) info of tikv-3")
    assert not caption_line("tidb-1   24C 128G 4TSAS")
    assert _roles(_text("tidb-9069-caption-over-iostat-x.txt")) == "......rrr."
    host = _host(ROUND_L / "tidb-9069-caption-over-iostat-x.txt")
    assert [d.device for d in host.disks.devices] == ["sda", "sdb"]


def test_readl_titles_of_a_page_are_prose():
    """Gábor Samu's ``NUMA on POWER9`` (round L 1617) and Cloudpods' ``Virtual Machine
    Network Card Multi-Queue`` (round L 1600)."""
    assert caption_line("NUMA on POWER9")
    assert caption_line("Virtual Machine Network Card Multi-Queue")
    assert _roles(_text("cloudpods-multiqueue-title.txt")) == "....."


def test_readl_reading_time_and_typographic_bullets_are_prose():
    """Gábor Samu (round L 1617): ``Jan 24, 2022 14 min read``, then ``  • CentOS Stream 8
    (ppc64le)`` to ``  • NVIDIA V100 GPU``."""
    text = _text("gaborsamu-power9-title-reading-time-bullets.txt")
    lines = text.splitlines()
    assert line_class(lines[3]) == "prose"
    bullets = lines[13:19]
    assert all(b.lstrip().startswith("•") and line_class(b) == "prose" for b in bullets)
    assert _roles(text) == "." * 21


def test_readl_issue_reference_is_prose():
    """picoCTF PR 178 (round L 1630): ``Resolves #166``."""
    line = _text("picoctf-178-resolves-before-after-thp.txt").splitlines()[4]
    assert line == "Resolves #166" and line_class(line) == "prose"


def test_readl_thread_mark_is_prose_and_the_top_screen_under_it_is_read():
    """TiDB issue 5040 (round L 1627): ``[turn 3 by Darren, continued]`` over a ``top`` screen."""
    text = _text("tidb-5040-turn-mark-top.txt")
    assert line_class(text.splitlines()[4]) == "prose"
    assert _roles(text) == ".......rrr"


def test_readl_setext_underline_under_a_title_is_prose():
    """UC course notes (round L 1602): ``Disk Schedulers for Linux`` over ``-----...``."""
    assert _roles(_text("uc-notes-setext-scheduler-label-carets.txt"))[:3] == "..."


# -- readl 7. a bare command with a label colon over its value and caret marks


def test_readl_bare_cat_with_a_label_colon_and_carets_gives_the_scheduler():
    """UC course notes (round L 1602): ``cat /sys/block/sda/queue/scheduler:``, ``noop
    deadline [cfq]``, ``^^^^^`` and ``current (and default)`` under it."""
    text = _text("uc-notes-setext-scheduler-label-carets.txt")
    assert _roles(text) == "...>rr.."
    host = _host(ROUND_L / "uc-notes-setext-scheduler-label-carets.txt")
    assert host.io_schedulers.active == {"sda": "cfq"}
    assert host.io_schedulers.available == {"sda": ["noop", "deadline", "cfq"]}
    (finding,) = [f for f in analyze(SnapshotFacts(hosts=[host])).findings if f.rule == "disk.io_scheduler"]
    assert (finding.values["device"], finding.values["scheduler"], finding.severity) == ("sda", "cfq", "info")


# -- readl 8. Redis's THP warning quoted with "WARNING:" and wrapped advice


def test_readl_redis_thp_warning_with_a_colon_and_wrapped_advice():
    """Netdata's Redis guide (round L 1612): ``WARNING: You have Transparent Huge Pages
    (THP) support enabled in your kernel.``, the ``echo madvise`` advice two lines on."""
    host = _host(ROUND_L / "netdata-redis-thp-warning-colon-wrapped.txt")
    (log,) = host.services
    assert log.kind == "redis"
    assert [(w.code, w.value, w.line) for w in log.warnings] == [("thp_enabled", "always", 2)]


# -- readl 9. sentences naming a setting, references with a version word


def test_readl_sentence_naming_a_spaced_setting_is_prose():
    """docs-cn issue 14633 (round L 1634, line 40): ``Prior to RHEL 6.4: vm.swappiness = 0
    disables swapping ...``; the setting alone stays data."""
    text = _text("pingcap-docs-cn-14633-rhel-swappiness-sentence.txt")
    assert line_class(text.splitlines()[4]) == "prose"
    assert _roles(text) == "....."
    assert line_class("vm.swappiness = 60") == "data"


def test_readl_reference_with_a_version_word_is_prose():
    """harbor-operator issue 569 (round L 1622): ``Redis 5.0 related issue: https://...``."""
    line = _text("harbor-operator-569-redis-version-reference.txt").splitlines()[1]
    assert line.startswith("Redis 5.0 related issue: https://") and line_class(line) == "prose"


# -- readl 10. "Before:"/"After:" over fences; cpupower's state headers


def test_readl_before_and_after_over_fences_are_prose():
    """picoCTF PR 178 (round L 1630): ``Before:`` and ``After:`` over the THP sysfs cats."""
    text = _text("picoctf-178-resolves-before-after-thp.txt")
    lines = text.splitlines()
    assert (lines[6], lines[13]) == ("Before:", "After:")
    assert _roles(text) == "........>r>r...>r>r."
    host = _host(ROUND_L / "picoctf-178-resolves-before-after-thp.txt")
    assert [(a.start_line, a.kind) for a in host.reading.artifacts] == [
        (10, "thp_defrag"),
        (12, "thp_enabled"),
        (17, "thp_defrag"),
        (19, "thp_enabled"),
    ]


def test_readl_cpupower_state_headers_are_still_its_output():
    """``POLL:`` to ``C6:`` (dcpae643du01) and ``C3 (DISABLED) :``, ``C6 (DISABLED) :`` (a
    Chinese note) stay inside cpupower idle-info's output."""
    reading = _host(HOST / "dcpae643du01-cpupower-idle-info.txt").reading
    assert [(a.start_line, a.end_line, a.kind) for a in reading.artifacts] == [(2, 27, "cpupower")]
    assert reading.unrecognised_lines == 0
    text = (HOST / "zh-notes-cpupower-performance-cstates-off.txt").read_text(encoding="utf-8")
    disabled = [i for i, line in enumerate(text.splitlines(), start=1) if "(DISABLED)" in line]
    assert disabled == [35, 40]
    spans = [
        (a.start_line, a.end_line)
        for a in _host(HOST / "zh-notes-cpupower-performance-cstates-off.txt").reading.artifacts
    ]
    assert any(a <= 35 and b >= 40 for a, b in spans)


def test_readl_a_setting_read_again_after_a_change_is_the_hosts_state_now():
    """Johan Louwers's Oracle Linux notes (round L 1601): the scheduler file read three
    times, ``[deadline]`` twice, then ``[cfq]`` after the author's change: the later
    reading is the host's state, and the evidence cites its line."""
    host = _host(ROUND_L / "johanlouwers-scheduler-read-again.txt")
    assert host.io_schedulers.active == {"sda": "cfq"}
    assert host.io_schedulers.lines == {"scheduler.sda": 10}
    (finding,) = [f for f in analyze(SnapshotFacts(hosts=[host])).findings if f.rule == "disk.io_scheduler"]
    assert [(e.value, e.line) for e in finding.evidence] == [("cfq", 10)]
