"""One paste, several machines (issue 25, point 4): a paste that shows two
machines without a prompt naming them is split, or its conflicting facts are
listed, never merged silently. Every paste is built from real outputs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from collectors.archive import load
from collectors.facts import SnapshotFacts, from_dict, to_dict
from collectors.machines import machine_boundaries, split_repeated_outputs
from collectors.transcript import read_transcript
from engine.run import analyze
from tests.conftest import CORPUS, FIXTURES, ROOT

EVALUATION = ROOT / "tests" / "evaluation"


def one_node_numactl() -> str:
    """pt-summary sample 006 (percona-toolkit): one node, distances [[10]]."""
    return (CORPUS / "numactl" / "percona-toolkit_pt-summary_006_numactl.txt").read_text()


def eight_node_numactl() -> str:
    """tp-libvirt PR 3172's beaker machine: 8 nodes, remote distance 32."""
    text = (EVALUATION / "73-tp-libvirt-8node-memoryless-pre" / "comment.txt").read_text()
    body = text.split("<pre>numactl --hardware\n", 1)[1].split("</pre>", 1)[0]
    return body + "\n"


def two_numactl_paste() -> bytes:
    return (one_node_numactl() + "\n" + eight_node_numactl()).encode()


def host_and_guest_paste() -> bytes:
    """The ZStack seed's hypervisor (prompts naming zstack-9), then a KVM
    guest's MariaDB (20 GiB pool), huge pages, free, numactl -H and lscpu
    behind a bare ``#`` prompt: no ``ssh`` line, no prompt naming the guest."""
    host = (FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before" / "zstack-9.txt").read_text()
    host = "\n".join(
        line
        for line in host.splitlines()
        if not line.startswith("```") and line.strip() != "[root@zstack-9 ~]#"
    )
    guest = (EVALUATION / "41-mariadb-20g-pool-transcript" / "transcript.txt").read_text()
    guest = re.sub(r"(?m)^root@vm:~# ", "# ", guest)
    return (host + "\n" + guest).encode()


def test_two_numactl_outputs_are_two_machines() -> None:
    # old code: one block, "distance table unreadable", 2 nodes merged with no distances
    hosts = load(two_numactl_paste(), name="page.txt").hosts
    assert len(hosts) == 2
    first, second = hosts
    assert first.numa_node_count() == 1 and first.numa.distances == [[10]]
    assert second.numa_node_count() == 8
    assert second.numa.distances[0] == [10, 16, 16, 16, 32, 32, 32, 32]
    assert second.split_reason and "NUMA nodes differ" in second.split_reason
    assert not first.errors and not second.errors
    # every line is read once, over both machines
    lines = sum(h.reading.lines for h in hosts)
    assert lines == len(two_numactl_paste().decode().split("\n"))


def test_two_numactl_outputs_keep_the_distance_finding() -> None:
    hosts = load(two_numactl_paste(), name="page.txt").hosts
    result = analyze(SnapshotFacts(hosts=hosts))
    fired = {(f.rule, f.host) for f in result.findings}
    assert ("numa.high_remote_distance", hosts[1].label) in fired
    assert not any(f.host == hosts[0].label for f in result.findings if f.rule.startswith("numa."))


def test_merged_into_one_host_the_outputs_conflict() -> None:
    # load_host merges everything: the disagreement is listed, and the rules
    # deciding on the node count or distances are not checked
    host = load(two_numactl_paste(), name="page.txt", split=False).host
    facts = {c.fact: c for c in host.conflicts}
    assert set(facts) >= {"numa", "numa_distances"}
    assert facts["numa"].values == ["1", "8"]
    assert facts["numa_distances"].lines == [5, 40]
    result = analyze(SnapshotFacts(hosts=[host]))
    assert not {f.rule for f in result.findings} & {"numa.high_remote_distance", "numa.memoryless_node"}
    reasons = {n.rule: n.reason for n in result.not_checked}
    assert reasons["numa.high_remote_distance"].startswith("conflicting values")
    # conflicts survive storage
    again = from_dict(type(host), to_dict(host))
    assert again.conflicts == host.conflicts


def test_host_and_guest_without_ssh_line_are_two_machines() -> None:
    # old code: one host with 72 CPUs, the guest's database (20 GiB pool) on the
    # hypervisor, "no huge pages" among the hypervisor's findings because of it
    hosts = load(host_and_guest_paste(), name="ticket.txt").hosts
    assert [h.label for h in hosts] == ["zstack-9", "vm"]
    hypervisor, guest = hosts
    assert hypervisor.database is None
    assert hypervisor.logical_cpus() == 72 and hypervisor.numa_node_count() == 2
    assert guest.database is not None and guest.database.variables["innodb_buffer_pool_size"] == "21474836480"
    assert guest.role == "guest" and guest.logical_cpus() == 2
    assert "runs on vm, not on zstack-9" in (guest.split_reason or "")
    result = analyze(SnapshotFacts(hosts=hosts))
    on_hypervisor = {f.rule for f in result.findings if f.host == "zstack-9"}
    assert not {r for r in on_hypervisor if r.startswith("mysql.")}
    assert {"mysql.large_pages_off", "mysql.buffer_pool_not_persisted"} <= {
        f.rule for f in result.findings if f.host == "vm"
    }


def test_same_output_twice_is_one_machine() -> None:
    text = (one_node_numactl() + "\n" + one_node_numactl()).encode()
    hosts = load(text, name="twice.txt").hosts
    assert len(hosts) == 1 and not hosts[0].conflicts


def test_split_repeated_outputs_keeps_lines() -> None:
    split = read_transcript(two_numactl_paste().decode())
    assert len(split.blocks) == 1  # the splitter sees one run of numactl output
    blocks = split_repeated_outputs(list(split.blocks), split.parsed)
    assert [(b.start_line, b.end_line) for b in blocks] == [(1, 14), (15, 49)]
    bounds = machine_boundaries(blocks, [0], {})
    assert [b.line for b in bounds] == [15]


@pytest.mark.parametrize("name", ["zstack-9.txt", "infoplus-db.txt"])
def test_one_machine_pastes_are_not_split(name: str) -> None:
    data = (FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before" / name).read_bytes()
    hosts = load(data, name=name).hosts
    assert len(hosts) == 1 and not hosts[0].conflicts and hosts[0].split_reason is None


def test_corpus_lscpu_with_parse_outputs_is_one_machine() -> None:
    # util-linux's samples hold the summary, then lscpu --parse and --parse --physical
    path: Path = CORPUS / "lscpu" / "util-linux_lscpu-x86_64-64cpu-linux6.2.txt"
    hosts = load(path.read_bytes(), name=path.name).hosts
    assert len(hosts) == 1 and not hosts[0].conflicts
