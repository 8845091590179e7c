"""Xen toolstack output: ``xl vcpu-list`` (the docstring shows it).

Reading only: Xen domains are not libvirt domains, so the rows are kept as
:class:`~collectors.facts.XenVcpuList` and no ``kvm.*`` rule reads them.
"""

from __future__ import annotations

import re

from collectors.cpulist import parse_cpulist
from collectors.facts import ArtifactError, ParseError, XenVcpu, XenVcpuList
from collectors.parsers import UnreadLines, register

# "Affinity (Hard / Soft)" since Xen 4.5; "CPU Affinity" before (and xm)
_HEADER = re.compile(r"^\s*Name\s+ID\s+VCPU\s+CPU\s+State\s+Time\(s\)\s+(?:CPU\s+)?Affinity\b.*$")
_ROW = re.compile(
    r"^(?P<name>\S+)\s+(?P<id>\d+)\s+(?P<vcpu>\d+)\s+(?P<cpu>\d+|-)\s+(?P<state>[-a-z]{3})\s+"
    r"(?P<time>\d+(?:\.\d+)?)\s+(?P<affinity>\S.*?)\s*$"
)
_ANY = {"all", "any cpu", "any"}


def _affinity(value: str) -> list[int] | None:
    """``"all"`` -> None, ``"16-31"`` -> ids; ValueError on anything else."""
    value = value.strip()
    return None if value.lower() in _ANY else parse_cpulist(value)


def _detect(head: str) -> bool:
    return "Time(s)" in head and any(_HEADER.match(ln) for ln in head.splitlines()[:5])


@register(
    "xl_vcpu_list",
    commands=(r"\bxl\b.*\bvcpu-list\b", r"\bxm\b.*\bvcpu-list\b"),
    detect=_detect,
    priority=10,
)
def parse_xl_vcpu_list(text: str) -> XenVcpuList:
    """Per-vCPU placement of every Xen domain from ``xl vcpu-list``::

        Name                                ID  VCPU   CPU State   Time(s) Affinity (Hard / Soft)
        Domain-0                             0     0    0   -b-      44.0  0 / all
        sys-net                              1     0   17   -b-       4.3  all / 16-31

    Hard and soft affinity are split at `` / `` (an old ``CPU Affinity``
    column is the hard one); ``all`` is None. A row cut short is reported.

    >>> out = parse_xl_vcpu_list(
    ...     "Name  ID  VCPU  CPU State  Time(s) Affinity (Hard / Soft)\\n"
    ...     "sys-net  1  0  17  -b-  4.3  all / 16-31\\n"
    ... )
    >>> v = out.vcpus[0]
    >>> (v.domain, v.cpu, v.hard_affinity, v.soft_affinity[:2])
    ('sys-net', 17, None, [16, 17])
    """
    out = XenVcpuList()
    unread = UnreadLines("vcpu-list row not read (cut?)")
    lines = text.splitlines()
    header = next((i for i, ln in enumerate(lines) if _HEADER.match(ln)), None)
    if header is None:
        raise ParseError("no 'Name ID VCPU CPU State Time(s) Affinity' header: not xl vcpu-list output")
    for number, line in enumerate(lines[header + 1 :], header + 2):
        if not line.strip():
            continue
        m = _ROW.match(line)
        if m is None:
            unread.add(number, line)
        else:
            _add_row(out, m, number)
    if not out.vcpus:
        raise ParseError("no vCPU rows under the xl vcpu-list header")
    # in line order, with the rows whose affinity could not be read
    out.errors = sorted([*unread.errors(), *out.errors], key=lambda e: e.line or 0)
    return out


def _add_row(out: XenVcpuList, m: re.Match[str], number: int) -> None:
    """The vCPU of a vcpu-list row into ``out``; an error instead when its affinity is not read."""
    try:
        hard, soft = _affinities(m.group("affinity"))
    except ValueError:
        out.errors.append(ArtifactError("", f"bad affinity {m.group('affinity')!r}", number))
        return
    cpu = m.group("cpu")
    out.vcpus.append(
        XenVcpu(
            domain=m.group("name"),
            domid=int(m.group("id")),
            vcpu=int(m.group("vcpu")),
            cpu=None if cpu == "-" else int(cpu),
            state=m.group("state"),
            time_s=float(m.group("time")),
            hard_affinity=hard,
            soft_affinity=soft,
            line=number,
        )
    )
    out.lines[f"vcpus[{m.group('name')}.{m.group('vcpu')}]"] = number


def _affinities(column: str) -> tuple[list[int] | None, list[int] | None]:
    """(hard, soft) of ``hard / soft`` (an old column has the hard one only);
    ValueError when one is not a CPU list."""
    hard_text, _, soft_text = column.partition(" / ")
    return _affinity(hard_text), _affinity(soft_text) if soft_text else None
