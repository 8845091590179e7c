"""``ethtool -l DEV`` (``--show-channels``): a NIC's queue (channel) counts.

::

    Channel parameters for eth0:
    Pre-set maximums:
    RX:             n/a
    TX:             n/a
    Other:          1
    Combined:       8
    Current hardware settings:
    RX:             n/a
    TX:             n/a
    Other:          1
    Combined:       2

``ethtool -l '*'`` prints one such block per device. "n/a" is ``None``. A device
that has no channels ("Operation not supported") yields no facts.
"""

from __future__ import annotations

import re

from collectors.facts import NicChannels, ParseError
from collectors.parsers import register, skipped_lines

_DEVICE = re.compile(r"^\s*Channel parameters for (\S+?):\s*$")
_SECTION = re.compile(r"^\s*(Pre-set maximums|Current hardware settings):\s*$")
_COUNT = re.compile(r"^\s*(RX|TX|Other|Combined):\s*(\d+|n/a)\s*$", re.IGNORECASE)
_UNSUPPORTED = re.compile(
    r"Operation not supported|Cannot get device channel parameters|no such device", re.I
)


@register(
    "ethtool_channels",
    commands=(r"\bethtool\s+(-l|--show-channels)\b",),
    detect=lambda head: (
        "Current hardware settings:" in head
        and bool(_DEVICE.search(head.split("\n", 1)[0]) or re.search(r"^Pre-set maximums:", head, re.M))
    ),
    priority=10,
    prose_lines=(r"Pre-set maximums:", r"Current hardware settings:", r"Channel parameters for \S+:"),
)
def parse_ethtool_channels(text: str) -> list[NicChannels]:
    """One :class:`NicChannels` per device block.

    >>> (nic,) = parse_ethtool_channels("Channel parameters for eth0:\\nPre-set maximums:\\n"
    ...     "RX:\\tn/a\\nCombined:\\t8\\nCurrent hardware settings:\\nRX:\\tn/a\\nCombined:\\t2\\n")
    >>> (nic.device, nic.maximum, nic.current)
    ('eth0', {'rx': None, 'combined': 8}, {'rx': None, 'combined': 2})
    """
    reader = _Channels()
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            reader.read(number, line)
    out, skipped = reader.nics, reader.skipped
    out = [n for n in out if n.maximum or n.current]
    if not out:
        if _UNSUPPORTED.search(text):
            return []
        raise ParseError("no 'Pre-set maximums' / 'Current hardware settings' counts: not ethtool -l output")
    out[0].errors += skipped_lines("channels", "'NAME: COUNT'", skipped)
    return out


class _Channels:
    """``ethtool -l`` output, line by line: a device, a section, a count."""

    def __init__(self) -> None:
        self.nics: list[NicChannels] = []
        self.nic: NicChannels | None = None
        self.section: dict[str, int | None] | None = None
        self.skipped: list[int] = []

    def read(self, number: int, line: str) -> None:
        for reader in (self.device, self.section_title, self.count, self.unsupported):
            if reader(number, line):
                return
        self.skipped.append(number)

    def device(self, number: int, line: str) -> bool:
        m = _DEVICE.match(line)
        if not m:
            return False
        self.nic = NicChannels(device=m.group(1))
        self.nic.lines["device"] = number
        self.nics.append(self.nic)
        self.section = None
        return True

    def section_title(self, number: int, line: str) -> bool:
        m = _SECTION.match(line)
        if not m:
            return False
        if self.nic is None:  # "-l" output without its first line
            self.nic = NicChannels()
            self.nics.append(self.nic)
        nic = self.nic
        self.section = nic.maximum if m.group(1).startswith("Pre-set") else nic.current
        nic.lines["maximum" if self.section is nic.maximum else "current"] = number
        return True

    def count(self, number: int, line: str) -> bool:
        m = _COUNT.match(line)
        if not m or self.section is None or self.nic is None:
            return False
        key = m.group(1).lower()
        self.section[key] = None if m.group(2).lower() == "n/a" else int(m.group(2))
        which = "maximum" if self.section is self.nic.maximum else "current"
        self.nic.lines[f"{which}.{key}"] = number
        return True

    def unsupported(self, number: int, line: str) -> bool:
        """An error instead of counts: the device it names has none."""
        if not _UNSUPPORTED.search(line):
            return False
        nic = self.nic
        if nic is not None and not nic.maximum and not nic.current:
            self.nics.remove(nic)
            self.nic = None
        return True
