"""General readers of the fix round after issue 26's blind round G, each on the
real output that needed it (sources in tests/fixtures/published/README.md,
``roundg/``): quoted-printable mail text, the cpuidle sysfs dump, a how-to's
notes (commands without output, Markdown fields and rules, configuration)."""

from __future__ import annotations

from collectors.archive import load
from collectors.normalise import normalise
from collectors.transcript import PROSE, command_notes, line_class, match_prompt, note_kind, read_transcript
from collectors.unused import unused_command, unused_output
from tests.conftest import FIXTURES

ROUND_G = FIXTURES / "published" / "roundg"


def _text(name: str) -> str:
    return (ROUND_G / name).read_text()


def _host(name: str):
    return load(ROUND_G / name, split=False).host


# -- 1. quoted-printable mail text


def test_quoted_printable_mail_is_decoded_and_numactl_read_with_its_distances():
    """LKML, DL385 Gen10: ``>>  0:  10  16  16  16  32  32  32  32=20``."""
    host = _host("lkml-dl385-numactl-quoted-printable.txt")
    assert not host.errors
    assert len(host.numa.nodes) == 8
    assert host.numa.distances[0] == [10, 16, 16, 16, 32, 32, 32, 32]
    assert host.numa.distances[7][7] == 10


def test_a_soft_line_break_joins_the_wrapped_line_and_keeps_both_original_lines():
    text = _text("lkml-dl385-numactl-quoted-printable.txt")
    original = text.split("\n")
    wrapped = next(i for i, line in enumerate(original) if line.endswith("mapcount:0 ="))
    norm = normalise(text)
    k = norm.first.index(wrapped)
    assert norm.lines[k].endswith("mapcount:0 mapping:000000002243743b index:0x0")
    assert norm.last[k] == wrapped + 1
    assert "quoted-printable mail text decoded" in norm.notes
    assert not any(line.rstrip().endswith("=20") for line in norm.lines)


def test_text_without_the_encodings_signs_keeps_its_equals_signs():
    """A ``sysctl -a`` line with an empty value and a shell assignment end in
    ``=``: one ``=20`` alone does not make a text quoted-printable."""
    text = "kernel.domainname =\nexport OPTS=\nnet.ipv4.tcp_rmem = 4096=20"
    assert normalise(text).lines == text.split("\n")


# -- 2. the cpuidle sysfs dump and cpupower idle-info pasted below its driver lines


def test_cpuidle_sysfs_dump_and_a_cut_idle_info_without_prompts_are_read():
    """arp142-hana 383: ``/sys/devices/system/cpu/cpu0/cpuidle/state3/disable:1`` ...
    then ``Number of idle states: 4`` without the ``CPUidle driver:`` lines above it."""
    host = _host("arp142-383-cpuidle-sysfs-idle-info-cut.txt")
    assert [a["kind"] for a in host.artifacts] == ["cpuidle_sysfs", "cpupower"]
    assert not host.errors
    assert [(s.name, s.disabled) for s in host.cpu_power.idle_states][-1] == ("C6", True)
    assert host.reading.unrecognised_lines == 0


# -- 3. a how-to's notes: commands without output, comments, sentences, Markdown fields


def test_chinese_notes_of_commands_without_output_are_prose_and_commands():
    """guguyayak/linux performance/numa.md: ``# 查看系统CPU及node信息--指令：lscpu``,
    a fence of ``numactl -H`` between Chinese sentences, a tuning story with
    ``测试执行：iozone ...`` and ``前面测试：577MB/s`` figures."""
    path = ROUND_G / "guguyayak-numa-notes-commands-zh.md"
    r = _host(path.name).reading
    assert r.unrecognised_lines == 0 and r.read_lines == 0 and not r.artifacts
    assert r.prompt_lines >= 4  # numastat -p [pid], numactl -H, time numactl ..., ps ... | xargs
    assert r.prose_lines + r.prompt_lines == r.lines


def test_a_cjk_label_naming_a_command_or_a_path_is_prose_but_a_reading_is_not():
    text = _text("guguyayak-numa-notes-commands-zh.md").splitlines()
    assert line_class(text[0]) == "prose"  # # 查看系统CPU及node信息--指令：lscpu
    assert line_class(text[1]) == "prose"  # > cpu信息目录：/sys/devices/system/cpu/
    figure = next(line for line in text if line.startswith("前面测试"))
    assert line_class(figure) == "data"  # 前面测试：577MB/s
    assert line_class("型号名称：                       Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz") == "data"


