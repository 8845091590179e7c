"""QEMU command lines read as guests, on published command lines (tests/fixtures/published/README.md):
libvirt's own qemuxml2argv test files, a nova instance's ps row, two issue excerpts."""

from __future__ import annotations

import pytest

from collectors.facts import ParseError, ProcessInfo, ProcessList
from collectors.parsers import load_all
from collectors.parsers.qemu_cmdline import (
    NEVER_SHOWN,
    domain_of_command,
    domains_of_processes,
    looks_like_qemu_command,
    parse_qemu_cmdline,
)
from collectors.transcript import kind_for_command
from tests.conftest import FIXTURES

QEMU = FIXTURES / "published" / "qemu"


def _one(name: str):
    (domain,) = parse_qemu_cmdline((QEMU / name).read_text(encoding="utf-8"))
    return domain


def test_name_uuid_and_tcg_from_a_libvirt_args_file():
    d = _one("libvirt-net-virtio.args")
    assert (d.name, d.uuid, d.domain_type, d.origin) == (
        "QEMUGuest1",
        "c7a5fdbd-edaf-9455-926a-d65c16db1809",
        "qemu",
        "qemu_cmdline",
    )
    assert d.lines["name"] == 11  # "-name QEMUGuest1 \" under the environment lines


def test_name_given_as_guest_key():
    assert (
        _one("libvirt-hugepages-default.args").name == "QEMUGuest1"
    )  # -name guest=QEMUGuest1,debug-threads=on


def test_kvm_from_machine_accel_and_unknown_without_any_accelerator():
    assert _one("nova-ps-ef-qemu-kvm-vhost-on.md").domain_type == "kvm"  # -machine ...,accel=kvm
    assert _one("cloud-hypervisor-369-qemu-vhost-off.md").domain_type == "kvm"  # -machine q35,accel=kvm
    # qemu-kvm without -enable-kvm or accel: not stated, so unknown (not "qemu")
    assert _one("torokernel-190-net-nic-tap-no-vhost.txt").domain_type is None
    assert _one("libvirt-cpu-numa1.args").domain_type == "qemu"  # -accel tcg


def test_smp_gives_vcpus_and_topology():
    d = _one("libvirt-cpu-numa1.args")
    assert (d.vcpus, d.vcpu_current) == (16, 16)
    assert d.topology == {"sockets": 2, "cores": 4, "threads": 2}
    nova = _one("nova-ps-ef-qemu-kvm-vhost-on.md")
    assert nova.topology == {"sockets": 8, "cores": 1, "threads": 1} and "topology" not in nova.unseen
    # a bare -smp N leaves the layout to the QEMU version: unknown
    toro = _one("torokernel-190-net-nic-tap-no-vhost.txt")
    assert toro.vcpus == 8 and toro.topology == {} and "topology" in toro.unseen


def test_smp_maxcpus_is_hotplug():
    (d,) = parse_qemu_cmdline("qemu-system-x86_64 -enable-kvm -smp 4,maxcpus=8,sockets=1,cores=8,threads=1")
    assert (d.vcpus, d.vcpu_current) == (8, 4)


def test_memory_in_its_units():
    assert _one("libvirt-net-virtio.args").memory_kb == 214 * 1024  # -m 214 (MiB)
    assert _one("libvirt-cpu-numa1.args").memory_kb == 219136  # -m size=219136k
    assert _one("torokernel-190-net-nic-tap-no-vhost.txt").memory_kb == 16 * 1024 * 1024  # -m 16G
    (d,) = parse_qemu_cmdline("qemu-system-x86_64 -m size=2G,slots=4,maxmem=8G -smp 2")
    assert (d.memory_kb, d.max_memory_kb, d.max_memory_slots) == (2 << 20, 8 << 20, 4)


