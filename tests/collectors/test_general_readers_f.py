"""General readers of the fix round after issue 26's blind round F, each on the
real output that needed it (sources in tests/fixtures/published/README.md,
``roundf/``): a quote marker a web page left in the middle of a joined
blockquote line, a page's or thread's metadata lines, free and vmstat tables a
web page flattened onto one line, cpupower inside a theme's HTML blocks, an
iostat report cut at its header, and more outputs recognised but not used."""

from __future__ import annotations

from collectors.archive import load
from collectors.parsers.free import parse_free
from collectors.parsers.iostat import CUT_AT_HEADER
from collectors.parsers.vmstat import parse_vmstat_table
from collectors.transcript import line_class, read_transcript
from collectors.unused import unused_command, unused_output
from tests.conftest import FIXTURES

ROUND_F = FIXTURES / "published" / "roundf"


def _text(name: str) -> str:
    return (ROUND_F / name).read_text()


def _host(name: str):
    return load(ROUND_F / name, split=False).host


# -- 1. a blockquote line joined back with its wrapped part's marker


def test_a_quote_marker_left_mid_line_is_removed_and_the_redis_warning_read():
    """mailcow 685: ``># WARNING: ... /proc/sys/net/core/somaxconn >is set to the lower value of 128.``"""
    host = _host("mailcow-685-somaxconn-blockquote-joined.txt")
    (log,) = host.services
    assert (log.kind, [(w.code, w.value) for w in log.warnings]) == ("redis", [("somaxconn", "128")])


def test_a_redirection_on_a_quoted_line_is_kept():
    """The quoted THP advice of the founding case postgresql-thp-defrag-unresponsive
    (its SOURCE.md) pasted after the mailcow thread: its ``> /sys/...`` stay."""
    from collectors.normalise import normalise

    source = FIXTURES / "cases" / "postgresql-thp-defrag-unresponsive" / "SOURCE.md"
    advice = next(line for line in source.read_text().splitlines() if line.startswith("> echo never >"))
    text = _text("mailcow-685-somaxconn-blockquote-joined.txt") + "\n" + advice
    lines = normalise(text).lines
    assert advice[2:] in lines
    assert any(line.endswith("somaxconn is set to the lower value of 128.") for line in lines)


# -- 2. a page's or a thread's metadata is prose


def test_thread_metadata_lines_are_prose():
    text = _text("mailcow-685-somaxconn-blockquote-joined.txt").splitlines()
    assert line_class(text[0]) == "prose"  # owner/repo · issue #685 · closed · JavaScript
    assert line_class(text[3]) == "prose"  # Oratorian · description · 2017-10-26
    split = read_transcript("\n".join(text))
    assert not any(a <= 4 <= b for a, b, *_ in split.unrecognised)


def test_a_chinese_byline_with_its_reading_counter_is_prose():
    """ucloud.cn's mirror of a SegmentFault article: ``wmui / 3343人阅读`` under the title."""
    assert line_class("wmui / 3343人阅读") == "prose"
    assert line_class("Filename Type Size Used Priority/dev/sda2 partition 16777212 2097152 -1") == "data"


# -- 3. tables a web page flattened onto one line


def test_free_flattened_onto_its_header_line_is_read():
    """A Chinese swap guide: ``total used free ... availableMem: 64Gi ... 12GiSwap: 16Gi 2Gi 14G``."""
    line = _text("mffb-464078-free-swapon-vmstat-flattened-zh.txt").splitlines()[2]
    free = parse_free(line)
    gib = 1024 * 1024
    assert free.values["MemTotal"] == 64 * gib and free.values["MemAvailable"] == 12 * gib
    assert (free.values["SwapTotal"], free.values["SwapFree"]) == (16 * gib, 14 * gib)


def test_vmstat_flattened_with_its_group_line_and_one_sample_is_read():
    line = _text("mffb-464078-free-swapon-vmstat-flattened-zh.txt").splitlines()[-1]
    (sample,) = parse_vmstat_table(line).samples
    assert (sample.r, sample.swpd_kb, sample.si, sample.so, sample.id) == (1, 2048, 0, 0, 92.0)


def test_the_flattened_guide_reads_free_and_vmstat_and_knows_swapon():
    host = _host("mffb-464078-free-swapon-vmstat-flattened-zh.txt")
    assert host.meminfo.values["SwapTotal"] == 16 * 1024 * 1024
    assert len(host.vmstat.samples) == 1
    assert [u.what for u in host.reading.unused] == ["swapon"]


# -- 4. cpupower in a theme's HTML, iostat cut at its header, vmstat -s


def test_cpupower_inside_div_pre_code_span_is_read():
    """A saved Chinese article: ``<div><div><pre><code><span>(</span>intel node ...`` around the output."""
    host = _host("guevara-11543-cpupower-html-pre-code-span.txt")
    power = host.cpu_power
    assert (power.driver, set(power.governors.values())) == ("intel_pstate", {"performance"})
    assert host.reading.unrecognised_lines == 0


def test_iostat_cut_at_its_header_says_so():
    """go-carbon 397: ``# iostat -d sdb 1 2``, the banner, then ``Device:            tp`` and the cut."""
    host = _host("gocarbon-397-iostat-d-cut-at-header.txt")
    assert f"iostat: {CUT_AT_HEADER}" in [e.message for e in host.errors]
    assert host.reading.unrecognised_lines == 0


def test_vmstat_s_is_recognised_but_not_used():
    """dkluffy/dklog 33: ``vmstat -s`` (its event counters are not read)."""
    text = _text("dkluffy-33-vmstat-s.txt")
    assert unused_command("vmstat -s") == "vmstat -s"
    assert unused_output(text.split("\n", 2)[2]) == "vmstat -s"


# -- 5. outputs recognised but not used


def test_docker_version_hugeadm_and_xsos_are_recognised_but_not_used():
    docker = _text("bitnami-redis-132-docker-version-cut.txt").split("\n", 2)[2]
    assert unused_output(docker) == "docker"
    hugeadm = _host("collectd-2914-hugeadm-pool-list.txt")
    assert {u.what for u in hugeadm.reading.unused} == {"hugeadm"}
    assert hugeadm.reading.unrecognised_lines == 0
    xsos = _text("xsos-288-xsos-m-hugepages.txt").split("\n", 2)[2]
    assert unused_output(xsos) == "xsos"
    assert unused_command("xsos -m") == "xsos"
