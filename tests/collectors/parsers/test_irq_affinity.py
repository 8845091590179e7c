"""IRQ affinity lists: this machine's /proc/irq live (loop and grep forms), and
outputs published on the netdev / intel-wired-lan lists."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from collectors.archive import load
from collectors.facts import ParseError
from collectors.parsers.irq_affinity import mask_to_cpus, parse_irq_affinity
from tests.collectors.parsers.lookup import detect, for_command
from tests.conftest import FIXTURES, service_unavailable

LOOP = "for i in $(ls /proc/irq/ | grep -v default); do echo $i $(cat /proc/irq/$i/smp_affinity_list); done"
GREP = "grep . /proc/irq/*/smp_affinity_list"


def shell(command: str) -> str:
    return subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, timeout=60, check=False
    ).stdout


def expected() -> dict[str, str]:
    irqs = sorted(p.parent.name for p in Path("/proc/irq").glob("*/smp_affinity_list"))
    if not irqs:
        service_unavailable("no /proc/irq/*/smp_affinity_list on this machine")
    return {irq: (Path("/proc/irq") / irq / "smp_affinity_list").read_text().strip() for irq in irqs}


@pytest.mark.parametrize("command", [LOOP, GREP], ids=["loop", "grep"])
def test_live_proc_irq(command):
    want = expected()
    out = shell(command)
    facts = parse_irq_affinity(out)
    from collectors.cpulist import parse_cpulist

    assert facts.cpus == {irq: parse_cpulist(v) for irq, v in want.items()}
    assert facts.errors == []
    host = load(f"[root@db01 ~]# {command}\n{out}".encode(), name="paste.txt", split=False).host
    assert set(host.irq_affinity.cpus) == set(want) and not host.errors
    irq = sorted(want)[-1]
    assert out.splitlines()[host.irq_affinity.lines[irq] - 2].removeprefix("/proc/irq/").startswith(irq)


def test_live_grep_form_is_detected_without_a_prompt():
    out = shell(GREP)
    assert detect(out).kind == "irq_affinity"
    assert set(load(out.encode(), name="irqs.txt", split=False).host.irq_affinity.cpus) == set(expected())


def test_published_grep_with_device_directories():
    text = (FIXTURES / "network" / "grep_smp_affinity_list_idpf_20260123.txt").read_text()
    facts = parse_irq_affinity(text)
    assert facts.cpus["67"] == [*range(0, 56), *range(112, 168)]
    assert facts.cpus["72"] == [3]
    assert facts.names["68"] == "idpf-eth1-TxRx-1"
    sfc = parse_irq_affinity((FIXTURES / "network" / "grep_smp_affinity_list_sfc_202202.txt").read_text())
    assert len(sfc.cpus) == 32 and sfc.cpus["149"] == [16] and sfc.names["172"] == "0000:07:00.0-xdp-15"
    host = load(
        ("$ grep -H . /proc/irq/*/0000:07:00.0*/../smp_affinity_list\n" + text).encode(),
        name="p.txt",
        split=False,
    ).host
    assert host.irq_affinity is not None and host.irq_affinity.cpus["70"] == [1]


def test_masks_effective_lists_and_partial_lines():
    # the forms the kernel documents for /proc/irq (Documentation/core-api/irq/irq-affinity.rst)
    text = (
        "/proc/irq/32/smp_affinity:00000000,0000000f\n"
        "/proc/irq/32/effective_affinity_list:2\n"
        "44: 0-3\n"
        "cat: /proc/irq/0/smp_affinity_list: Input/output error\n"
    )
    facts = parse_irq_affinity(text)
    assert facts.cpus == {"32": [0, 1, 2, 3], "44": [0, 1, 2, 3]}
    assert facts.effective == {"32": [2]}
    (error,) = facts.errors
    assert error.line == 4 and "1 line not" in error.message
    assert mask_to_cpus("00000001,00000000") == [32]
    with pytest.raises(ParseError):
        parse_irq_affinity("hello\nworld\n")


def test_commands():
    assert for_command(LOOP).kind == "irq_affinity"
    assert for_command(GREP).kind == "irq_affinity"
    assert for_command("grep -H . /proc/irq/*/smp_affinity").kind == "irq_affinity"


@pytest.mark.parametrize(
    "make",
    [
        lambda n: "1" + " " * n + "x\n2 1\n",
        lambda n: "/proc/irq/1/smp_affinity_list:" + ",".join(["0-65535"] * (n // 8)) + "\n",
        lambda n: "/proc/irq/1/smp_affinity:" + "f" * n + "\n",
        lambda n: "/proc/irq/1/" + "a/" * n + "smp_affinity_list:1\n",
        lambda n: "24 0-1\n" * (n // 7),
    ],
    ids=["loop-spaces", "overlapping-ranges", "wide-mask", "deep-path", "many-rows"],
)
def test_hostile_lines_cost_linear_time(make):
    from tests.collectors.parsers.scaling import assert_linear

    assert_linear(parse_irq_affinity, make)
