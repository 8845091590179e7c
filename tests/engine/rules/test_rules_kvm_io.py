"""Disk cache mode and vhost-net on real domain XMLs (RH virtualization tuning guide 5.3, 7.2)."""

from __future__ import annotations

from tests.conftest import CORPUS, FIXTURES

KVMXML = FIXTURES / "published" / "kvmxml"
ZSTACK_HOST = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before" / "zstack-9.txt"
CACHE = "kvm.disk_cache_mode"
VHOST = "kvm.vhost_net_disabled"


def _findings(result, rule):
    return [f for f in result.findings if f.rule == rule]


def test_disk_cache_default_on_a_data_disk_is_info(analyze_texts):
    # the ZStack founding case's hypervisor: vda cache='none', the data disk vdb without a cache mode
    result = analyze_texts(ZSTACK_HOST.read_text())
    assert "kvm.disk_cache_mode" in result.rule_ids
    [finding] = _findings(result, CACHE)
    assert finding.severity == "info"
    assert [e.value for e in finding.evidence] == ["default"]
    assert finding.evidence[0].fact.endswith("disks[vdb].cache")


def test_disk_cache_explicit_writeback_on_a_data_disk_warns(analyze_texts):
    text = ZSTACK_HOST.read_text().replace(
        "<driver name='qemu' type='raw'/>", "<driver name='qemu' type='raw' cache='writeback'/>"
    )
    [finding] = _findings(analyze_texts(text), CACHE)
    assert finding.severity == "warning"
    assert [e.value for e in finding.evidence] == ["writeback"]


def test_disk_cache_fires_on_a_published_guest_with_writeback_and_unsafe(analyze_texts):
    # qemu-devel 2019 (IGD assignment): the W10 guest's whole XML, unedited; its libvirt log in the
    # same mail runs -drive ...cache=writeback and ...cache=unsafe, so the XML was the one in effect
    text = (KVMXML / "qemu-devel-2019-igd-w10-writeback-unsafe.xml").read_text()
    [finding] = _findings(analyze_texts(text, names=["w10.xml"]), CACHE)
    assert finding.severity == "warning"
    assert [(e.fact, e.value) for e in finding.evidence] == [
        ("domains[W10].disks[vda].cache", "writeback"),
        ("domains[W10].disks[vdb].cache", "unsafe"),
    ]


def test_disk_cache_fires_on_a_published_running_xml_quoted_in_a_mail_reply(analyze_texts):
    # LKML 2025 (arm64 boot crash): a running guest's XML as the reply quotes it ("> " on every line),
    # two test disks on cache='unsafe' beside a system disk on the default
    text = (KVMXML / "lkml-2025-btrfs-aarch64-unsafe-quoted.xml").read_text()
    [finding] = _findings(analyze_texts(text, names=["mail.txt"]), CACHE)
    assert finding.severity == "warning"
    assert [(e.fact, e.value) for e in finding.evidence] == [
        ("domains[btrfs-aarch64].disks[vdb].cache", "unsafe"),
        ("domains[btrfs-aarch64].disks[vdc].cache", "unsafe"),
        ("domains[btrfs-aarch64].disks[vdd].cache", "default"),
    ]


def test_disk_cache_on_a_published_xml_with_a_broken_element_is_info(analyze_texts):
    # a 2015 forum post: a Windows guest on a raw partition with cache='unsafe'; the pasted XML lost a
    # </source> inside a <hostdev>, so it is read as partial and the finding stays info
    text = (KVMXML / "forum-2015-ovmf-win-unsafe-blockdev.xml").read_text()
    [finding] = _findings(analyze_texts(text, names=["win7.xml"]), CACHE)
    assert finding.severity == "info" and finding.template == "partial"
    assert [(e.fact, e.value) for e in finding.evidence] == [("domains[win7].disks[vda].cache", "unsafe")]


def test_disk_cache_quiet_on_vendor_tuned_openstack_guests(analyze_texts):
    # RHOSP nova guests: cache='none' on every disk, io='native' on the volume
    for name in ("insights-core_test_qemu_xml_XML_RHOSP.txt", "insights-core_test_qemu_xml_XML_RHOSP_2.txt"):
        result = analyze_texts((CORPUS / "libvirt" / name).read_text(), names=["guest.xml"])
        assert "kvm.disk_cache_mode" not in result.rule_ids, name
        assert "kvm.vhost_net_disabled" not in result.rule_ids, name


def test_disk_cache_quiet_on_a_single_disk_guest_with_default_cache(analyze_texts):
    text = (CORPUS / "libvirt" / "insights-core_test_qemu_xml_RHEL_7_4_XML.txt").read_text()
    assert CACHE not in analyze_texts(text, names=["guest.xml"]).rule_ids


def test_disk_cache_on_a_cut_xml_is_info_or_not_checked(analyze_texts):
    lines = ZSTACK_HOST.read_text().splitlines()
    # cut right after the data disk's <driver> line: what is shown is judged, at info only
    cut = "\n".join(lines[: lines.index("      <driver name='qemu' type='raw'/>") + 1])
    result = analyze_texts(cut)
    assert {f.severity for f in _findings(result, CACHE)} <= {"info"}
    # cut before <devices>: the disks are unseen, the rule is not checked
    early = "\n".join(lines[: next(i for i, ln in enumerate(lines) if "<devices>" in ln)])
    result = analyze_texts(early)
    assert not _findings(result, CACHE)
    assert CACHE in {n.rule for n in result.not_checked}


def test_vhost_quiet_on_a_tcg_nova_guest(analyze_texts):
    # nova with virt_type=qemu writes <driver name='qemu'/>: a TCG guest is out of scope
    text = (KVMXML / "sdndbg-neutron-diag-nova-tcg-instance.xml").read_text()
    result = analyze_texts(text, names=["instance.xml"])
    assert VHOST not in result.rule_ids and CACHE not in result.rule_ids


