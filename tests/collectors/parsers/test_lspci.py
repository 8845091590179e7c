"""lspci as a guest signal (issue 25: "a guest is recognisable: ... virtio
devices"), on real outputs (tests/fixtures/published/README.md): guests'
virtio and emulated devices make a guest, a bare-metal server's NICs and
Matrox VGA do not, and a host + guest paste keeps the database with the guest."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors import archive
from collectors.facts import ParseError, SnapshotFacts
from collectors.parsers.lspci import parse_lspci, parse_pci_sysfs
from engine.run import analyze
from tests.conftest import CORPUS, ROOT

PUBLISHED = ROOT / "tests" / "fixtures" / "published"
LSPCI = PUBLISHED / "lspci"


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_a_kvm_guests_lspci_names_its_qemu_and_virtio_devices():
    # asokolsky's HTPC: a Q35 guest with a GPU and a NIC passed through
    out = parse_lspci(_read(LSPCI / "asokolsky-htpc-kvm-guest-lspci.txt"))
    assert len(out.devices) == 29 and not out.errors
    signals = out.signals
    assert signals.virtio == [
        "06:03.0 Red Hat, Inc. Virtio memory balloon",
        "06:08.0 Red Hat, Inc. Virtio console",
        "09:01.0 Red Hat, Inc. Virtio SCSI",
    ]
    assert "00:1c.0 Red Hat, Inc. QEMU PCIe Root port" in signals.emulated
    # Q35's host bridge is a real desktop chipset too: a hint, not proof
    assert signals.hints == ["00:00.0 Intel Corporation 82G33/G31/P35/P31 Express DRAM Controller"]
    assert signals.virtual is True
    # the devices passed through are physical and say nothing
    nvidia = next(d for d in out.devices if d.address == "01:00.0")
    assert nvidia.class_name == "VGA compatible controller"
    assert nvidia.name.startswith("NVIDIA Corporation GP108")


def test_a_gce_guests_lspci_v_with_the_old_red_hat_spelling():
    out = parse_lspci(_read(LSPCI / "elasticluster-504-gce-guest-lspci-v.txt"))
    assert [d.address for d in out.devices] == ["00:00.0", "00:01.0", "00:01.3", "00:03.0", "00:04.0"]
    assert out.devices[3].driver == "virtio-pci"
    assert out.signals.emulated == [
        "00:00.0 Intel Corporation 440FX - 82441FX PMC [Natoma]",
        "00:00.0 subsystem Red Hat, Inc Qemu virtual machine",
    ]
    assert len(out.signals.virtio) == 2 and out.signals.virtual is True


@pytest.mark.parametrize(
    "path",
    [LSPCI / "insights-core-cisco-ucs-lspci-k.txt", CORPUS / "pt-summary" / "007" / "lspci_file"],
    ids=["cisco-ucs-82598eb-matrox", "dell-r520-bcm5720-matrox"],
)
def test_a_bare_metal_servers_lspci_says_nothing_of_a_guest(path):
    out = parse_lspci(_read(path))
    assert out.signals.virtio == [] and out.signals.emulated == [] and out.signals.hints == []
    assert out.signals.virtual is None  # no device list proves "physical"
    (host,) = archive.load(path.read_bytes(), name=path.name).hosts
    assert not host.is_guest and host.role != "guest"
    assert host.pci_devices is not None and len(host.pci_devices.devices) == len(out.devices)


def test_the_cisco_servers_nics_and_vga_are_read():
    out = parse_lspci(_read(LSPCI / "insights-core-cisco-ucs-lspci-k.txt"))
    assert len(out.devices) == 44  # the count insights-core's own test asserts
    nic = next(d for d in out.devices if d.address == "06:00.0")
    assert (nic.class_name, nic.driver, nic.subsystem) == (
        "Ethernet controller",
        "ixgbe",
        "Cisco Systems Inc Device 004a",
    )
    assert out.devices[-1].name == "Matrox Electronics Systems Ltd. MGA G200e [Pilot] ServerEngines (SEP1)"


def test_a_guests_lspci_makes_the_snapshot_a_guest():
    for name in ("asokolsky-htpc-kvm-guest-lspci.txt", "elasticluster-504-gce-guest-lspci-v.txt"):
        text = "# lspci\n" + _read(LSPCI / name)
        (host,) = archive.load(text.encode(), name="ticket.txt").hosts
        assert host.role == "guest" and host.is_guest, name
        assert host.guest_signals is not None and host.guest_signals.virtual is True


def test_this_machines_pci_ids_from_sysfs_are_virtio():
    # no lspci on this machine: grep -H . /sys/bus/pci/devices/*/vendor .../device
    text = _read(PUBLISHED / "this-vm-guest" / "grep-sys-bus-pci-devices-vendor-device.txt")
    out = parse_pci_sysfs(text)
    assert [(d.vendor_id, d.device_id) for d in out.devices] == [
        ("8086", "0d57"),
        ("1af4", "1045"),
        ("1af4", "1042"),
        ("1af4", "1041"),
        ("1af4", "1053"),
        ("1af4", "1044"),
    ]
    assert len(out.signals.virtio) == 5 and out.signals.virtual is True
    paste = "# grep -H . /sys/bus/pci/devices/*/vendor /sys/bus/pci/devices/*/device\n" + text
    (host,) = archive.load(paste.encode(), name="ticket.txt").hosts
    assert host.is_guest


def test_lspci_vnn_ids_are_read():
    # the first lines of the GCE node's lspci -vnn (elasticluster PR 504, as the README says)
    out = parse_lspci(
        "00:00.0 Host bridge [0600]: Intel Corporation 440FX - 82441FX PMC [Natoma] [8086:1237] (rev 02)\n"
        "\tSubsystem: Red Hat, Inc Qemu virtual machine [1af4:1100]\n"
        "\tFlags: medium devsel\n"
        "\n"
        "00:01.0 ISA bridge [0601]: Intel Corporation 82371AB/EB/MB PIIX4 ISA [8086:7110] (rev 03)\n"
    )
    bridge = out.devices[0]
    assert (bridge.class_id, bridge.vendor_id, bridge.device_id) == ("0600", "8086", "1237")
    assert bridge.subsystem == "Red Hat, Inc Qemu virtual machine"
    assert out.signals.emulated[0] == "00:00.0 Intel Corporation 440FX - 82441FX PMC [Natoma]"
    assert out.signals.virtual is True


def host_then_guest_lspci_paste() -> bytes:
    """The E5410's lscpu (physical), then a KVM guest's lspci (asokolsky's
    HTPC) and MariaDB variables (evaluation 41, a 20 GiB pool), behind bare
    ``#`` prompts: nothing but the guest's lspci tells the two machines apart."""
    variables = _read(ROOT / "tests" / "evaluation" / "41-mariadb-20g-pool-transcript" / "transcript.txt")
    table = "\n".join(variables.splitlines()[1:658])
    return (
        "# lscpu\n"
        + _read(PUBLISHED / "e5410-lscpu.txt")
        + "\n# lspci\n"
        + _read(LSPCI / "asokolsky-htpc-kvm-guest-lspci.txt")
        + "\n# mysql -e 'SHOW GLOBAL VARIABLES'\n"
        + table
        + "\n"
    ).encode()


