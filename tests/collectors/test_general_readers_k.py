"""General readers of the fix rounds after issue 26's blind round K, each on
the real output that needed it and on a second real input of the same kind
from elsewhere (sources in tests/fixtures/published/README.md, ``roundk/``).

readk (outputs, prompts, parsers): Gentoo's root prompt and zsh's right-hand
prompt, commands quoted without a prompt above their output, POWER's
/proc/cpuinfo, full-width colons in sysstat headers, vmstat's header in single
spaces, iostat's basic report, System V sar and Solaris/AIX vmstat (not used),
kernel log lines not about NUMA (not used), a cat of governors with an
author's elisions."""

from __future__ import annotations

from collectors.archive import load
from collectors.normalise import normalise
from collectors.parsers.cpuinfo import parse_cpuinfo
from collectors.transcript import line_class, match_prompt, split_transcript
from collectors.unused import unused_output
from tests.conftest import FIXTURES

ROUND_K = FIXTURES / "published" / "roundk"


def _text(name: str) -> str:
    return (ROUND_K / name).read_text()


def _host(name: str):
    return load(ROUND_K / name, split=False).host


def _blocks(name: str) -> list[tuple[int, int, str | None, str | None]]:
    """``(start, end, command, kind)`` of each block the splitter made of the fixture."""
    return [(b.start_line, b.end_line, b.command, b.kind) for b in split_transcript(_text(name))]


# -- readk 1. prompts


def test_readk_gentoo_root_prompt():
    """dbasquare: ``garfield ~ # sysctl vm.swappiness``; the Gentoo livecd: ``livecd ~ # dmesg``."""
    assert match_prompt("garfield ~ # sysctl vm.swappiness") == ("shell", "sysctl vm.swappiness", "garfield")
    assert match_prompt('livecd ~ # dmesg | grep "SCSI"') == ("shell", 'dmesg | grep "SCSI"', "livecd")
    assert match_prompt("livecd /mnt/gentoo # lscpu") == ("shell", "lscpu", "livecd")
    # a sentence with a "#" is not a prompt: what follows must be a command
    assert match_prompt("The ~ # sign") is None
    host = _host("dbasquare-garfield-sysctl-swappiness.txt")
    assert host.reading.unrecognised_lines == 0
    assert [(a.start_line, a.kind) for a in host.reading.artifacts] == [(2, "sysctl")]


def test_readk_gentoo_prompt_over_kernel_log_lines():
    """luispa (Spanish Gentoo guide): the prompt is found and its dmesg lines are not used."""
    reading = _host("luispa-gentoo-nuc-livecd-dmesg-scsi-es.txt").reading
    assert reading.unrecognised_lines == 0
    assert [(u.what, u.start_line) for u in reading.unused] == [("dmesg", 2)]


def test_readk_zsh_right_prompt_is_not_part_of_the_command():
    """ruapu PR 30: ``user@host ~/dir <padding> [14:58:16]`` then ``> $lscpu <padding> [±master]``."""
    lines = normalise(_text("ruapu-30-zsh-right-prompt-lscpu.txt")).lines
    assert match_prompt(lines[1]) == ("shell", "", "arch6k")
    assert match_prompt(lines[2]) == ("shell", "lscpu", None)
    assert _blocks("ruapu-30-zsh-right-prompt-lscpu.txt") == [(4, 25, "lscpu", "lscpu")]
    # the cut last prompt line too
    last = [line for line in lines if line.strip()][-1]
    assert last.endswith("[14:52:36") and match_prompt(last) == ("shell", "", "arch6k")


def test_readk_right_prompt_of_another_theme():
    """tide issue 546: ``~/.dotfiles main !12 ?5 <padding> 03:04:47 PM``, the first line of a
    two-line prompt (a directory and its git status, the time on the right)."""
    line = "~/.dotfiles main !12 ?5" + " " * 126 + "03:04:47 PM"
    assert match_prompt(line) == ("shell", "", None)
    # a row that happens to end in a bracket after spaces is no prompt
    assert match_prompt("node 0 size: 1024 MB          [x]") is None


# -- readk 2. commands without a prompt above their output


def test_readk_bare_cat_over_the_value_it_printed():
    """datahunter: ``cat  /sys/block/sda/queue/scheduler`` then ``noop [anticipatory] deadline cfq``."""
    assert _blocks("datahunter-io-scheduler-cat-bare-zh.txt")[0] == (
        5,
        5,
        "cat  /sys/block/sda/queue/scheduler",
        "io_scheduler",
    )
    host = _host("datahunter-io-scheduler-cat-bare-zh.txt")
    assert host.reading.unrecognised_lines == 0


def test_readk_bare_vmstat_over_its_single_row():
    """serverdevworker: ``vmstat 1``, its two header lines, one row."""
    assert _blocks("serverdevworker-vmstat-1-bare-single-row.txt") == [(4, 6, "vmstat 1", "vmstat")]


def test_readk_bare_commands_one_under_the_other():
    """CentOS notes: ``vmstat 1`` then ``vmstat 1 -S m``: the table is the second one's (MB)."""
    assert _blocks("centos-notes-vmstat-bare-commands-zh.txt") == [(6, 9, "vmstat 1 -S m", "vmstat_mb_si")]


def test_readk_bare_ping_first_in_a_fence():
    """passwall2 issue 391: ``ping baidu.com`` first in a fence, its Chinese-locale output."""
    assert _blocks("passwall2-391-ping-bare-in-fence-zh.txt") == [(4, 10, "ping baidu.com", "ping")]


# -- readk 3. parsers


