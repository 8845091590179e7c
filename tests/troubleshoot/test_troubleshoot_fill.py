"""Filling the pinning measures in from the rebuilt ZStack host's facts."""

from __future__ import annotations

import copy

import pytest

from collectors.archive import load_host
from collectors.facts import to_dict
from kb.models import Measure
from tests.conftest import FIXTURES
from troubleshoot.fill import fill_commands, placement

ZSTACK = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before"


@pytest.fixture(scope="module")
def host_facts() -> dict:
    return to_dict(load_host(str(ZSTACK / "zstack-9.txt")))


@pytest.fixture(scope="module")
def guest_facts() -> dict:
    return to_dict(load_host(str(ZSTACK / "infoplus-db.txt")))


def test_the_guest_goes_to_the_free_cpus_of_node_1(host_facts, guest_facts):
    place = placement([guest_facts, host_facts])
    # As the write-up did: node 1 (more free memory), odd CPUs, iothread 65, emulator 67.
    assert place["node"] == 1 and place["vcpus"] == 32
    assert place["cpus"] == list(range(1, 64, 2))
    assert (place["iothread"], place["emulator"]) == (65, 67)


def test_cpus_pinned_by_another_guest_are_avoided(host_facts):
    facts = copy.deepcopy(host_facts)
    neighbour = copy.deepcopy(facts["domains"][0])
    neighbour.update(
        name="neighbour", vcpus=4, vcpu_current=4, vcpupin={"0": [1], "1": [3], "2": [5], "3": [7]}
    )
    facts["domains"].append(neighbour)
    place = placement([facts])
    # Node 1 keeps only 32 free CPUs, too few for 32 vCPUs + iothread + emulator: node 0 it is.
    assert place["node"] == 0
    assert not set(place["cpus"]) & {1, 3, 5, 7}
    assert place["cpus"][:3] == [0, 2, 4]


def test_fragments_per_measure(host_facts):
    def fill(slug):
        return fill_commands(Measure(slug=slug), facts=[host_facts])

    assert "<vcpupin vcpu='31' cpuset='63'/>" in fill("pin-vcpus")
    assert "<emulatorpin cpuset='67'/>" in fill("pin-emulator")
    assert "<iothreadpin iothread='1' cpuset='65'/>" in fill("pin-iothreads")
    assert "nodeset='1'" in fill("numatune-memory-binding")
    vnuma = fill("guest-numa-topology")
    assert "cores='32'" in vnuma and "cpus='0-31'" in vnuma and "memory='33554432'" in vnuma
    # Not a pinning measure, or nothing to place it on: the catalogue text is used instead.
    assert fill("zone-reclaim-mode") == ""
    assert fill_commands(Measure(slug="pin-vcpus"), facts=[{}]) == ""
