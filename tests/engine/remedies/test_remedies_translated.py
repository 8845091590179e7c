"""Remedy titles, notes and the planner's "cannot help" reasons are UI text:
the engine returns them in the active language (a request's, set by the view),
through gettext like every other text the engine builds for a page. A playbook
is written in English whatever the reader's language (docs/remedies.md)."""

from __future__ import annotations

import re

import pytest
from django.utils import translation

from engine.remedies import database, host, openstack, servers, topology
from engine.remedies.libvirt import domain_remedy
from engine.remedies.topology import HostTopology, plan_placement
from tests.conftest import CORPUS

CJK = re.compile(r"[\u4e00-\u9fff]")


def _english_only(texts) -> list[str]:
    return [t for t in texts if t and not CJK.search(t)]


def test_titles_and_reasons_follow_the_active_language():
    with translation.override("zh-hans"):
        assert openstack.nova_cpu_mode().title == "将宿主机 CPU（及其 L3 缓存）透传给实例"
        flavor = openstack.flavor_properties(flavor="f", vcpus=32, numa_nodes=4)
        assert flavor.title == "规格 f 的虚拟机 NUMA 拓扑"
        assert topology.host_topology(host=None).reason.startswith("没有宿主机信息")
    with translation.override("en"):
        assert openstack.nova_cpu_mode().title == "Pass the host CPU (and its L3 cache) through to instances"


def _host_generator_notes() -> list[str]:
    notes = [
        *host.irq_affinity(irqs=[40, 41], cpus=[2, 3], device="eth0", rx_queues=1).notes,
        *openstack.nova_cpu_mode().notes,
        *openstack.flavor_properties(flavor="f", vcpus=32, numa_nodes=4).notes,
        *database.mycnf_lines(settings={"large_pages": True}).notes,
        *database.oceanbase_parameters(parameters={"net_thread_count": 6}).notes,
    ]
    for kind, version, family in [
        ("mariadb", "10.4.14-MariaDB-log", None),
        ("mariadb", None, "rhel"),
        (None, "10.11.6", "debian"),
        ("mysql", "5.7.44", "rhel"),
        ("mysql", "8.0.36", None),
    ]:
        notes.append(servers.packaging(kind, version, family).note)
    return notes


def _planner_notes() -> list[str]:
    smt = HostTopology(nodes={0: tuple(range(8))}, cores=((0, 4), (1, 5), (2, 6), (3, 7)))
    three = HostTopology(nodes={0: (0, 1, 2)})
    plans = [
        plan_placement(topology=three, vcpus=2, memory_kb=None, iothread_ids=[1]),
        plan_placement(topology=smt, vcpus=3, memory_kb=None),
        # node memory unknown, and too few huge pages
        plan_placement(
            topology=HostTopology(nodes={0: tuple(range(8))}, free_kb={0: None}, hugepage_kb=2048),
            vcpus=2,
            memory_kb=4 * 1024 * 1024,
        ),
    ]
    return [n for p in plans for n in p.notes]


def test_every_note_of_the_generators_is_in_chinese_for_a_chinese_reader():
    with translation.override("zh-hans"):
        notes = _host_generator_notes() + _planner_notes()
    assert len(notes) >= 10
    assert _english_only(notes) == []
    # the same notes stay English for an English reader
    with translation.override("en"):
        assert any(n.startswith("not persistent: ") for n in _host_generator_notes())
        assert any("no spare CPU" in n for n in _planner_notes())


@pytest.mark.parametrize("as_kvm", [False, True], ids=["as-is", "as-kvm"])
def test_every_corpus_patch_note_and_reason_is_in_chinese(zstack_host, as_kvm):
    """Every domain XML of the shared corpus, patched or refused on the ZStack
    seed host: notes (hot-plug removed, hugepage cells dropped, disks without
    an iothread, SMT threads ...), titles and reasons are all translated."""
    texts = []
    with translation.override("zh-hans"):
        for path in sorted((CORPUS / "libvirt").iterdir()):
            xml = path.read_text(encoding="utf-8", errors="replace")
            if as_kvm:
                xml = re.sub(r"<domain type=(['\"])qemu\1", "<domain type='kvm'", xml, count=1)
            result = domain_remedy(domain_xml=xml, host=zstack_host)
            texts += [*result.notes, result.title if result.ok else result.reason]
    assert len(texts) > 55
    assert _english_only(texts) == []