def test_readk_power9_cpuinfo_cut_gives_the_model_not_a_count():
    """pegasus issue 1517: processors 0-2 of a Summit node, the third cut at ``clock``."""
    topo = parse_cpuinfo(_text("pegasus-1517-summit-power9-proc-cpuinfo-cut.txt"))
    assert topo.model_name == "POWER9, altivec supported"
    assert topo.cpus is None  # no trailer: an excerpt of 176 CPUs, not three


def test_readk_power7_cpuinfo_whole_file_gives_the_count():
    """util-linux's lscpu dump ppc64-POWER7-64cpu: 64 processor blocks and the trailer."""
    topo = parse_cpuinfo(_text("util-linux-ppc64-power7-64cpu-proc-cpuinfo.txt"))
    assert (topo.model_name, topo.cpus) == ("POWER7 (architected), altivec supported", 64)
    assert topo.lines["model_name"] == 2


def test_readk_fullwidth_colons_in_iostat_headers():
    """tonghao notes 52 (basic report) and a jianshu post (iostat -x, prompt with ``：`` too)."""
    host = _host("tonghao-52-iostat-fullwidth-colons-zh.txt")
    assert [d.device for d in host.disks.devices] == ["hda"]
    assert [(u.what, u.start_line) for u in host.reading.unused] == [("iostat -c", 6)]
    assert host.reading.unrecognised_lines == 0
    disks = _host("jianshu-robert-iostat-x-fullwidth-colons-zh.txt").disks
    assert [(d.device, d.await_ms, d.util_pct) for d in disks.devices] == [("sda", 15.45, 2.94)]
    # only sysstat's headers: a sentence's full-width colon stays
    assert "说明：这是" in normalise("avg-cpu： %user %idle\n说明：这是").lines


def test_readk_iostat_basic_report_el6():
    """muxinu (devhost32, 32 CPUs) and Colin's linuxtools (colin, 4 CPUs): ``Device: tps Blk_read/s``."""
    host = _host("muxinu-iostat-el6-basic-report-zh.txt")
    assert [d.device for d in host.disks.devices] == ["sda", "sdb"]
    disks = _host("linuxtools-colin-iostat-el6-basic-report-zh.txt").disks
    assert [d.device for d in disks.devices] == ["sda", "dm-0", "dm-1", "dm-2"]
    assert all(d.await_ms is None for d in disks.devices)  # no latency in the basic report


def test_readk_vmstat_header_in_single_spaces_is_data():
    """pc-freak (``debian:~# vmstat 5``): ``in`` among vmstat's columns is not a sentence's word."""
    assert line_class("r b swpd free buff cache si so bi bo in cs us sy id wa") == "data"
    assert line_class("r b w swap free re mf pi po fr de sr s0 s1 sd in sy cs us sy id") == "data"
    assert line_class("I am in it so we go on to do it as we can now.") == "prose"
    host = _host("pcfreak-debian-vmstat-5-header-single-spaced.txt")
    assert [(s.si, s.so) for s in host.vmstat.samples][:2] == [(1, 1), (0, 0)]
    assert host.reading.unrecognised_lines == 0


def test_readk_cat_of_governors_after_a_sentence_with_elisions():
    """onestepcloser: a Korean sentence between the cat and its ``powersave`` lines, ``:`` elisions."""
    host = _host("onestepcloser-scaling-governor-powersave-elided-ko.txt")
    assert set(host.cpu_power.governors.values()) == {"powersave"}
    assert len(host.cpu_power.governors) == 12
    assert [(a.start_line, a.end_line, a.kind) for a in host.reading.artifacts] == [
        (7, 21, "scaling_governor")
    ]


def test_readk_cat_of_governors_one_a_line():
    """linux-pm (Marcos Dione, 2025): eight ``powersave`` lines, then eight ``performance`` lines."""
    reading = _host("linux-pm-dione-scaling-governor-cat-powersave.txt").reading
    spans = [(a.start_line, a.end_line) for a in reading.artifacts if a.kind == "scaling_governor"]
    assert (7, 14) in spans and (22, 29) in spans


# -- readk 4. outputs Casebook does not use


def test_readk_system_v_sar_is_not_used():
    """SCO OpenServer 5.0.7 (``sar -w``) and Solaris 10 (``sar -q``): not sysstat's columns."""
    reading = _host("sco-openserver-sar-w-swapping.txt").reading
    assert [u.what for u in reading.unused] == ["sar (System V)"]
    assert not reading.artifacts and reading.unrecognised_lines == 0
    lines = _text("oracle-solaris10-sar-q-queue.txt").split("\n")
    assert unused_output("\n".join(lines[3:])) == "sar (System V)"
    assert not _host("oracle-solaris10-sar-q-queue.txt").reading.artifacts


def test_readk_solaris_vmstat_is_not_used_even_behind_its_command():
    """Sybase IQ manual (``> vmstat 2 3``) and Solaris Application Programming (``$ vmstat 1``)."""
    for name in ("sybase-iq-solaris-vmstat-2-3.txt", "informit-solaris-vmstat-1.txt"):
        reading = _host(name).reading
        assert [u.what for u in reading.unused] == ["vmstat (Solaris, AIX)"], name
        assert not reading.artifacts and reading.unrecognised_lines == 0, name


def test_readk_kernel_log_lines_not_about_numa_are_not_used():
    """darrenkwondev (Korean notes, aarch64 VM): the command line is read, the other lines not used."""
    reading = _host("darrenkwondev-ubuntu-dmesg-kernel-ko.txt").reading
    assert [(a.start_line, a.kind) for a in reading.artifacts] == [(9, "cmdline")]
    assert {u.what for u in reading.unused} == {"dmesg"}
    assert reading.unrecognised_lines == 0
    assert unused_output("[Mon Jan  1 10:00:00 2024] usb 1-1: new high-speed USB device") == "dmesg"
