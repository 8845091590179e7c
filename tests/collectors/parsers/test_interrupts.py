"""/proc/interrupts parser: x86, aarch64, single-CPU, this machine, and a 192-CPU file's speed."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from collectors.facts import ParseError
from collectors.parsers.interrupts import parse_interrupts
from tests.collectors.parsers.lookup import detect, for_path


def test_x86_rows_with_short_err_mis(corpus):
    irq = parse_interrupts((corpus / "interrupts" / "node_exporter_proc_interrupts.txt").read_text())
    assert irq.cpus == ["CPU0", "CPU1", "CPU2", "CPU3"]
    assert irq.rows["NMI"] == [47, 5031, 6211, 4968]
    assert irq.descriptions["NMI"] == "Non-maskable interrupts"
    assert irq.rows["ERR"] == [0] and "ERR" not in irq.descriptions
    assert irq.descriptions["0"] == "IR-IO-APIC-edge timer"


def test_aarch64_ipi_without_space(corpus):
    irq = parse_interrupts((corpus / "interrupts" / "node_exporter_proc_interrupts_aarch64.txt").read_text())
    assert len(irq.rows["IPI0"]) == 8
    assert irq.rows["IPI0"][0] == 2768808080
    assert irq.descriptions["IPI0"] == "Rescheduling interrupts"
    assert irq.descriptions["10"] == "GICv3 27 Level arch_timer"


def test_errors():
    with pytest.raises(ParseError):
        parse_interrupts("  0: 12 IO-APIC timer\n")


def _synthetic(cpus: int, rows: int) -> str:
    header = " " * 11 + "".join(f"CPU{i:<8}" for i in range(cpus))
    body = [
        f"{n:>4}: "
        + " ".join(f"{(n * 7919 + c) % 100000:>10}" for c in range(cpus))
        + f"   IR-PCI-MSI {n}-edge eth0-{n}"
        for n in range(rows)
    ]
    return "\n".join([header, *body]) + "\n"


def test_192_cpus_is_linear_and_fast():
    text = _synthetic(192, 1500)  # ~3 MB
    start = time.perf_counter()
    irq = parse_interrupts(text)
    elapsed = time.perf_counter() - start
    assert len(irq.cpus) == 192 and len(irq.rows) == 1500
    assert irq.descriptions["42"] == "IR-PCI-MSI 42-edge eth0-42"
    # generous bound for a loaded 2-core CI box; it takes ~0.2 s here
    assert elapsed < 3.0, elapsed


def test_registry(corpus):
    assert for_path("proc/interrupts").kind == "interrupts"
    assert (
        detect((corpus / "interrupts" / "insights-core_test_interrupts_INT_MULTI.txt").read_text()).kind
        == "interrupts"
    )


def test_this_machine():
    import os

    irq = parse_interrupts(Path("/proc/interrupts").read_text())
    assert len(irq.cpus) >= os.cpu_count()
    assert all(len(v) <= len(irq.cpus) for v in irq.rows.values())


def test_non_ascii_digits_are_not_counts():
    # "²".isdigit() is True but int("²") raises: a row whose cells are not counts is skipped
    irq = parse_interrupts("           CPU0       CPU1\n  0:          ²          3   timer\n  1: 4 5 kbd\n")
    assert "0" not in irq.rows
    assert irq.rows["1"] == [4, 5]
