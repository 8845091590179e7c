"""xl vcpu-list parser on a real Qubes paste (tests/evaluation/79-qubes-xl-vcpu-list)."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.archive import load
from collectors.facts import ParseError
from collectors.parsers import MAX_LINE_ERRORS
from collectors.parsers.xen import parse_xl_vcpu_list
from tests.collectors.parsers.lookup import detect, for_command

# https://github.com/QubesOS/qubes-issues/issues/9984 (renehoj, credit(1) scheduler);
# the stored copy is cut at the second sys-vpn-secure row
QUBES = (Path(__file__).parents[2] / "evaluation" / "79-qubes-xl-vcpu-list" / "issue.txt").read_text(
    encoding="utf-8"
)


def _table(text: str) -> str:
    return text.split("```\n", 1)[1]


def test_qubes_vcpu_list_rows_and_affinities():
    out = parse_xl_vcpu_list(_table(QUBES))
    assert len(out.vcpus) == 15
    dom0 = out.vcpus[3]
    assert (dom0.domain, dom0.domid, dom0.vcpu, dom0.cpu, dom0.state) == ("Domain-0", 0, 3, 3, "r--")
    assert dom0.time_s == 43.3
    assert (dom0.hard_affinity, dom0.soft_affinity) == ([3], None)
    usb = next(v for v in out.vcpus if v.domain == "sys-usb")
    assert usb.hard_affinity is None
    assert usb.soft_affinity == list(range(16))
    assert out.domains()[:3] == ["Domain-0", "sys-net", "sys-net-dm"]
    assert out.lines["vcpus[sys-net.1]"] == 7
    # the paste ends in a row cut after the domain name: reported, not dropped
    assert [e.line for e in out.errors] == [17]
    assert "sys-vpn-secure" in out.errors[0].message


def test_found_by_command_and_by_content():
    assert for_command("xl vcpu-list").kind == "xl_vcpu_list"
    assert for_command("sudo xl vcpu-list sys-net").kind == "xl_vcpu_list"
    spec = detect(_table(QUBES))
    assert spec is not None and spec.kind == "xl_vcpu_list"


def test_old_single_affinity_column():
    # the pre-4.5 layout (one "CPU Affinity" column, "any cpu") is the hard affinity
    out = parse_xl_vcpu_list(
        "Name                                ID  VCPU   CPU State   Time(s) CPU Affinity\n"
        "Domain-0                             0     0    2   r--     771.2 any cpu\n"
        "guest                                3     1    -   --p       0.0 4-7\n"
    )
    assert out.vcpus[0].hard_affinity is None and out.vcpus[0].soft_affinity is None
    assert (out.vcpus[1].cpu, out.vcpus[1].hard_affinity) == (None, [4, 5, 6, 7])


def test_not_vcpu_list():
    with pytest.raises(ParseError):
        parse_xl_vcpu_list("VCPU: 0\nCPU: 2\n")


def test_assembled_as_reading_only():
    host = load(QUBES.encode(), name="issue.txt", split=False).host
    assert host.xen_vcpus is not None and len(host.xen_vcpus.vcpus) == 15
    assert host.domains == []  # not libvirt domains: no kvm.* rule sees them


def test_many_unread_lines_are_reported_up_to_a_limit_then_counted():
    """A hostile paste (the Qubes table, then 100,000 fence lines) gives the
    first MAX_LINE_ERRORS lines one by one and one error counting the rest,
    not 100,000 errors (which made the parser super-linear under the fuzz test)."""
    out = parse_xl_vcpu_list(_table(QUBES) + "```\n" * 100_000)
    assert len(out.vcpus) == 15
    assert len(out.errors) == MAX_LINE_ERRORS + 1
    assert out.errors[0].line == 17 and "sys-vpn-secure" in out.errors[0].message
    assert out.errors[-1].message.endswith(f"{100_001 - MAX_LINE_ERRORS} more lines")