def test_vhost_fires_on_a_kvm_guest_with_driver_qemu(analyze_texts):
    # the same published nova XML as a KVM guest (the only change: the domain type)
    text = (KVMXML / "sdndbg-neutron-diag-nova-tcg-instance.xml").read_text()
    result = analyze_texts(text.replace("<domain type='qemu'", "<domain type='kvm'"), names=["instance.xml"])
    assert "kvm.vhost_net_disabled" in result.rule_ids
    [finding] = _findings(result, VHOST)
    assert finding.severity == "warning" and finding.template == "managed"
    assert [e.value for e in finding.evidence] == ["qemu", "qemu", "qemu"]


def test_vhost_quiet_without_driver_name(analyze_texts):
    text = (CORPUS / "libvirt" / "insights-core_test_qemu_xml_RHEL_7_4_XML.txt").read_text()
    assert VHOST not in analyze_texts(text, names=["guest.xml"]).rule_ids


# ---------------------------------------------------------------- QEMU command lines

QEMU = FIXTURES / "published" / "qemu"
PINNING_RULES = {
    "kvm.vcpus_unpinned",
    "kvm.emulator_unpinned",
    "kvm.iothread_unpinned",
    "kvm.memory_not_bound",
    "kvm.pinning_spans_nodes",
    "kvm.no_cpu_isolation",
    "kvm.host_contention",
}


def test_vhost_fires_on_a_published_kvm_command_line_with_vhost_off(analyze_texts):
    # cloud-hypervisor issue 369: QEMU with accel=kvm, a virtio-net NIC on -netdev tap,...,vhost=off
    result = analyze_texts((QEMU / "cloud-hypervisor-369-qemu-vhost-off.md").read_text(), names=["issue.md"])
    [finding] = _findings(result, VHOST)
    assert finding.severity == "warning" and finding.template == "cmdline"
    [ev] = finding.evidence
    assert ".qemu_cmdline." in ev.fact and ev.line == 4
    assert ev.value.startswith("-netdev tap,id=mynet0,") and "no vhost=on" in ev.value


def test_vhost_is_info_when_the_command_line_does_not_show_kvm(analyze_texts):
    # torokernel issue 190: qemu-kvm with -net nic,model=virtio -net tap and no accelerator named
    result = analyze_texts(
        (QEMU / "torokernel-190-net-nic-tap-no-vhost.txt").read_text(), names=["issue.txt"]
    )
    [finding] = _findings(result, VHOST)
    assert finding.severity == "info" and finding.template == "cmdline_partial"


def test_vhost_quiet_on_a_published_nova_ps_row_with_vhost_on(analyze_texts):
    # a nova instance's ps -ef row: -netdev tap,...,vhost=on,vhostfd=30, cache=none disks
    result = analyze_texts((QEMU / "nova-ps-ef-qemu-kvm-vhost-on.md").read_text(), names=["notes.md"])
    assert VHOST not in result.rule_ids and CACHE not in result.rule_ids
    # what the line states is judged: 8 single-core sockets
    assert "kvm.flat_socket_topology" in result.rule_ids
    # what it does not show (pinning, numatune, whether the named model shows an L3) is never concluded
    assert not PINNING_RULES & result.rule_ids
    assert "kvm.cpu_model_hides_cache" not in result.rule_ids
    not_checked = {n.rule for n in result.not_checked}
    assert {"kvm.vcpus_unpinned", "kvm.emulator_unpinned", "kvm.memory_not_bound"} <= not_checked


def test_a_large_command_line_guest_is_not_called_unpinned(analyze_texts):
    # libvirt's cpu-numa1 test argv as a KVM guest: 16 vCPUs, two NUMA cells, no pinning on the line
    text = (QEMU / "libvirt-cpu-numa1.args").read_text().replace("-accel tcg", "-accel kvm")
    result = analyze_texts(text, names=["guest.log"])
    assert not PINNING_RULES & result.rule_ids
    assert "kvm.guest_numa_missing" not in result.rule_ids  # two cells are shown


def test_two_command_line_guests_are_not_contention(analyze_texts):
    # two ps rows of QEMU guests: their affinity is not on the command line, so no sharing is concluded
    row = (QEMU / "nova-ps-ef-qemu-kvm-vhost-on.md").read_text().split("```\n")[-2].rstrip("\n")
    other = row.replace("instance-00000024", "instance-00000025").replace("8e5e3e56-d4ec", "9e5e3e56-d4ec")
    result = analyze_texts(f"$ ps -ef | grep qemu\n{row}\n{other.replace(' 2803 ', ' 2804 ')}\n")
    assert "kvm.host_contention" not in result.rule_ids


def test_a_domain_xml_wins_over_the_command_line_of_the_same_guest():
    from collectors.assemble import HostAssembler
    from collectors.parsers.libvirt import parse_domain
    from collectors.parsers.qemu_cmdline import parse_qemu_cmdline

    xml = parse_domain((KVMXML / "sdndbg-neutron-diag-nova-tcg-instance.xml").read_text())
    cmd = (QEMU / "cloud-hypervisor-369-qemu-vhost-off.md").read_text()
    (line,) = parse_qemu_cmdline(cmd.replace("-machine q35", "-name guest=instance-00000001 -machine q35"))
    (other,) = parse_qemu_cmdline(cmd.replace("-machine q35", "-name guest=other -machine q35"))
    assembler = HostAssembler("hv")
    for result in (line, xml, other):
        assembler.add(result)
    host = assembler.finish()
    assert [(d.name, d.origin) for d in host.domains] == [
        ("instance-00000001", "xml"),
        ("other", "qemu_cmdline"),
    ]
