"""A pt-summary sample directory loads as one host: what is recognised is parsed,
the rest is listed, and nothing raises."""

from __future__ import annotations

from collectors.archive import load, load_snapshot
from collectors.facts import to_dict


def test_pt_summary_directory_as_one_host(corpus):
    folder = corpus / "pt-summary" / "007"
    host = load(folder, split=False).host
    names = {a["name"] for a in host.artifacts}
    assert "numactl" in names and "sysctl" in names
    # two NUMA nodes from `numactl`, sysctl values from `sysctl`
    assert sorted(host.numa.nodes) == [0, 1]
    assert host.sysctl and host.sysctl.values
    # every error names its artifact, and the host is still JSON-serialisable
    for err in host.errors:
        assert err.artifact and err.message
    assert to_dict(host)["numa"]["nodes"]["0"]["node"] == 0


def test_snapshot_of_two_paths(corpus, seeds_dir):
    snapshot = load_snapshot([corpus / "pt-summary" / "007", sorted(seeds_dir.glob("002_*.txt"))[0]])
    assert len(snapshot.hosts) == 2
    assert [h.is_guest for h in snapshot.hosts] == [False, True] or snapshot.hosts[0].cpu is None
    assert snapshot.guests()
