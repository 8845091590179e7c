"""``from_dict`` rebuilds stored facts (``to_dict`` JSON) so rules can run again
over what a snapshot stored, without the upload: the cluster page relies on it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collectors.archive import load_snapshot
from collectors.facts import HostFacts, NumaNode, SnapshotFacts, from_dict, to_dict
from engine.run import analyze, finding_to_dict
from tests.conftest import FIXTURES

SEED_FOLDERS = sorted(p for p in (FIXTURES / "seeds").glob("*/*") if p.is_dir())


def _stored(host: HostFacts) -> dict:
    return json.loads(json.dumps(to_dict(host)))  # what a JSONField gives back


@pytest.mark.parametrize("folder", SEED_FOLDERS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_stored_facts_give_the_same_findings(folder):
    snapshot = load_snapshot(sorted(folder.iterdir()))
    rebuilt = SnapshotFacts(hosts=[from_dict(HostFacts, _stored(h)) for h in snapshot.hosts])
    for original, again in zip(snapshot.hosts, rebuilt.hosts, strict=True):
        assert to_dict(again) == _stored(original)
    before = [finding_to_dict(f) for f in analyze(snapshot).findings]
    assert [finding_to_dict(f) for f in analyze(rebuilt).findings] == before


def test_int_keys_and_nested_dataclasses_come_back_typed():
    host = from_dict(HostFacts, {"numa": {"nodes": {"1": {"node": 1, "size_mb": 512}}}, "unknown": 1})
    assert isinstance(host.numa.nodes[1], NumaNode) and host.numa.nodes[1].size_mb == 512
    assert host.numa_node_count() == 1 and host.benchmarks == []


def test_parsers_mem_facts_round_trip():
    """Facts of this machine's memory/CPU commands pasted after prompts come back typed."""
    import os

    from collectors.facts import ProcessNuma, VmstatSample
    from tests.collectors.parsers.machine import paste, run

    host = paste(
        (f"numastat -p {os.getpid()}", run(f"numastat -p {os.getpid()}", tool="numastat", package="numactl")),
        ("cat /proc/self/numa_maps", Path("/proc/self/numa_maps").read_text()),
        ("vmstat 1 2", run("vmstat 1 2", package="procps")),
        ("free -m", run("free -m", package="procps")),
        ("ps -eo pid,psr,pcpu,comm", run("ps -eo pid,psr,pcpu,comm", package="procps")),
        ("taskset -cp 1", run("taskset -cp 1", package="util-linux")),
        ("sar -n DEV 1 1", run("sar -n DEV 1 1", tool="sar", package="sysstat")),
    )
    again = from_dict(HostFacts, _stored(host))
    assert to_dict(again) == _stored(host)
    assert isinstance(again.process_numa[0], ProcessNuma) and 0 in again.process_numa[0].node_mb
    assert isinstance(again.vmstat.samples[0], VmstatSample)
    assert again.processes.processes[0].psr is not None
    assert again.affinities[0].cpus and again.net_dev.interfaces and again.meminfo.origin == "free"