def test_cpu_model_and_mode():
    passthrough = _one("cloud-hypervisor-369-qemu-vhost-off.md")  # -cpu host
    assert passthrough.cpu_mode == "host-passthrough" and "l3-cache" not in passthrough.unseen
    nova = _one("nova-ps-ef-qemu-kvm-vhost-on.md")
    assert (nova.cpu_mode, nova.cpu_model) == ("custom", "Haswell-noTSX-IBRS")
    # whether a named model shows an L3 depends on the QEMU version: unknown
    assert "l3-cache" in nova.unseen
    toro = _one("torokernel-190-net-nic-tap-no-vhost.txt")
    assert toro.cpu_mode is None and "cpu" in toro.unseen  # no -cpu shown


def test_numa_cells_from_numa_node():
    d = _one("libvirt-cpu-numa1.args")
    assert [(c.id, c.cpus, c.memory_kb) for c in d.numa_cells] == [
        (0, list(range(8)), 107 * 1024),
        (1, list(range(8, 16)), 107 * 1024),
    ]
    assert "numa" not in d.unseen
    assert "numa" in _one("libvirt-net-virtio.args").unseen


def test_huge_pages_from_mem_path():
    d = _one("libvirt-hugepages-default.args")
    assert d.hugepages and d.hugepage_sizes_kb == [2048]  # /dev/hugepages2M/...
    assert not _one("libvirt-net-virtio.args").hugepages


def test_nic_on_a_tap_without_vhost_is_the_user_space_backend():
    (nic,) = _one("cloud-hypervisor-369-qemu-vhost-off.md").interfaces
    assert (nic.model, nic.kind, nic.driver) == ("virtio", "tap", "qemu")
    assert nic.netdev == "-netdev tap,id=mynet0,ifname=tap0,script=no,downscript=no,vhost=off"
    # the older -net nic,model=virtio / -net tap pair, no vhost option: QEMU's default is off
    (old,) = _one("torokernel-190-net-nic-tap-no-vhost.txt").interfaces
    assert (old.model, old.kind, old.driver, old.netdev) == (
        "virtio",
        "tap",
        "qemu",
        "-net tap,script=/etc/qemu-ifup",
    )


def test_nic_with_vhost_on_and_user_networking():
    (nic,) = _one("nova-ps-ef-qemu-kvm-vhost-on.md").interfaces
    assert (nic.model, nic.kind, nic.driver, nic.mac) == ("virtio", "tap", "vhost", "fa:16:3e:1f:a5:21")
    (user,) = _one("libvirt-net-virtio.args").interfaces
    assert (user.model, user.kind, user.driver) == ("virtio", "user", None)


@pytest.mark.parametrize(
    ("netdev", "driver"),
    [
        ("tap,id=n0,vhostfd=30", "vhost"),
        ("tap,id=n0,vhostforce=on", "vhost"),
        ("tap,id=n0,vhost=off,vhostfd=30", "qemu"),
        ('{"type":"tap","fd":"22","vhost":true,"vhostfd":"23","id":"n0"}', "vhost"),
        ('{"type":"tap","fd":"22","id":"n0"}', "qemu"),
        ("bridge,id=n0,br=br0", "qemu"),
        ("vhost-user,id=n0,chardev=c0", None),
    ],
)
def test_tap_backend_options(netdev, driver):
    (d,) = parse_qemu_cmdline(
        f"qemu-system-x86_64 -accel kvm -netdev {netdev} -device virtio-net-pci,netdev=n0"
    )
    assert d.interfaces[0].driver == driver


