"""``dmidecode -t memory`` / ``dmidecode -t 17`` -> :class:`MemoryDevices`.

Sample input (one record per slot; an empty slot says ``No Module Installed``)::

    Handle 0x1100, DMI type 17, 34 bytes
    Memory Device
            Size: 16384 MB
            Locator: DIMM_A1
            Bank Locator: Not Specified
            Type: DDR3
            Speed: 1333 MT/s
            Configured Memory Speed: 1333 MT/s

Only "Memory Device" (type 17) records are read; ``Physical Memory Array`` and
other types in a full ``dmidecode`` are skipped. Sizes in kB/MB/GB/TB (and the
KiB/MiB/GiB forms) become MiB. ``Speed`` and ``Configured Memory Speed`` (older
dmidecode: ``Configured Clock Speed``) in MT/s or MHz become MT/s.

Socket and channel come from the vendor's slot naming (:func:`slot_position`),
numbered as the vendor prints them (``CPU1`` is socket 1, ``P0`` socket 0):

* Dell: ``A1``..``A12``, ``DIMM_A1``, ``B1`` ... (the letter is the socket: A = 1)
* HPE: ``PROC 1 DIMM 3`` (socket 1)
* Supermicro: ``P1-DIMMA1`` (socket 1, channel A), ``DIMMA1`` with bank
  ``P0_Node0_Channel0_Dimm0`` (socket 0 from the bank, channel A)
* Lenovo / Intel boards: ``CPU1_DIMM_A0``, ``CPU0_C0D0`` (Inspur: socket 0, channel 0)
* Huawei / Kunpeng: ``DIMM000`` (socket 0, channel 0, slot 0) and banks such as
  ``SOCKET 0 CHANNEL 1 DIMM 0``
* AMD boards: bank ``P0 CHANNEL A``; ``NODE 1`` banks name the socket.

A locator that names neither (``DIMM 1``, QEMU's ``DIMM 0``) leaves them None.
Without an SMBIOS table (``/dev/mem: No such file or directory``, ``No SMBIOS nor
DMI entry point found``: many VMs and containers) the result has no DIMMs and the
``lines`` key ``no_dmi``; rules must read that as "unknown", not "no memory".
Other records of a full ``dmidecode`` (BIOS, processor ...), e.g. the pieces a
pasted dump is cut into, give no DIMMs and the ``lines`` key
``no_memory_records``; the assembler joins the DIMMs of every piece.
``lines`` keys: ``first_device``, ``no_dmi``, ``no_memory_records``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from collectors.facts import Dimm, MemoryDevices, ParseError
from collectors.parsers import register
from collectors.sizes import mb

_SIZE = re.compile(r"^(\d{1,12})\s*([KMGT])i?B$", re.I)
_SPEED = re.compile(r"^(\d{1,6})\s*(MT/s|MHz)$", re.I)
_NONE = {"", "not specified", "unknown", "none", "not provided", "<out of spec>", "other"}

_B = r"(?<![A-Za-z0-9])"  # a word start where "_" separates too (P0_Node0_Channel0)
_E = r"(?![0-9])"
# (socket, channel) in one name, tried on the locator, then the bank
_SOCKET_CHANNEL = (
    # P0_Node0_Channel0_Dimm0, SOCKET 0 CHANNEL 1 DIMM 0, P0 CHANNEL A, CPU1 Channel B
    re.compile(
        rf"{_B}(?:P|CPU|PROC|SOCKET|NODE)[\s_-]?(\d{{1,3}}){_E}.*?CHANNEL[\s_-]?([A-Z0-9]{{1,2}}){_E}", re.I
    ),
    # Supermicro P1-DIMMA1, Lenovo/Intel CPU1_DIMM_A0, CPU0_DIMM_B2
    re.compile(r"^(?:P|CPU|PROC)[\s_-]?(\d{1,3})[\s_-]+DIMM[\s_-]?([A-Z])\d{0,2}$", re.I),
    # Inspur CPU0_C0D0
    re.compile(r"^CPU(\d{1,3})[\s_-]?C(\d{1,2})D\d{1,2}$", re.I),
)
_HUAWEI = re.compile(r"^DIMM(\d)(\d)(\d)$", re.I)
_SOCKET_ONLY = re.compile(rf"{_B}(?:CPU|PROC|SOCKET|NODE|P)[\s_-]?(\d{{1,3}}){_E}", re.I)
# A1, DIMM_A1, DIMMA1: a letter and a slot number
_LETTER = re.compile(r"^(?:DIMM[_\s-]?)?([A-P])(\d{1,2})$", re.I)


def slot_position(locator: str, bank: str | None) -> tuple[int | None, str | None]:
    """(socket, channel) named by a DIMM's locator or bank locator, else None.

    A lone letter-and-number locator (``A1``, ``DIMM_A1``) names the channel when
    the bank names the socket (Supermicro ``P0_Node0_...``, Intel ``NODE 1``), and
    the processor otherwise (Dell: ``A`` = CPU1, ``B`` = CPU2).
    """
    locator = locator.strip()
    names = [name for name in (locator, _bank_name(bank)) if name]
    named = next(_sockets_and_channels(names), None)
    if named is not None:
        return named
    socket = _socket_only(names)
    m = _LETTER.match(locator)
    return _lettered(m.group(1).upper(), socket) if m else (socket, None)


def _bank_name(bank: str | None) -> str:
    """The bank locator stripped; blank when dmidecode printed none or a placeholder ("Not Specified")."""
    bank = (bank or "").strip()
    return "" if bank.lower() in _NONE else bank


def _socket_only(names: list[str]) -> int | None:
    """The socket the first of ``names`` that names one (``CPU1``, ``P0``) names, without a channel."""
    return next((int(m.group(1)) for name in names if (m := _SOCKET_ONLY.search(name))), None)


def _lettered(letter: str, socket: int | None) -> tuple[int | None, str | None]:
    """A lone letter-and-number locator's letter: the channel when the socket is
    known, else Dell's processor (A = CPU1 .. H = CPU8)."""
    if socket is not None:
        return socket, letter
    if letter <= "H":
        return ord(letter) - ord("A") + 1, None
    return None, None