def test_host_then_guest_by_lspci_keeps_the_database_with_the_guest():
    # old code: one physical host with the guest's 20 GiB buffer pool and its findings
    hosts = archive.load(host_then_guest_lspci_paste(), name="ticket.txt").hosts
    assert len(hosts) == 2
    physical, guest = hosts
    assert physical.role == "physical" and physical.database is None and physical.cpu.cpus == 8
    assert guest.role == "guest" and "lspci" in (guest.split_reason or "")
    assert guest.database is not None
    assert guest.database.variables["innodb_buffer_pool_size"] == "21474836480"
    result = analyze(SnapshotFacts(hosts=hosts))
    assert not [f for f in result.findings if f.host == physical.label and f.rule.startswith("mysql.")]
    assert {"mysql.large_pages_off", "mysql.buffer_pool_not_persisted"} <= {
        f.rule for f in result.findings if f.host == guest.label
    }


def test_merged_into_one_host_the_guest_lspci_conflicts_with_the_physical_lscpu():
    (host,) = archive.load(host_then_guest_lspci_paste(), name="ticket.txt", split=False).hosts
    conflicts = {c.fact: c for c in host.conflicts}
    assert "a virtual machine" in conflicts["cpu"].values


def test_garbage_and_the_tree_are_parse_errors():
    with pytest.raises(ParseError):
        parse_lspci("-[0000:00]-+-00.0  Intel Corporation 440FX - 82441FX PMC [Natoma]\n")
    with pytest.raises(ParseError):
        parse_lspci("hello\n\x00\x01")
    with pytest.raises(ParseError):
        parse_pci_sysfs("not sysfs\n")