def test_disks_and_their_cache_modes():
    d = _one("libvirt-disk-cache.args")  # -drive ...,\ newline cache=... (libvirt's wrapped test lines)
    assert [(k.target, k.device, k.cache) for k in d.disks] == [
        ("ide0-0-0", "disk", "writeback"),
        ("ide0-0-1", "disk", "unsafe"),
        ("scsi0-0-0", "disk", "none"),
        ("virtio-disk0", "disk", "writethrough"),
        ("usb-disk1", "disk", "directsync"),
    ]
    nova = _one("nova-ps-ef-qemu-kvm-vhost-on.md")
    assert [(k.target, k.device, k.cache) for k in nova.disks] == [
        ("virtio-disk0", "disk", "none"),
        ("ide0-0-0", "cdrom", "none"),
    ]
    (plain,) = _one("libvirt-net-virtio.args").disks
    assert plain.cache is None and plain.driver_shown  # no cache=: QEMU's default


def test_blockdev_cache_from_its_node_and_write_cache():
    text = (
        "/usr/bin/qemu-system-x86_64 -accel kvm "
        '-blockdev {"driver":"file","filename":"/v/a.qcow2","node-name":"s1",'
        '"cache":{"direct":true,"no-flush":false}} '
        '-blockdev {"node-name":"f1","driver":"qcow2","file":"s1","cache":{"direct":true,"no-flush":false}} '
        "-device virtio-blk-pci,drive=f1,id=virtio-disk0,write-cache=on "
        '-blockdev {"driver":"file","filename":"/v/b.raw","node-name":"s2"} '
        "-device virtio-blk-pci,drive=s2,id=virtio-disk1"
    )
    (d,) = parse_qemu_cmdline(text)
    assert [(k.target, k.source, k.cache) for k in d.disks] == [
        ("virtio-disk0", "/v/a.qcow2", "none"),
        ("virtio-disk1", "/v/b.raw", None),
    ]


def test_what_libvirt_sets_outside_the_command_line_is_unknown():
    d = _one("nova-ps-ef-qemu-kvm-vhost-on.md")
    assert set(NEVER_SHOWN) <= set(d.unseen)
    assert d.vcpupin == {} and d.emulatorpin is None and not d.numatune_memory_nodeset


def test_ps_row_gives_its_guest_at_its_line():
    command = (
        (QEMU / "nova-ps-ef-qemu-kvm-vhost-on.md").read_text().split("?        4-13:19:24 ")[1].split("\n")[0]
    )
    plist = ProcessList(processes=[ProcessInfo(pid=2803, command=command, line=7)])
    (d,) = domains_of_processes(plist)
    assert d.name == "instance-00000024" and set(d.lines.values()) == {7}
    assert domain_of_command("grep --color=auto qemu-kvm") is None


def test_a_libvirt_log_keeps_the_last_start_of_each_guest():
    one = (QEMU / "libvirt-net-virtio.args").read_text()
    log = f"2024-01-01 10:00:00.000+0000: starting up\n{one}2024-01-02 10:00:00.000+0000: starting up\n"
    log += one.replace("-m 214", "-m 512")
    (d,) = parse_qemu_cmdline(log)
    assert d.memory_kb == 512 * 1024


def test_detection_and_refusal():
    registry = load_all()
    assert registry["qemu_cmdline"].detect((QEMU / "libvirt-net-virtio.args").read_text())
    assert kind_for_command("cat /var/log/libvirt/qemu/instance-00000024.log") == "qemu_cmdline"
    assert not looks_like_qemu_command("we run qemu-system-x86_64 on every host")
    assert not looks_like_qemu_command("grep --color=auto qemu-kvm\n")
    with pytest.raises(ParseError):
        parse_qemu_cmdline("no command line here")


def test_a_sosreport_libvirt_log_is_read_as_command_lines():
    from collectors.transcript import kind_for_path

    assert kind_for_path("sosreport-hv1/var/log/libvirt/qemu/instance-00000024.log") == "qemu_cmdline"


def test_double_quoted_arguments_of_a_run_script():
    # a GPU passthrough run script: -name "...", -drive "if=pflash,...", -netdev "type=tap,...,vhost=on"
    d = _one("gpu-passthrough-run-script-double-quoted.sh")
    assert d.name == "Windows10-QEMU" and d.domain_type == "kvm"
    (nic,) = d.interfaces
    assert (nic.model, nic.kind, nic.driver) == ("virtio", "tap", "vhost")
    # the two if=pflash drives are firmware, the media=cdrom ones CD-ROMs: one disk
    assert [(k.target, k.device, k.cache) for k in d.disks if k.device == "disk"] == [
        ("disk0", "disk", "none")
    ]