def _sockets_and_channels(names: list[str]) -> Iterator[tuple[int, str]]:
    """Every (socket, channel) the names spell together, the locator's first."""
    for name in names:
        m = next((m for rx in _SOCKET_CHANNEL if (m := rx.search(name))), None)
        if m:
            yield int(m.group(1)), m.group(2).upper()
        m = _HUAWEI.match(name)
        if m:
            yield int(m.group(1)), m.group(2)


def _size_mb(value: str) -> int | None:
    m = _SIZE.match(value.strip())
    if not m:
        return None
    return round(mb(int(m.group(1)), m.group(2)))


def _speed(value: str) -> int | None:
    m = _SPEED.match(value.strip())
    return int(m.group(1)) if m else None


def _clean(value: str) -> str | None:
    value = value.strip()
    return None if value.lower() in _NONE else value


def _finish(fields: dict[str, str], line: int) -> Dimm:
    locator = fields.get("locator", "").strip()
    bank = _clean(fields.get("bank locator", ""))
    socket, channel = slot_position(locator, bank)
    configured = fields.get("configured memory speed") or fields.get("configured clock speed") or ""
    return Dimm(
        locator=locator,
        bank=bank,
        size_mb=_size_mb(fields.get("size", "")),
        socket=socket,
        channel=channel,
        type=_clean(fields.get("type", "")),
        speed_mts=_speed(fields.get("speed", "")),
        configured_speed_mts=_speed(configured),
        line=line,
    )


def _detect(head: str) -> bool:
    if "dmidecode" not in head and "Handle 0x" not in head and "Memory Device" not in head:
        return False
    if re.search(r"^# dmidecode \d|^Handle 0x[0-9A-Fa-f]{4}, DMI type \d{1,3}, \d{1,4} bytes", head, re.M):
        return True  # dmidecode output; its Memory Device records may start past the head
    return re.search(r"^[ \t]*Memory Device[ \t]*$", head, re.M) is not None and (
        re.search(r"^\s+(Locator|Size):", head, re.M) is not None
    )


@register(
    "dmidecode_memory",
    commands=(r"^dmidecode\s+(?:.*\s)?(?:-t\s*|--type[= ]?)(?:memory|17|16,17|17,16)\b",),
    paths=(r"(^|/)dmidecode(_-t_(memory|17))?(\.txt)?$",),
    detect=_detect,
    priority=10,
    prose_lines=(
        r"# dmidecode \d[\w.]{0,20}",
        r"Getting SMBIOS data from sysfs\.",
        r"SMBIOS \d[\w.]{0,20} present\.",
        r"# SMBIOS implementations newer than version .{0,40}",
        r"# fully supported by this version of dmidecode\.",
        r"Scanning /dev/mem for entry point\.",
        r"\d{0,3}/dev/mem: No such file or directory",
        r"No SMBIOS nor DMI entry point found, sorry\.",
        r"Memory Device",
        r"Physical Memory Array",
        r"Memory (?:Array|Device) Mapped Address",
    ),
)
def parse_dmidecode_memory(text: str) -> MemoryDevices:
    """Every "Memory Device" record of ``dmidecode`` output.

    Sample input::

        Memory Device
                Size: 32 GB
                Locator: A1
                Bank Locator: Not Specified
                Type: DDR4
                Speed: 3200 MT/s
                Configured Memory Speed: 2666 MT/s
    """
    out = MemoryDevices()
    for start, fields in _memory_devices(text, out.lines):
        out.dimms.append(_finish(fields, start))
    out.dimms = [d for d in out.dimms if d.locator or d.size_mb is not None]
    if not out.dimms:
        _mark_no_dimms(text, out.lines)
    return out


def _mark_no_dimms(text: str, lines: dict[str, int]) -> None:
    """Why an output gave no DIMM, as a ``lines`` key; ParseError when it is not
    dmidecode's."""
    if "/dev/mem" in text or "No SMBIOS nor DMI entry point found" in text:
        # a VM or container without SMBIOS: dmidecode ran and there is nothing to read
        lines["no_dmi"] = 1
    elif not text.strip() or re.search(r"^# dmidecode \d|DMI type \d", text, re.M):
        # other records of a full dmidecode (a paste cut into pieces), or nothing printed
        lines["no_memory_records"] = 1
    else:
        raise ParseError("no 'Memory Device' records found")


def _ends_record(line: str) -> bool:
    """Whether a line within a record ends it: a ``Handle`` line, or a non-blank one that is not indented."""
    stripped = line.strip()
    return stripped.startswith("Handle 0x") or bool(stripped and not line[:1].isspace())


def _memory_devices(text: str, lines: dict[str, int]) -> Iterator[tuple[int, dict[str, str]]]:
    """(first line, fields) of every "Memory Device" record; a record ends at the
    next one, a ``Handle`` line or a line that is not indented. The first record's
    line goes to ``lines``."""
    fields: dict[str, str] | None = None
    start = 0
    for idx, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped == "Memory Device":
            if fields is not None:
                yield start, fields
            fields, start = {}, idx
            lines.setdefault("first_device", idx)
        elif fields is None:
            continue
        elif _ends_record(line):
            yield start, fields
            fields = None
        else:
            key, sep, value = stripped.partition(":")
            if sep:
                fields.setdefault(key.strip().lower(), value.strip())
    if fields is not None:
        yield start, fields
