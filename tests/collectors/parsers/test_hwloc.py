"""hwloc-ls / lstopo text parser on published outputs (origins in
tests/fixtures/published/README.md and the evaluation snapshot's SOURCE.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.archive import load
from collectors.facts import CpuTopology, NumaTopology, ParseError
from collectors.parsers.hwloc import parse_hwloc_ls
from tests.collectors.parsers.lookup import detect, for_command

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = ROOT / "fixtures" / "published"
SUSANOW = ROOT / "evaluation" / "101-susanow-lscpu-ja-hwloc-cpuinfo" / "lscpu_xeon_e5_2603v4.md"


def _split(results: list) -> tuple[CpuTopology, NumaTopology]:
    cpu = next(r for r in results if isinstance(r, CpuTopology))
    numa = next(r for r in results if isinstance(r, NumaTopology))
    return cpu, numa


def _cut(name: str) -> tuple[str, CpuTopology, NumaTopology]:
    text = (PUBLISHED / name).read_text(encoding="utf-8")
    with pytest.raises(ParseError) as err:
        parse_hwloc_ls(text)
    # the error points at the last line of the file, the one cut short
    assert err.value.line == len(text.splitlines())
    cpu, numa = _split(err.value.partial)
    return err.value.message, cpu, numa


def test_hwloc_1x_numa_node_holding_its_socket():
    """susanow: hwloc 1.x, 'NUMANode L#1 (P#1 16GB) + Socket L#1 + L3 L#1' and an I/O tree."""
    lines = SUSANOW.read_text(encoding="utf-8").splitlines()
    text = "\n".join(lines[lines.index("$ hwloc-ls") : lines.index("$ lscpu")])
    cpu, numa = _split(parse_hwloc_ls(text))
    assert numa.nodes[0].cpus == [0, 2, 4, 6, 8, 10]
    assert numa.nodes[1].cpus == [1, 3, 5, 7, 9, 11]
    assert numa.nodes[0].size_mb == numa.nodes[1].size_mb == 16 * 1024
    assert numa.lines["node.1.size"] == 35  # "  NUMANode L#1 (P#1 16GB) + Socket L#1 ..."
    assert (cpu.cpus, cpu.sockets, cpu.cores_per_socket, cpu.threads_per_core) == (12, 2, 6, 1)
    assert cpu.numa_nodes == 2
    assert cpu.numa_node_cpus == {0: [0, 2, 4, 6, 8, 10], 1: [1, 3, 5, 7, 9, 11]}
    assert cpu.caches == {"L3": "15MB", "L2": "256KB", "L1d": "32KB", "L1i": "32KB"}
    assert cpu.has_l3


def test_hwloc_2x_verbose_one_node_under_machine_smt():
    cpu, numa = _split(parse_hwloc_ls((PUBLISHED / "hwloc-test-16em64t-4s2c2t.console").read_text()))
    assert list(numa.nodes) == [0]
    assert numa.nodes[0].cpus == list(range(16))
    assert numa.nodes[0].size_mb == 16 * 1024  # local=16GiB
    assert (cpu.cpus, cpu.sockets, cpu.cores_per_socket, cpu.threads_per_core) == (16, 4, 2, 2)
    assert cpu.caches["L3"] == "4096KiB"
    # lstopo -v names the model: a NetBurst Xeon (one front-side bus, uniform memory)
    assert cpu.model_name == "Intel(R) Xeon(TM) CPU 2.60GHz"
    assert "L1i" not in cpu.caches


def test_lines_wrapped_mid_attributes_are_not_cuts():
    """lstopo -v lines wrapped by a terminal or a mail, as in cyring/CoreFreq issue 54
    ('Package L#0 (P#0 ... CPUModel="AMD Ryzen 5 3600 6-Core' / 'Processor ... CPUStepping=0)')."""
    text = (PUBLISHED / "hwloc-test-16em64t-4s2c2t.console").read_text()
    wrapped = text.replace('CPUModel="Intel(R) Xeon(TM) CPU', 'CPUModel="Intel(R) Xeon(TM)\nCPU')
    assert wrapped.count("\nCPU 2.60GHz") == 4
    cpu, numa = _split(parse_hwloc_ls(wrapped))
    assert (cpu.cpus, cpu.sockets, cpu.cores_per_socket, cpu.threads_per_core) == (16, 4, 2, 2)
    assert numa.nodes[0].cpus == list(range(16))


def test_hwloc_2x_verbose_eight_packages_each_with_its_node():
    cpu, numa = _split(parse_hwloc_ls((PUBLISHED / "hwloc-test-16amd64-8n2c.console").read_text()))
    assert list(numa.nodes) == list(range(8))
    assert numa.nodes[0].size_mb == 8190
    assert numa.nodes[7].size_mb == 8192
    assert numa.nodes[3].cpus == [6, 7]
    assert (cpu.sockets, cpu.cores_per_socket, cpu.threads_per_core, cpu.numa_nodes) == (8, 2, 1, 8)
    # lstopo -v's latency matrix, by logical indexes (here equal to P#)
    assert numa.distance_nodes == list(range(8))
    assert numa.distances[2] == [20, 20, 10, 20, 20, 20, 20, 20]
    assert numa.lines["distances"] == 106
    assert numa.lines["node.3.size"] == 39  # "    NUMANode L#3 (P#3 local=8192MiB ...)"


def test_latency_matrix_cut_is_reported_and_dropped():
    lines = (PUBLISHED / "hwloc-test-16amd64-8n2c.console").read_text().splitlines()
    with pytest.raises(ParseError, match="distance table incomplete: 5 of 8 rows") as err:
        parse_hwloc_ls("\n".join(lines[:112]))  # the paste ends after row 4
    _cpu, numa = _split(err.value.partial)
    assert numa.distances == [] and len(numa.nodes) == 8


def test_cut_mid_object_keeps_what_was_read():
    message, cpu, numa = _cut("hwloc-bridges-rm-lstopo-no-graphics.txt")
    assert "cut short at 'PU L#13 (P#20'" in message
    assert "nodes incomplete" in message  # 64 GB of the Machine's 128 GB
    assert numa.nodes[0].cpus == [0, 1, 2, 3, 4, 5, 6, 14, 15, 16, 17, 18, 19]
    assert numa.nodes[0].size_mb == 64 * 1024
    assert cpu.threads_per_core == 1


def test_cut_at_a_bare_cache_name_smt_on_own_lines():
    message, cpu, numa = _cut("hwloc-epyc-smt-lstopo.txt")
    assert "cut short at 'L2'" in message
    assert numa.nodes[0].cpus[:4] == [0, 1, 2, 3]
    assert 128 in numa.nodes[0].cpus
    assert cpu.threads_per_core == 2
    assert cpu.cpus == 22


def test_hwloc_1x_node_inside_package_with_io_tree_cut_after_plus():
    message, cpu, numa = _cut("hwloc-opteron-magnycours-lstopo-1x.txt")
    assert "cut short at 'L1d L#8 (64KB) +'" in message
    assert numa.nodes[0].cpus == [0, 4, 8, 12, 16, 20]
    assert numa.nodes[0].size_mb == 7950
    assert numa.nodes[1].cpus == [24, 28]
    assert numa.nodes[1].size_mb == 8063
    assert cpu.sockets == 1


def test_registered_by_command_and_content():
    assert for_command("hwloc-ls").kind == "hwloc_ls"
    assert for_command("lstopo-no-graphics -v").kind == "hwloc_ls"
    assert for_command("lstopo --of console").kind == "hwloc_ls"
    text = (PUBLISHED / "hwloc-test-16em64t-4s2c2t.console").read_text()
    assert detect(text).kind == "hwloc_ls"


def test_not_hwloc_is_a_parse_error():
    with pytest.raises(ParseError, match="no 'PU"):
        parse_hwloc_ls("Machine (31GB)\nsomething else\n")


def test_transcript_fills_the_host_numa_topology(tmp_path):
    path = tmp_path / "paste.txt"
    path.write_text((PUBLISHED / "hwloc-test-16amd64-8n2c.console").read_text(), encoding="utf-8")
    host = load(path, split=False).host
    assert host.numa is not None
    assert sorted(host.numa.nodes) == list(range(8))
    assert host.numa.nodes[5].cpus == [10, 11]
    assert host.cpu is not None and host.cpu.sockets == 8


def test_io_tree_does_not_end_the_transcript_output(tmp_path):
    """The PCI / Net / Block lines under node 0 stay inside the lstopo output."""
    path = tmp_path / "paste.txt"
    path.write_text((PUBLISHED / "hwloc-opteron-magnycours-lstopo-1x.txt").read_text(), encoding="utf-8")
    host = load(path, split=False).host
    assert [a["kind"] for a in host.artifacts] == ["hwloc_ls"]
    assert host.numa is not None and host.numa.nodes[1].cpus == [24, 28]
    assert any("cut short" in e.message for e in host.errors)