def test_drive_cache_given_as_dotted_options():
    # -drive file=hda.img,if=virtio,cache.direct=on: O_DIRECT with the write cache on, libvirt's "none"
    (disk,) = _one("aarch64-kvm-tpm-run-script-cache-direct.sh").disks
    assert (disk.source, disk.cache) == ("hda.img", "none")
    (d,) = parse_qemu_cmdline(
        "qemu-system-x86_64 -enable-kvm -drive file=a.img,if=virtio,cache.direct=on,cache.writeback=off "
        "-drive file=b.img,if=virtio,cache.no-flush=on"
    )
    assert [k.cache for k in d.disks] == ["directsync", "unsafe"]


def test_accelerator_fallback_chain_is_unknown():
    # -accel kvm -accel tcg: QEMU runs the first that works, the line does not say which
    assert _one("niraos-run-accel-kvm-tcg-fallback.sh").domain_type is None
    (d,) = parse_qemu_cmdline("qemu-system-x86_64 -machine q35,accel=kvm:tcg -smp 2")
    assert d.domain_type is None
    (d,) = parse_qemu_cmdline("qemu-system-x86_64 -enable-kvm -machine q35,accel=kvm -smp 2")
    assert d.domain_type == "kvm"


def test_nic_none_is_no_nic():
    # "qemu-system-x86_64 -m 4096 -drive ... --smp cpus=4 -enable-kvm -nic none"
    d = _one("win10-snapshot-nic-none.sh")
    assert (d.domain_type, d.vcpus, d.interfaces) == ("kvm", 4, [])


def test_vhost_value_qemu_does_not_know_is_unknown():
    # the netdev and device lines of a libvirt log quoted in a quoted-printable qemu-devel mail
    # (Launchpad bug 1830864, code index id 5757584256): "=" is written "=3D"
    (d,) = parse_qemu_cmdline(
        "qemu-system-aarch64 -machine virt-4.1,accel=kvm -smp 8 \\\n"
        "  >   -netdev tap,fd=3D29,id=3Dhostnet0,vhost=3Don,vhostfd=3D30 \\\n"
        "  >   -device virtio-net-pci,netdev=3Dhostnet0,id=3Dnet0,mac=3D52:54:00:6f:=\n"
    )
    (nic,) = d.interfaces
    assert (nic.model, nic.kind, nic.driver) == ("virtio", "tap", None)  # not "qemu": not known


def test_many_legacy_net_pairs_are_read_in_linear_time():
    import time

    text = "qemu-kvm -m 1G " + " ".join(
        f"-net nic,model=virtio,vlan={i} -net tap,vlan={i}" for i in range(3000)
    )
    start = time.process_time()  # CPU time: the other processes of a busy CI machine do not count
    (d,) = parse_qemu_cmdline(text)
    assert len(d.interfaces) == 3000 and time.process_time() - start < 2  # was 3.3 s (quadratic)


def test_net_nic_naming_its_netdev():
    # libvirt's form for a NIC model that is no -device: -netdev user,id=hostnet0 then
    # -net nic,macaddr=...,netdev=hostnet0,model=lan9118
    (nic,) = _one("libvirt-arm-vexpressa9-basic.args").interfaces
    assert (nic.model, nic.kind, nic.mac) == ("lan9118", "user", "52:54:00:09:a4:37")


def test_transitional_virtio_blk_is_a_disk():
    (disk,) = _one("libvirt-virtio-non-transitional.args").disks
    assert (disk.target, disk.bus, disk.device) == ("virtio-disk0", "virtio", "disk")
