"""Property test of the placement planner over random hosts and guests.

Hosts: 1-8 nodes, 1-12 cores per node, SMT on or off, x86-style sibling
numbering (c, c + CPUs/2), random pins of other guests and a random isolcpus
set. Whatever the planner answers must be valid or a NoRemedy with a reason.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.remedies.base import NoRemedy
from engine.remedies.topology import HOUSEKEEPING_CPU, HostTopology, check_placement, plan_placement


@st.composite
def hosts(draw):
    nodes = draw(st.integers(1, 8))
    cores = draw(st.integers(1, 12))
    smt = draw(st.booleans())
    per_thread = nodes * cores  # CPUs per SMT thread rank
    node_cpus: dict[int, tuple[int, ...]] = {}
    core_groups = []
    for n in range(nodes):
        firsts = list(range(n * cores, (n + 1) * cores))
        groups = [(c, c + per_thread) if smt else (c,) for c in firsts]
        core_groups += groups
        node_cpus[n] = tuple(sorted(c for g in groups for c in g))
    all_cpus = sorted(c for cpus in node_cpus.values() for c in cpus)
    pinned = draw(st.lists(st.sampled_from(all_cpus), max_size=len(all_cpus), unique=True))
    isolated = draw(st.lists(st.sampled_from(all_cpus), max_size=len(all_cpus), unique=True))
    free_kb = {n: draw(st.one_of(st.none(), st.integers(0, 64 * 1024 * 1024))) for n in node_cpus}
    return HostTopology(
        nodes=node_cpus,
        cores=tuple(core_groups),
        free_kb=free_kb,
        hugepage_kb=2048,
        hugepages_free={n: draw(st.integers(0, 20000)) for n in node_cpus},
        isolated=frozenset(isolated),
        used={c: f"guest{c % 3}" for c in pinned},
        distances={(a, b): 10 if a == b else 21 for a in node_cpus for b in node_cpus},
    )


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    topo=hosts(),
    vcpus=st.integers(1, 64),
    memory_gib=st.one_of(st.none(), st.integers(1, 128)),
    iothreads=st.lists(st.integers(1, 8), max_size=3, unique=True),
)
def test_plans_are_valid_or_explained(topo, vcpus, memory_gib, iothreads):
    memory_kb = memory_gib * 1024 * 1024 if memory_gib else None
    plan = plan_placement(topology=topo, vcpus=vcpus, memory_kb=memory_kb, iothread_ids=iothreads)
    if isinstance(plan, NoRemedy):
        assert plan.reason and len(plan.reason) > 20
        return
    assert check_placement(plan, topo) == []
    # the invariants, spelled out independently of check_placement
    pins = plan.vcpupin
    assert sorted(pins) == list(range(vcpus))
    assert len(set(pins.values())) == vcpus, "two vCPUs on one CPU"
    node_of = topo.node_of
    extra = set(plan.emulator_cpus) | {c for cpus in plan.iothread_cpus.values() for c in cpus}
    everything = set(pins.values()) | extra
    assert everything <= set(node_of), "CPU out of range"
    assert not everything & set(topo.used), "CPU shared with another guest"
    assert HOUSEKEEPING_CPU not in set(pins.values())
    core_of = {c: g for g in topo.cores for c in g}
    for cpu in everything:  # no core is split between this guest and another
        assert not set(core_of[cpu]) & set(topo.used)
    if plan.threads == 2:
        for v in range(0, vcpus, 2):
            assert core_of[pins[v]] == core_of[pins[v + 1]], "siblings not on consecutive vCPUs"
    for cell in plan.cells:
        assert {node_of[c] for c in cell.host_cpus} == {cell.node}
        free = topo.free_kb.get(cell.node)
        if memory_kb and free is not None:
            assert cell.memory_kb <= free
    if memory_kb:
        assert sum(c.memory_kb for c in plan.cells) == memory_kb
    assert set(plan.iothread_cpus) == set(iothreads)
    assert plan.sockets * plan.cores * plan.threads == vcpus
    sizes = {len(c.vcpus) for c in plan.cells}
    assert len(sizes) == 1, "cells are balanced"


def test_isolated_cores_go_to_vcpus_and_housekeeping_to_the_emulator():
    topo = HostTopology(nodes={0: tuple(range(8))}, isolated=frozenset({4, 5, 6, 7}))
    plan = plan_placement(topology=topo, vcpus=4, memory_kb=None)
    assert set(plan.vcpupin.values()) == {4, 5, 6, 7}
    assert plan.emulator_cpus == (1,)


def test_no_spare_cpu_shares_the_guests_cpus_with_a_note():
    topo = HostTopology(nodes={0: (0, 1, 2)})
    plan = plan_placement(topology=topo, vcpus=2, memory_kb=None, iothread_ids=[1])
    assert plan.emulator_cpus == (1, 2) and plan.iothread_cpus == {1: (1, 2)}
    assert any("no spare CPU" in n for n in plan.notes)


def test_odd_vcpus_on_smt_host_keep_siblings_but_say_threads_1():
    topo = HostTopology(nodes={0: tuple(range(8))}, cores=((0, 4), (1, 5), (2, 6), (3, 7)))
    plan = plan_placement(topology=topo, vcpus=3, memory_kb=None)
    assert plan.vcpupin == {0: 1, 1: 5, 2: 2}
    assert plan.emulator_cpus == (6,)  # the idle sibling of vCPU 2's core belongs to this guest
    assert (plan.sockets, plan.cores, plan.threads) == (1, 3, 1)
    assert check_placement(plan, topo) == []
