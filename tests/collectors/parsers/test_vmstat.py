"""vmstat parser: this machine's vmstat in its layouts, pasted and alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.facts import ParseError
from collectors.parsers import REGISTRY
from collectors.parsers.vmstat import parse_vmstat
from collectors.transcript import kind_for_command
from tests.collectors.parsers.lookup import detect
from tests.collectors.parsers.machine import paste, run


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("vmstat 1 3", "vmstat"),
        ("vmstat -w 1 2", "vmstat"),
        ("vmstat -t 1 2", "vmstat"),
        ("vmstat -a 1 2", "vmstat"),
        ("vmstat -S M 1 2", "vmstat_mb"),
    ],
)
def test_this_machine_layouts(command, kind):
    out = run(command, package="procps")
    assert kind_for_command(command) == kind
    stat = REGISTRY[kind].func(out)
    count = int(command.split()[-1])
    assert len(stat.samples) == count
    assert len(stat.interval_samples) == count - 1
    for sample in stat.samples:
        assert sample.r is not None and sample.b is not None
        assert sample.si is not None and sample.so is not None
        assert 95 <= sum(getattr(sample, c) or 0 for c in ("us", "sy", "id", "wa", "st")) <= 105
        assert sample.free_kb > 0
    assert detect(out).kind == "vmstat_table"
    # the command says the unit of si/so; the table alone does not
    assert stat.swap_unit_kb == (1024.0 if "-S M" in command else 1.0)
    assert REGISTRY["vmstat_table"].func(out).swap_unit_kb is None


def test_megabyte_rows_are_converted_to_kb():
    kb = parse_vmstat(run("vmstat", package="procps")).samples[0].free_kb
    mb = REGISTRY["vmstat_mb"].func(run("vmstat -S M", package="procps")).samples[0].free_kb
    assert mb == pytest.approx(kb, rel=0.05)
    assert mb % 1024 == 0


def test_other_reports_are_not_this_parser():
    assert kind_for_command("vmstat -s") is None
    assert kind_for_command("vmstat -d") is None
    with pytest.raises(ParseError):
        parse_vmstat(run("vmstat -s", package="procps"))


def test_pasted_after_prompt():
    out = run("vmstat 1 2", package="procps")
    host = paste(("vmstat 1 2", out))
    assert not host.errors
    assert len(host.vmstat.samples) == 2
    assert host.vmstat.samples[0].line == 4  # prompt, procs banner, header, first row


def test_published_vmstat_S_m_tab_indented():
    from tests.conftest import FIXTURES

    text = (FIXTURES / "commands" / "vmstat_S_m_5.txt").read_text()
    host = paste(prose=text.replace("\t$ ", "$ ", 1))
    assert kind_for_command("vmstat -S m 5") == "vmstat_mb_si"
    samples = host.vmstat.samples
    assert [s.r for s in samples] == [1, 6, 14, 2, 3]  # the "..." elision is skipped
    assert samples[0].free_kb == round(779 * 1_000_000 / 1024)
    assert all(s.si == 0 and s.so == 0 for s in samples)
    assert samples[1].interrupts == 14335 and samples[1].cs == 5579
    table = "\n".join(text.splitlines()[1:])
    assert detect(table).kind == "vmstat_table"
    assert host.vmstat.swap_unit_kb == pytest.approx(1_000_000 / 1024)
    # the table without its `vmstat -S m 5` line: the unit of si/so is not known
    assert REGISTRY["vmstat_table"].func(table).swap_unit_kb is None


def test_table_with_its_command_line_in_the_text():
    """A bare command line above the table (no prompt) says the unit: the
    same machine's `vmstat -S M 1 2` is MiB, its `vmstat 1 2` KiB."""
    for command, unit in (("vmstat -S M 1 2", 1024.0), ("vmstat 1 2", 1.0)):
        text = command + "\n" + run(command, package="procps")
        assert REGISTRY["vmstat_table"].func(text).swap_unit_kb == unit


MEMORY = Path(__file__).resolve().parents[2] / "fixtures" / "published" / "memory"


def test_linux_2_4_vmstat_with_the_w_column():
    """The LKML 2003 SAP mail (tests/fixtures/published/README.md): procps of
    Linux 2.4 prints ``w`` after ``b``; the swap columns are still found."""
    text = (MEMORY / "lkml-2003-sap-2.4.20aa1-vmstat.txt").read_text(encoding="utf-8")
    assert detect(text).kind == "vmstat_table"
    stat = REGISTRY["vmstat_table"].func(text)
    assert stat.swap_unit_kb == 1.0  # procps 2.0 had no -S: KiB
    assert [(s.si, s.so) for s in stat.samples] == [
        (1031, 1035),
        (746, 424),
        (791, 362),
        (1585, 1091),
        (0, 0),
    ]
    assert stat.samples[0].swpd_kb == 5109180 and stat.samples[0].id == 88.0


def test_oswatcher_rows_lose_their_time_column():
    """ExaWatcher's vmstat file (an Exadata node): ``HH:MM:SS`` before every row."""
    text = (MEMORY / "exadata-oswatcher-vmstat.txt").read_text(encoding="utf-8")
    stat = REGISTRY["vmstat_table"].func(text)
    assert stat.swap_unit_kb == 1.0  # its "Collection Command: /usr/bin/vmstat  5  2" line
    assert len(stat.samples) == 11
    first = stat.samples[0]
    assert (first.r, first.swpd_kb, first.free_kb, first.si, first.so, first.cs) == (
        2,
        376,
        141000624,
        0,
        0,
        37894,
    )
