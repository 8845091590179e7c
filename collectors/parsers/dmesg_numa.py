"""NUMA lines of the kernel log (``dmesg | grep -i numa``) -> :class:`NumaBootMessages`.

Sample input::

    [    0.000000] No NUMA configuration found
    [    0.000000] Faking a node at [mem 0x0000000000000000-0x000000107fffffff]
    [    0.000000] SRAT: PXM 1 -> APIC 0x20 -> Node 1
    [    0.000000] NUMA: Node 0 [mem 0x00000000-0x7fffffff] + [mem 0x100000000-0x107fffffff] -> ...
    [    0.000000] Initmem setup node 1 [mem 0x0000001080000000-0x000000207fffffff]

What the lines mean (arch/x86/mm/numa.c, drivers/base/arch_numa.c,
mm/numa_emulation.c):

* ``No NUMA configuration found`` -- the firmware gave no SRAT (node
  interleaving on in the BIOS, a guest without vNUMA): ``no_numa_config``;
* ``NUMA turned off`` -- ``numa=off`` on the kernel command line: ``numa_off``;
* ``Faking a node at [mem ...]`` -- the kernel made one node of all memory
  after either of the above: ``fake_node``;
* ``Faking node N at ...`` -- ``numa=fake=`` emulation: ``emulated_nodes``;
* ``SRAT: PXM p -> ... -> Node n``, ``ACPI: SRAT: Node n PXM p [mem ...]``,
  ``NUMA: Node n ...``, ``Initmem setup node n``, ``NODE_DATA(n)``: the nodes
  (``nodes``) and proximity domains (``srat_pxms``) the firmware described.

The timestamp prefix (``[  0.000000]``, syslog ``kernel:``) is ignored.
``lines`` keys: ``no_numa_config``, ``numa_off``, ``fake_node``, ``emulated_nodes``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from collectors.facts import NumaBootMessages, ParseError
from collectors.parsers import register

_NODE_PATTERNS = (
    re.compile(r"SRAT: PXM (?P<pxm>\d{1,5}) -> \S{1,20} \S{1,30} -> Node (?P<node>\d{1,5})"),
    re.compile(r"SRAT: Node (?P<node>\d{1,5}) PXM (?P<pxm>\d{1,5})"),
)
# a message that says the firmware or the kernel set NUMA up otherwise -> its flag
_FLAGS = (
    ("No NUMA configuration found", "no_numa_config"),
    ("NUMA turned off", "numa_off"),
    ("Faking a node at", "fake_node"),
)
_NODE_ONLY = re.compile(r"(?:NUMA: Node|Initmem setup node|NODE_DATA\(|node) ?(\d{1,5})\b")
_EMULATED = re.compile(r"Faking node (\d{1,5}) at")
_KEYS = re.compile(
    r"No NUMA configuration found|NUMA turned off|Faking a node at|Faking node \d+ at|SRAT: PXM|"
    r"SRAT: Node|NUMA: Node \d|Initmem setup node|NODE_DATA\(\d+\)|NUMA: Initialized distance table"
)


def _detect(head: str) -> bool:
    if not any(word in head for word in ("NUMA", "Faking", "SRAT", "Initmem", "NODE_DATA")):
        return False  # a word each of the messages holds
    return _KEYS.search(head) is not None


@register(
    "dmesg_numa",
    commands=(
        r"^(?:dmesg|journalctl)\b.*\|\s*(?:e?grep|rg)\b.*(?:numa|srat|node)",
        r"^(?:e?grep)\b.*(?:numa|srat).*(?:/var/log/(?:messages|dmesg|kern\.log|syslog)\S*)",
    ),
    detect=_detect,
    priority=5,
)
def parse_dmesg_numa(text: str) -> NumaBootMessages:
    """Read what the kernel said about NUMA at boot.

    Sample input::

        [    0.001436] No NUMA configuration found
        [    0.001437] Faking a node at [mem 0x0000000000000000-0x000000063fffffff]
    """
    out = NumaBootMessages()
    ids = _Ids()
    for idx, line in enumerate(text.splitlines(), start=1):
        if not _KEYS.search(line) and "numa" not in line.lower():
            continue
        found = _read_flags(line, idx, out) | ids.read(line, idx, out.lines)
        if not found:
            found = ids.read_other(line)
        if found or "numa" in line.lower():
            out.messages.append(line.strip()[:300])
    if not out.messages:
        raise ParseError("no NUMA kernel messages found")
    out.nodes = sorted(ids.nodes)
    out.srat_pxms = sorted(ids.pxms)
    out.emulated_nodes = len(ids.emulated) if ids.emulated else None
    return out


def _read_flags(line: str, idx: int, out: NumaBootMessages) -> bool:
    """Sets the flag of each message of ``_FLAGS`` the line holds; whether it held one."""
    found = False
    for message, flag in _FLAGS:
        if message in line:
            setattr(out, flag, True)
            out.lines.setdefault(flag, idx)
            found = True
    return found


@dataclass
class _Ids:
    """The nodes, proximity domains and emulated nodes the messages name."""

    nodes: set[int] = field(default_factory=set)
    pxms: set[int] = field(default_factory=set)
    emulated: set[int] = field(default_factory=set)

    def read(self, line: str, idx: int, lines: dict[str, int]) -> bool:
        """The ids an emulation or SRAT message names; whether it was one."""
        found = False
        m = _EMULATED.search(line)
        if m:
            self.emulated.add(int(m.group(1)))
            lines.setdefault("emulated_nodes", idx)
            found = True
        for pattern in _NODE_PATTERNS:
            m = pattern.search(line)
            if m:
                self.pxms.add(int(m.group("pxm")))
                self.nodes.add(int(m.group("node")))
                found = True
        return found

    def read_other(self, line: str) -> bool:
        """Another NUMA set-up message (``NUMA: Node 0 ...``, ``Initmem setup node 1``):
        the node it names; whether it was one."""
        if not _KEYS.search(line):
            return False
        m = _NODE_ONLY.search(line)
        if m:
            self.nodes.add(int(m.group(1)))
        return True
