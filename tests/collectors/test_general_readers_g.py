"""General readers of the fix round after issue 26's blind round G, each on the
real output that needed it (sources in tests/fixtures/published/README.md,
``roundg/``): quoted-printable mail text."""

from __future__ import annotations

from collectors.archive import load
from collectors.normalise import normalise
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
