"""``lspci`` -> :class:`PciDevices`: the PCI devices and what they say of the
machine being a virtual machine.

Sample inputs (a KVM guest; ``-nn`` adds ``[class]`` and ``[vendor:device]``,
``-v``/``-k`` indented detail lines, ``-n`` numbers only)::

    00:00.0 Host bridge: Intel Corporation 440FX - 82441FX PMC [Natoma] (rev 02)
    00:02.0 VGA compatible controller: Cirrus Logic GD 5446
    00:03.0 Ethernet controller [0200]: Red Hat, Inc. Virtio network device [1af4:1000]
            Subsystem: Red Hat, Inc. Qemu virtual machine
            Kernel driver in use: virtio-pci
    00:04.0 0100: 1af4:1001

``lspci -mm`` (quoted fields) and ``lspci -vmm`` (``Slot:``/``Vendor:`` blocks,
with ``-n`` their IDs) are read too; ``lspci -t`` (a tree) is not.

How sure each device is (:data:`SIGNS`, ``GuestSignals``):

* ``virtio`` (virtual): a virtio device (vendor 1af4 ``Red Hat, Inc.``, once
  ``Qumranet``), as sure as a ``virtio_net`` driver in ``ethtool -i``;
* ``emulated`` (virtual): devices only hypervisors present: QEMU's own (vendor
  1b36, its VGA 1234:1111, the ``QEMU Virtual Machine`` subsystem 1af4:1100),
  the 440FX host bridge (a 1996 chipset no server has, QEMU's default machine),
  VMware (15ad), Hyper-V (1414), Xen (5853), VirtualBox (80ee), Parallels (1ab8);
* ``hints`` (never deciding alone): devices of guests that physical machines
  have too: the Q35 ``82G33/G31/P35/P31`` host bridge and ``440BX`` (real
  desktop boards), the Cirrus GD 5446 and 82540EM NIC QEMU emulates, Amazon's
  ENA/NVMe and Google's gVNIC (also on bare-metal instances).

A guest with devices passed through (a GPU, a NIC) also lists physical
devices: those say nothing, and no device list says "physical".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from collectors.facts import GuestSignals, ParseError, PciDevice, PciDevices
from collectors.parsers import UnreadLines, register

_ADDRESS = r"(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]"
_DEVICE_LINE = re.compile(rf"^({_ADDRESS})\s+(\S.*?)\s*$")
_NUMERIC = re.compile(r"^([0-9a-fA-F]{4}):\s+([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\b")
_CLASS = re.compile(r"^(.*?)(?:\s+\[([0-9a-fA-F]{4})\])?$")
_IDS = re.compile(r"\s+\[([0-9a-fA-F]{4}):([0-9a-fA-F]{4})\]$")
_TRAILER = re.compile(r"(?:\s+\((?:rev [0-9a-fA-F]{2}|prog-if [^)]*)\))+\s*$")
_DETAIL = re.compile(r"^\s+(Subsystem|Kernel driver in use):\s*(.*?)\s*$")
_VMM_FIELD = re.compile(r"^(Slot|Class|Vendor|Device|SVendor|SDevice|Driver|Rev):\s*(.*?)\s*$")
_QUOTED = re.compile(r'"([^"]*)"')
# two device lines (with -v, the detail lines and a blank line between them)
_DETECT = (
    rf"^{_ADDRESS} [A-Z][\w /-]{{2,60}}(?: \[[0-9a-f]{{4}}\])?: \S.*\n"
    rf"(?:(?:[ \t].*)?\n){{0,60}}{_ADDRESS} "
)
# the command itself, when a paste is read whole as lspci's output
_COMMAND_LINE = re.compile(r"^\s*(?:\S{0,60}[#$>]\s*)?(?:sudo\s+)?lspci\b")
# subsystems only a hypervisor gives (QEMU's 1af4:1100, VMware's): Microsoft's
# is left out, its Surface devices carry it
_VIRTUAL_SUBSYSTEM = re.compile(
    r"^(?:(?:Red Hat, Inc\.?|Qumranet, Inc\.?)\s+(?:QEMU Virtual Machine|Device 1100)\b|VMware\b|XenSource\b|"
    r"InnoTek Systemberatung\b|Parallels\b)",
    re.I,
)


@dataclass(frozen=True)
class Sign:
    """What a device says of its machine: ``kind`` is ``virtio``, ``emulated``
    (both make it virtual) or ``hint`` (seen in guests, and on physical machines)."""

    kind: str
    vendor: str  # PCI vendor ID (lower-case hex)
    device: str | None  # None: every device of the vendor
    name: re.Pattern[str]  # the vendor and device as lspci names them


def _sign(kind: str, vendor: str, device: str | None, name: str) -> Sign:
    return Sign(kind, vendor, device, re.compile(name, re.I))


# pci.ids names vendor 1af4 "Red Hat, Inc." (once "Red Hat, Inc" and "Qumranet, Inc.")
_RED_HAT = r"^(?:Red Hat, Inc\.?|Qumranet, Inc\.?)\s+"

SIGNS: tuple[Sign, ...] = (
    # virtio: 1af4 devices 1000-107f (legacy and modern); the rest of 1af4 is QEMU's too
    _sign("virtio", "1af4", "virtio", _RED_HAT + r"(?:Virtio|virtio)"),
    _sign("emulated", "1af4", None, _RED_HAT + r"(?:Qemu|QEMU|Device [0-9a-f]{4}$|Inter-VM)"),
    _sign("emulated", "1b36", None, r"^Red Hat, Inc\.?\s+QEMU\b"),
    _sign("emulated", "1234", "1111", r"^(?:Device 1234:1111|Technical Corp\. Device 1111|QEMU\b)"),
    _sign("emulated", "8086", "1237", r"^Intel Corporation 440FX - 82441FX PMC"),
    _sign("emulated", "15ad", None, r"^VMware\b"),
    _sign("emulated", "1414", None, r"^Microsoft Corporation\b"),
    _sign("emulated", "5853", None, r"^XenSource, Inc\.?\s"),
    _sign("emulated", "80ee", None, r"^InnoTek Systemberatung GmbH\b"),
    _sign("emulated", "1ab8", None, r"^Parallels, Inc\.?\s"),
    _sign("hint", "8086", "29c0", r"^Intel Corporation 82G33/G31/P35/P31 Express DRAM Controller"),
    _sign("hint", "8086", "7190", r"^Intel Corporation 440BX/ZX/DX - 82443BX/ZX/DX Host bridge"),
    _sign("hint", "8086", "100e", r"^Intel Corporation 82540EM Gigabit Ethernet"),
    _sign("hint", "1013", "00b8", r"^Cirrus Logic GD 5446"),
    _sign("hint", "1d0f", None, r"^Amazon\.com, Inc\.\s"),
    _sign("hint", "1ae0", None, r"^Google, Inc\.\s"),
)


def _is_virtio(device_id: str) -> bool:
    return 0x1000 <= int(device_id, 16) <= 0x107F


def _matches(sign: Sign, vendor: str | None, device: str | None, name: str) -> bool:
    if vendor is not None and device is not None:
        if vendor.lower() != sign.vendor:
            return False
        if sign.device == "virtio":
            return _is_virtio(device)
        return sign.device is None or device.lower() == sign.device
    return sign.name.search(name) is not None


def sign_of(vendor: str | None, device: str | None, name: str) -> str | None:
    """``virtio``, ``emulated``, ``hint`` or None for one device (its IDs when
    lspci printed them, else its name).

    >>> sign_of(None, None, "Intel Corporation 440FX - 82441FX PMC [Natoma]")
    'emulated'
    >>> sign_of("1af4", "1041", ""), sign_of("8086", "29c0", ""), sign_of("15b3", "1017", "")
    ('virtio', 'hint', None)
    """
    for sign in SIGNS:
        if _matches(sign, vendor, device, name):
            return sign.kind
    return None


# a sign's kind -> the GuestSignals list (and lines key) of the devices showing it
_SIGN_FIELDS = {"virtio": "virtio", "emulated": "emulated", "hint": "hints"}


def _add_sign(signals: GuestSignals, device: PciDevice) -> None:
    listed = _SIGN_FIELDS.get(sign_of(device.vendor_id, device.device_id, device.name) or "")
    if listed is not None:
        getattr(signals, listed).append(f"{device.address} {device.name}")
        signals.lines.setdefault(listed, device.line or 1)
    subsystem = device.subsystem or ""
    # "Subsystem: Red Hat, Inc. QEMU Virtual Machine" under an Intel Q35 bridge
    if _VIRTUAL_SUBSYSTEM.match(subsystem):
        signals.emulated.append(f"{device.address} subsystem {subsystem}")
        signals.lines.setdefault("emulated", device.line or 1)


def _named(address: str, rest: str, number: int) -> PciDevice | None:
    """A device line with names: ``Host bridge [0600]: Intel ... [8086:1237] (rev 02)``
    (``lspci -mm``'s quoted fields and ``lspci -n``'s numbers too)."""
    if rest.startswith('"'):
        return _quoted_device(address, rest, number)
    numeric = _NUMERIC.match(rest)
    if numeric:
        klass, vendor, device = numeric.groups()
        return PciDevice(
            address, f"{vendor}:{device}", None, klass, vendor.lower(), device.lower(), line=number
        )
    return _class_named_device(address, rest, number)


def _quoted_device(address: str, rest: str, number: int) -> PciDevice | None:
    """``lspci -mm``: ``"class" "vendor" "device" ... "subsystem vendor" "subsystem"``."""
    fields = _QUOTED.findall(rest)
    if len(fields) < 3:
        return None
    sub = " ".join(f for f in fields[3:5] if f) or None
    return PciDevice(address, f"{fields[1]} {fields[2]}".strip(), fields[0], subsystem=sub, line=number)


def _class_named_device(address: str, rest: str, number: int) -> PciDevice | None:
    """``Class [id]: Vendor Device [vvvv:dddd] (rev nn)``, the ids and revision optional."""
    klass, sep, name = rest.partition(": ")
    if not sep or not name:
        return None
    class_match = _CLASS.match(klass)
    class_name, class_id = (class_match.group(1), class_match.group(2)) if class_match else (klass, None)
    name = _TRAILER.sub("", name)
    ids = _IDS.search(name)
    vendor = device = None
    if ids:
        vendor, device = ids.group(1).lower(), ids.group(2).lower()
        name = name[: ids.start()]
    return PciDevice(address, name.strip(), class_name.strip(), class_id, vendor, device, line=number)


def _vmm_device(block: dict[str, str], line: int) -> PciDevice:
    """One ``lspci -vmm`` record: with ``-n`` its vendor and device are numbers
    (the class too), else names (with the subsystem's)."""
    vendor, device = block.get("Vendor", ""), block.get("Device", "")
    if re.fullmatch(r"[0-9a-fA-F]{4}", vendor) and re.fullmatch(r"[0-9a-fA-F]{4}", device):
        return PciDevice(
            block["Slot"],
            f"{vendor}:{device}",
            None,
            block.get("Class"),
            vendor.lower(),
            device.lower(),
            subsystem=None,
            driver=block.get("Driver"),
            line=line,
        )
    sub = " ".join(v for v in (block.get("SVendor"), block.get("SDevice")) if v) or None
    return PciDevice(
        block["Slot"],
        f"{vendor} {device}".strip(),
        block.get("Class"),
        None,
        None,
        None,
        subsystem=sub,
        driver=block.get("Driver"),
        line=line,
    )


class _Reader:
    """The lines of one ``lspci`` output, one method per kind of line."""

    def __init__(self) -> None:
        self.devices: list[PciDevice] = []
        self.unread = UnreadLines("not an lspci line")
        self.vmm: dict[str, str] = {}
        self.vmm_line = 0

    def device_line(self, number: int, line: str) -> bool:
        m = _DEVICE_LINE.match(line)
        device = _named(m.group(1), m.group(2), number) if m else None
        if device is None:
            return False
        self.devices.append(device)
        return True

    def detail_line(self, line: str) -> bool:
        """An indented line under a device (``-v``, ``-k``): its subsystem and driver kept."""
        if not (line[:1].isspace() and self.devices):
            return False
        m = _DETAIL.match(line)
        if m is not None and m.group(1) == "Subsystem":
            self.devices[-1].subsystem = _IDS.sub("", m.group(2))
        elif m is not None:
            self.devices[-1].driver = m.group(2)
        return True

    def vmm_line_read(self, number: int, line: str) -> bool:
        m = _VMM_FIELD.match(line)
        if m is None:
            return False
        if m.group(1) == "Slot":
            self.end_vmm_block()
            self.vmm_line = number
        self.vmm.setdefault(m.group(1), m.group(2))
        return True

    def end_vmm_block(self) -> None:
        block, self.vmm = self.vmm, {}
        if "Slot" in block:
            self.devices.append(_vmm_device(block, self.vmm_line))

    def read(self, text: str) -> None:
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip() or _COMMAND_LINE.match(line):
                continue
            if self.device_line(number, line) or self.vmm_line_read(number, line) or self.detail_line(line):
                continue
            self.unread.add(number, line)
        self.end_vmm_block()


@register(
    "lspci",
    # not the tree (-t): it names devices without their classes
    commands=(r"^lspci(?:\s+-(?![\w-]*t)[\w-]+|\s+[0-9a-fA-F:.]+)*\s*(?:\|.*)?$",),
    paths=(r"(^|/)lspci(?:_-(?![\w-]*t)[\w-]+)*(\.txt)?$", r"(^|/)lspci_file$"),
    detect=lambda head: re.search(_DETECT, head, re.M) is not None,
    needles=(": ",),
    priority=4,
)
def parse_lspci(text: str) -> PciDevices:
    """``lspci`` (plain, ``-nn``, ``-n``, ``-v``, ``-k``, ``-mm``, ``-vmm``).

    >>> out = parse_lspci("00:00.0 Host bridge: Intel Corporation 440FX - 82441FX PMC [Natoma] (rev 02)\\n"
    ...     "00:03.0 Ethernet controller [0200]: Red Hat, Inc. Virtio network device [1af4:1000]\\n")
    >>> [(d.address, d.class_name, d.vendor_id) for d in out.devices]
    [('00:00.0', 'Host bridge', None), ('00:03.0', 'Ethernet controller', '1af4')]
    >>> out.signals.emulated, out.signals.virtual
    (['00:00.0 Intel Corporation 440FX - 82441FX PMC [Natoma]'], True)
    >>> out.signals.virtio
    ['00:03.0 Red Hat, Inc. Virtio network device']
    """
    reader = _Reader()
    reader.read(text)
    if not reader.devices:
        raise ParseError("no lspci device line ('00:00.0 Host bridge: ...')")
    out = PciDevices(devices=reader.devices, signals=_signals_of(reader.devices))
    out.errors = reader.unread.errors()
    return out


_SYSFS_ID = re.compile(
    r"^(?:/sys/bus/pci/devices/)?([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])/(vendor|device):0x([0-9a-fA-F]{4})\s*$"
)


def _signals_of(devices: list[PciDevice]) -> GuestSignals:
    signals = GuestSignals()
    for device in devices:
        _add_sign(signals, device)
    if signals.virtio or signals.emulated:
        signals.virtual = True
    return signals


@register(
    "pci_sysfs",
    commands=(r"^(?:e|f)?grep\s+(?:-\w+\s+)*\S+\s+/sys/bus/pci/devices/\S*(?:vendor|device)",),
)
def parse_pci_sysfs(text: str) -> PciDevices:
    """``grep -H . /sys/bus/pci/devices/*/vendor /sys/bus/pci/devices/*/device``:
    the IDs lspci would name, on a machine without lspci.

    >>> out = parse_pci_sysfs("/sys/bus/pci/devices/0000:00:03.0/vendor:0x1af4\\n"
    ...     "/sys/bus/pci/devices/0000:00:03.0/device:0x1041\\n")
    >>> [(d.address, d.vendor_id, d.device_id) for d in out.devices], out.signals.virtual
    ([('0000:00:03.0', '1af4', '1041')], True)
    """
    ids: dict[str, dict[str, tuple[str, int]]] = {}
    unread = UnreadLines("not a /sys/bus/pci/devices/ADDRESS/vendor|device line")
    for number, line in enumerate(text.splitlines(), 1):
        m = _SYSFS_ID.match(line.strip())
        if m is None:
            if line.strip():
                unread.add(number, line)
            continue
        ids.setdefault(m.group(1), {})[m.group(2)] = (m.group(3).lower(), number)
    devices = [
        PciDevice(
            address,
            f"{got['vendor'][0]}:{got['device'][0]}",
            vendor_id=got["vendor"][0],
            device_id=got["device"][0],
            line=got["vendor"][1],
        )
        for address, got in ids.items()
        if {"vendor", "device"} <= set(got)
    ]
    if not devices:
        raise ParseError("no /sys/bus/pci/devices/ADDRESS/vendor and device lines")
    out = PciDevices(devices=devices, signals=_signals_of(devices))
    out.errors = unread.errors()
    return out
