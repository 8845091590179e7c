"""Guest signals (DMI, systemd-detect-virt, virtio devices) and the machine
splitter (issue 25: "a guest is recognisable: ... virtio devices, DMI
'KVM'/'QEMU'"), on real outputs (tests/fixtures/published/README.md)."""

from __future__ import annotations

from pathlib import Path

from collectors import archive
from collectors.parsers import virt

PUBLISHED = Path(__file__).resolve().parents[1] / "fixtures" / "published"
THIS_VM = PUBLISHED / "this-vm-guest"


def test_dmidecode_system_of_a_qemu_guest_names_the_hypervisor():
    signals = virt.parse_dmi_system((PUBLISHED / "ixhardware-qemu-q35-dmidecode-system.txt").read_text())
    assert (signals.dmi_vendor, signals.dmi_product) == ("QEMU", "Standard PC (Q35 + ICH9, 2009)")
    assert signals.virtual is True
    assert signals.lines["dmi_vendor"] == 7


def test_this_machines_virtio_nic_disk_and_bus_are_guest_signals():
    nic = virt.parse_ethtool_driver((THIS_VM / "ethtool-i-eth0.txt").read_text())
    assert nic.virtio == ["driver: virtio_net"] and nic.virtual is True
    bus = virt.parse_virtio_devices((THIS_VM / "ls-sys-bus-virtio-devices.txt").read_text())
    assert bus.virtio == ["virtio0", "virtio1", "virtio2", "virtio3", "virtio4"] and bus.virtual is True
    disks = virt.parse_lsblk_virtio((THIS_VM / "lsblk.txt").read_text())
    assert disks.virtio == ["vda"] and disks.virtual is True


def test_a_container_type_says_nothing_of_the_machine_under_it():
    # this machine is a KVM guest, but systemd-detect-virt sees the container first
    signals = virt.parse_systemd_detect_virt((THIS_VM / "systemd-detect-virt.txt").read_text())
    assert signals.detected_virt == "docker" and signals.virtual is None


def test_a_physical_nics_driver_is_no_guest_signal():
    signals = virt.parse_ethtool_driver("driver: ixgbe\nversion: 5.1.0-k\nbus-info: 0000:3b:00.0\n")
    assert signals.virtio == [] and signals.virtual is None


def test_a_guest_with_only_dmi_and_virtio_is_a_guest():
    text = (
        "dmidecode -t system\n"
        + (PUBLISHED / "ixhardware-qemu-q35-dmidecode-system.txt").read_text()
        + "\nethtool -i eth0\n"
        + (THIS_VM / "ethtool-i-eth0.txt").read_text()
    )
    (host,) = archive.load(text.encode()).hosts
    assert host.role == "guest" and host.is_guest
    assert host.guest_signals is not None and host.guest_signals.virtio == ["driver: virtio_net"]


def test_host_then_guest_by_dmi_and_virtio_without_ssh_is_split():
    """A physical lscpu, then a guest's DMI 'QEMU' and virtio NIC, with no prompt
    between them: two machines (one on today's main), the guest's facts its own."""
    hosts = archive.load((PUBLISHED / "e5410-host-then-qemu-guest-dmi-virtio.txt").read_bytes()).hosts
    assert len(hosts) == 2
    physical, guest = hosts
    assert physical.role == "physical" and physical.cpu is not None and physical.cpu.cpus == 8
    assert physical.guest_signals is None
    assert guest.role == "guest" and guest.split_reason and "guest/physical" in guest.split_reason
    assert guest.guest_signals is not None and guest.guest_signals.dmi_vendor == "QEMU"
    assert guest.guest_signals.virtio == ["driver: virtio_net"]
    assert guest.cpu is None  # the E5410's CPUs are not the guest's


def test_merged_into_one_host_the_roles_conflict():
    """Where nothing is split (``split=False`` merges), the physical lscpu and
    the guest's DMI are a conflict: the CPU rules are not decided on either."""
    (host,) = archive.load(PUBLISHED / "e5410-host-then-qemu-guest-dmi-virtio.txt", split=False).hosts
    conflicts = {c.fact: c for c in host.conflicts}
    assert "cpu" in conflicts
    assert "a virtual machine" in conflicts["cpu"].values


def test_the_dmi_files_in_sysfs_name_the_hypervisor():
    # the values the ixhardware guest's dmidecode printed, as /sys/class/dmi/id shows them
    assert virt.parse_dmi_sys_vendor("QEMU\n").dmi_vendor == "QEMU"
    assert virt.parse_dmi_product_name("Standard PC (Q35 + ICH9, 2009)\n").virtual is True