def test_a_swap_note_reads_its_outputs_and_accounts_fields_rules_config_and_commands():
    """sscp28 SWAP_CONFIGURATION.md: ``- **大小**: 2 GB``, ``---``, ``NAME TYPE SIZE
    USED PRIO`` (swapon --show), ``/swapfile none swap sw 0 0`` (fstab) and
    ``sudo swapoff /swapfile     # 禁用Swap``."""
    path = ROUND_G / "sscp28-swap-configuration-zh.md"
    host = _host(path.name)
    r = host.reading
    assert r.unrecognised_lines == 0
    assert [(u.what, u.start_line) for u in r.unused] == [("swapon", 18), ("fstab", 51)]
    assert host.meminfo is not None  # free -h
    text = path.read_text().splitlines()
    assert line_class(text[9]) == "prose"  # - **文件路径**: `/swapfile`
    assert line_class(text[2]) == "prose"  # **配置时间**: 2026-01-18 00:02 UTC


def test_commands_quoted_in_a_fence_are_notes_an_output_of_labels_is_not():
    text = _text("sscp28-swap-configuration-zh.md").splitlines()
    block = text[76:78]  # sudo swapoff / sudo swapon, each with a comment
    kinds = [note_kind(line, line_class(line)) for line in block]
    assert kinds == ["command", "command"] and command_notes(kinds)
    labels = ["架构：           x86_64", "虚拟化类型：完全", "numactl -H"]
    assert not command_notes([note_kind(line, line_class(line)) for line in labels])


# -- 4. a page cut inside a <pre> block; cpupower monitor


def test_a_closing_pre_before_any_opening_one_fences_nothing():
    """read-it-later 11542 opens with ``</code></pre></div></div>``: the
    ``<p>``/``<h3>`` prose after it is prose, not the content of a fence that
    the next ``<pre>`` would close."""
    host = _host("readitlater-11542-cpupower-monitor-html-cut-zh.txt")
    r = host.reading
    prose_start = next(
        i
        for i, line in enumerate(_text("readitlater-11542-cpupower-monitor-html-cut-zh.txt").splitlines(), 1)
        if line.startswith("<p>三家都是")
    )
    assert not any(b.start_line <= prose_start <= b.end_line for b in r.unrecognised)
    assert [(u.what, u.start_line, u.end_line) for u in r.unused] == [("cpupower monitor", 12, 17)]


def test_cpupower_monitor_is_recognised_but_not_used():
    text = _text("readitlater-11542-cpupower-monitor-html-cut-zh.txt").splitlines()
    header = "\n".join(line.replace("<span>", "").replace("</span>", "") for line in text[11:13])
    assert unused_output(header) == "cpupower monitor"
    assert unused_command("cpupower -c all monitor") == "cpupower monitor"
    assert unused_command("cpupower idle-info") is None


# -- 5. a thread's header, Markdown headings and <details>; lscpu -e in JSON, spack


def test_labels_and_title_lines_of_a_thread_are_prose():
    text = _text("archspec-83-grace-spack-arch-lscpu-cut.txt").splitlines()
    assert line_class(text[1]) == "prose"  # labels: bug
    # a title standing alone (transcript.title_heading)
    assert read_transcript("\n".join(text)).roles[2] == PROSE  # # Nvidia Grace CPU detected as ...
    assert line_class("labels: operator, platform, Priority: High") == "prose"  # firedancer 1427 (G 1119)
    assert match_prompt("# numactl -H") is not None  # a root prompt stays one


def test_a_title_line_before_an_issue_body_does_not_join_the_output_below():
    host = _host("archspec-83-grace-spack-arch-lscpu-cut.txt")
    assert not any(b.start_line <= 3 <= b.end_line for b in host.reading.unrecognised)


def test_spack_arch_is_recognised_but_not_used_and_lscpu_still_read():
    host = _host("archspec-83-grace-spack-arch-lscpu-cut.txt")
    assert [(u.what, u.start_line) for u in host.reading.unused] == [("spack", 9)]
    assert host.cpu.model_name == "Neoverse-V2"


def test_a_heading_in_words_details_markup_and_lscpu_e_json_are_accounted():
    host = _host("vllm-39191-altra-lscpu-subset-json-cut.txt")
    r = host.reading
    text = _text("vllm-39191-altra-lscpu-subset-json-cut.txt").splitlines()
    assert (
        read_transcript("\n".join(text)).roles[4] == PROSE
    )  # ## ARM bare-metal `lscpu -Je` output (follow-up)
    assert line_class(text[29]) == line_class(text[30]) == "prose"  # <details>, <summary>...</summary>
    assert [(u.what, u.start_line, u.end_line) for u in r.unused] == [("lscpu -e JSON", 34, 39)]
    assert host.cpu.sockets == 2
