"""Signs that a machine is a virtual machine -> :class:`GuestSignals`.

A guest pasted after its hypervisor without an ``ssh`` line (issue 25) shows
itself by more than ``lscpu``'s ``Hypervisor vendor``: its DMI system record,
``systemd-detect-virt`` and its paravirtual devices. Sample inputs::

    # dmidecode -t system                   # systemd-detect-virt
    Handle 0x0100, DMI type 1, 27 bytes     kvm
    System Information
            Manufacturer: QEMU              # ethtool -i eth0
            Product Name: Standard PC (Q35 + ICH9, 2009)
                                            driver: virtio_net
    # cat /sys/class/dmi/id/sys_vendor      version: 1.0.0
    QEMU                                    bus-info: 0000:00:03.0

``ls /sys/bus/virtio/devices`` (``virtio0`` ...) and ``lsblk`` (a ``vda`` disk)
are read too. Only values that name a hypervisor make ``virtual`` True: Amazon's
and Microsoft's DMI vendors also sell physical machines (``c5.metal``, Surface),
so for them the product decides. ``systemd-detect-virt`` printing ``none`` makes
``virtual`` False; a container type (``docker``, ``lxc``) says nothing of the
machine under it (this set's build VM prints ``docker`` inside a KVM guest).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from collectors.facts import GuestSignals, ParseError
from collectors.parsers import register

# DMI system manufacturers that only hypervisors print
_VIRTUAL_VENDORS = re.compile(
    r"^(?:QEMU|innotek GmbH|VMware, Inc\.|Xen|Bochs|Parallels(?: Software International Inc\.)?|"
    r"OpenStack Foundation|oVirt|Nutanix|BHYVE|Red Hat)$",
    re.I,
)
# DMI product names of virtual machines (QEMU's machine types, clouds, Hyper-V)
_VIRTUAL_PRODUCTS = re.compile(
    r"^(?:KVM|Standard PC \(.{1,40}\)|OpenStack (?:Nova|Compute)|VirtualBox|VMware.{0,40}|"
    r"Virtual Machine|HVM domU|Google Compute Engine|Alibaba Cloud ECS|RHEV Hypervisor|oVirt Node|"
    r"Bochs|BHYVE|AHV|Parallels Virtual Platform)$",
    re.I,
)
# systemd-detect-virt's VM types (containers are left out: they say nothing of the machine)
_VM_TYPES = frozenset(
    {"qemu", "kvm", "amazon", "zvm", "vmware", "microsoft", "oracle", "powervm", "xen", "bochs", "uml"}
    | {"parallels", "bhyve", "qnx", "acrn", "apple", "sre", "google"}
)
_CONTAINER_TYPES = frozenset(
    {"openvz", "lxc", "lxc-libvirt", "systemd-nspawn", "docker", "podman", "rkt", "wsl", "proot", "pouch"}
)
# systemd-detect-virt's word -> whether the machine is virtual (None: a container,
# which says nothing of the machine it runs on)
_VIRTUAL_OF_WORD: dict[str, bool | None] = {
    **dict.fromkeys(_VM_TYPES, True),
    **dict.fromkeys(_CONTAINER_TYPES, None),
    "none": False,
}
# paravirtual NIC drivers (ethtool -i): only a guest has them
_PV_DRIVERS = frozenset({"virtio_net", "vmxnet3", "hv_netvsc", "xen_netfront", "vif"})
_SYSTEM_FIELD = re.compile(r"^\s+(Manufacturer|Product Name):\s*(.*?)\s*$")


def _vendor_virtual(value: str | None) -> bool:
    return bool(value and _VIRTUAL_VENDORS.match(value.strip()))


def _product_virtual(value: str | None) -> bool:
    return bool(value and _VIRTUAL_PRODUCTS.match(value.strip()))


def _finish(out: GuestSignals) -> GuestSignals:
    if _vendor_virtual(out.dmi_vendor) or _product_virtual(out.dmi_product) or out.virtio:
        out.virtual = True
    return out


@register(
    "dmi_system",
    commands=(r"^dmidecode\s+(?:.*\s)?(?:-t\s*|--type[= ]?)(?:system|1)\b",),
    detect=lambda head: (
        re.search(r"^System Information\s*$", head, re.M) is not None
        and re.search(r"^\s+Product Name:", head, re.M) is not None
        and "Memory Device" not in head
        # a whole dmidecode starts with the BIOS record: its memory devices are the point
        and "BIOS Information" not in head
    ),
    needles=("System Information",),
    priority=11,  # above dmidecode_memory, which reads any "DMI type" record
    prose_lines=(r"System Information",),
)
def parse_dmi_system(text: str) -> GuestSignals:
    """The "System Information" record (DMI type 1) of ``dmidecode``.

    >>> s = parse_dmi_system("System Information\\n\\tManufacturer: QEMU\\n"
    ...     "\\tProduct Name: Standard PC (Q35 + ICH9, 2009)\\n")
    >>> (s.dmi_vendor, s.dmi_product, s.virtual)
    ('QEMU', 'Standard PC (Q35 + ICH9, 2009)', True)
    """
    out = GuestSignals()
    for number, m in _system_fields(text):
        key = "dmi_vendor" if m.group(1) == "Manufacturer" else "dmi_product"
        if getattr(out, key) is None:
            setattr(out, key, m.group(2))
            out.lines[key] = number
    if out.dmi_vendor is None and out.dmi_product is None:
        raise ParseError("no 'System Information' record with a Manufacturer or Product Name")
    return _finish(out)


def _system_fields(text: str) -> Iterator[tuple[int, re.Match[str]]]:
    """The Manufacturer and Product Name lines of every "System Information"
    record (which ends at the next line that is not indented)."""
    inside = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip() == "System Information":
            inside = True
            continue
        if inside and line.strip() and not line[:1].isspace():
            inside = False  # the next record
        m = _SYSTEM_FIELD.match(line) if inside else None
        if m:
            yield number, m


def _one_value(text: str, what: str) -> tuple[str, int]:
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            return line.strip(), number
    raise ParseError(f"{what}: empty")


def _dmi_file(name: str, key: str) -> Callable[[str], GuestSignals]:
    """The parser of ``/sys/class/dmi/id/<name>``: one value, kept as ``key``."""

    def parse(text: str) -> GuestSignals:
        value, number = _one_value(text, name)
        out = GuestSignals(lines={key: number})
        setattr(out, key, value)
        return _finish(out)

    parse.__doc__ = f"``/sys/class/dmi/id/{name}`` (one line, e.g. ``QEMU``) -> ``{key}``."
    pattern = r"(?:class|devices/virtual)/dmi/id/" + name
    register(
        f"dmi_{name}",
        commands=(rf"^cat\s+/sys/{pattern}\s*$",),
        paths=(rf"(^|/)sys/{pattern}$",),
    )(parse)
    return parse


# sys_vendor is the DMI system manufacturer, product_name its product
parse_dmi_sys_vendor = _dmi_file("sys_vendor", "dmi_vendor")
parse_dmi_product_name = _dmi_file("product_name", "dmi_product")


@register(
    "systemd_detect_virt",
    commands=(r"^systemd-detect-virt(?:\s+(?:-v|--vm))?\s*$",),
    paths=(r"(^|/)systemd-detect-virt$",),
)
def parse_systemd_detect_virt(text: str) -> GuestSignals:
    """``systemd-detect-virt``: one word, ``none`` on a physical machine.

    >>> parse_systemd_detect_virt("kvm\\n").virtual, parse_systemd_detect_virt("none").virtual
    (True, False)
    >>> parse_systemd_detect_virt("docker").virtual is None
    True
    """
    value, number = _one_value(text, "systemd-detect-virt")
    word = value.lower()
    if word not in _VIRTUAL_OF_WORD:
        raise ParseError(f"systemd-detect-virt: unknown type {value[:40]!r}")
    return GuestSignals(detected_virt=word, lines={"detected_virt": number}, virtual=_VIRTUAL_OF_WORD[word])


@register(
    "ethtool_driver",
    commands=(r"\bethtool\s+(?:-i|--driver)\s",),
    detect=lambda head: (
        re.match(r"\s*driver:\s*\S+\s*\n", head) is not None
        and re.search(r"^bus-info:", head, re.M) is not None
    ),
    priority=5,
    prose_lines=(
        r"(?:driver|version|firmware-version|expansion-rom-version|bus-info|supports-[a-z-]{1,20}):.{0,80}",
    ),
)
def parse_ethtool_driver(text: str) -> GuestSignals:
    """``ethtool -i DEV``: a paravirtual driver (``virtio_net``) is a guest's.

    >>> parse_ethtool_driver("driver: virtio_net\\nversion: 1.0.0\\nbus-info: 0000:00:03.0\\n").virtio
    ['driver: virtio_net']
    """
    out = GuestSignals()
    seen = False
    for number, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^\s*driver:\s*(\S+)\s*$", line)
        if m:
            seen = True
            if m.group(1) in _PV_DRIVERS:
                out.virtio.append(f"driver: {m.group(1)}")
                out.lines.setdefault("virtio", number)
    if not seen:
        raise ParseError("no 'driver:' line")
    return _finish(out)


@register(
    "virtio_devices",
    commands=(r"^ls(?:\s+-\w+)*\s+/sys/bus/virtio/devices/?\s*$",),
)
def parse_virtio_devices(text: str) -> GuestSignals:
    """``ls /sys/bus/virtio/devices``: one ``virtioN`` per paravirtual device.

    >>> parse_virtio_devices("virtio0\\nvirtio1\\n").virtio
    ['virtio0', 'virtio1']
    """
    out = GuestSignals()
    for number, line in enumerate(text.splitlines(), 1):
        for name in re.findall(r"\bvirtio\d{1,4}\b", line):
            out.virtio.append(name)
            out.lines.setdefault("virtio", number)
    return _finish(out)


@register(
    "lsblk_virtio",
    commands=(r"^lsblk\b",),
)
def parse_lsblk_virtio(text: str) -> GuestSignals:
    """``lsblk``: a ``vdX`` disk is a virtio block device.

    >>> text = "NAME  MAJ:MIN RM  SIZE RO TYPE MOUNTPOINTS\\nvda   254:0    0  256G  0 disk /\\n"
    >>> parse_lsblk_virtio(text).virtio
    ['vda']
    """
    out = GuestSignals()
    for number, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^(vd[a-z]{1,2})\s+\d+:\d+\s.*\bdisk\b", line)
        if m:
            out.virtio.append(m.group(1))
            out.lines.setdefault("virtio", number)
    return _finish(out)
