"""numactl -H parser: seed 003, pt-summary corpus and this machine."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from collectors.archive import load
from collectors.facts import ParseError
from collectors.parsers.numactl import parse_numactl_hardware, parse_numactl_show
from tests.collectors.parsers.lookup import detect, for_command, for_path
from tests.conftest import service_unavailable


def _require(tool: str, package: str) -> None:
    """Skip on a developer box without the tool; fail in CI, which must install it."""
    if shutil.which(tool) is None:
        service_unavailable(f"{tool} not installed (apt-get install -y {package})")


def test_seed_003_two_nodes(seeds_dir):
    text = next(seeds_dir.glob("003_*.txt")).read_text(encoding="utf-8")
    lines = text.splitlines()
    start = lines.index("# numactl -H")
    hw = parse_numactl_hardware("\n".join(lines[start : start + 8]))
    assert hw.available == 2
    assert hw.nodes[0].size_mb == 32722
    assert hw.nodes[1].size_mb == 32768
    assert hw.nodes[0].free_mb == 24803
    assert hw.nodes[1].free_mb == 28378
    assert hw.nodes[0].cpus == [0, 2, 4, 6, 8, 10]
    assert hw.nodes[1].cpus == [1, 3, 5, 7, 9, 11]
    assert hw.lines["node.1.size"] == 7  # the prompt line is line 1
    assert hw.distances == []  # the seed quotes no distance table


def test_distances_and_show_policy(corpus):
    hw = parse_numactl_hardware(
        (corpus / "numactl" / "percona-toolkit_pt-summary_007_numactl.txt").read_text()
    )
    assert hw.distance_nodes == [0, 1]
    assert hw.distances == [[10, 20], [20, 10]]
    assert hw.policy == "default"
    assert hw.nodes[1].mem_total_kb() == 96762 * 1024


def test_no_numa_is_a_parse_error():
    with pytest.raises(ParseError, match="no NUMA"):
        parse_numactl_hardware("No NUMA available on this system\n")
    with pytest.raises(ParseError):
        parse_numactl_hardware("node distances:\n")


def test_registry():
    assert for_command("numactl -H").kind == "numactl_hardware"
    assert for_command("numactl --hardware").kind == "numactl_hardware"
    assert for_path("sosreport/sos_commands/numa/numactl_--hardware").kind == "numactl_hardware"
    assert detect("available: 1 nodes (0)\nnode 0 cpus: 0 1\n").kind == "numactl_hardware"


def test_this_machine():
    _require("numactl", "numactl")
    text = subprocess.run(["numactl", "-H"], capture_output=True, text=True, check=True).stdout
    hw = parse_numactl_hardware(text)
    assert hw.available == len(hw.nodes) >= 1
    assert sum(len(n.cpus) for n in hw.nodes.values()) >= 1
    assert len(hw.distances) == len(hw.distance_nodes) == hw.available
    assert all(n.size_mb and n.size_mb >= (n.free_mb or 0) for n in hw.nodes.values())


# what-when-how.com, "Expert Consolidation in Oracle Database 12c" p. 91 (as stored):
# the excerpt starts below the header, so node 0 has no "cpus:" line
ORACLE_CUT = """node 0 size: 8190 MB
node 0 free: 1622 MB
node 1 cpus: 6 7 8 9 10 11
node 1 size: 8192 MB
node 1 free: 41 MB
node 2 cpus: 12 13 14 15 16 17
node 2 size: 8192 MB
node 2 free: 1534 MB
node 3 cpus: 18 19 20 21 22 23
node 3 size: 8176 MB
node 3 free: 1652 MB
node distances:
node 0 1 2 3
0: 10 16 16 16
1: 16 10 16 16
2: 16 16 10 16
3: 16 16 16 10
"""


def test_a_paste_cut_below_the_header_is_detected_and_says_what_is_missing():
    assert detect(ORACLE_CUT).kind == "numactl_hardware"
    with pytest.raises(ParseError) as err:
        parse_numactl_hardware(ORACLE_CUT)
    partial = err.value.partial
    assert [(n, node.size_mb, node.free_mb) for n, node in partial.nodes.items()][:2] == [
        (0, 8190, 1622),
        (1, 8192, 41),
    ]
    assert partial.distances[0] == [10, 16, 16, 16]
    assert "no 'available:' line" in str(err.value) and "no 'cpus:' line for node 0" in str(err.value)


def test_node_lines_of_one_node_without_a_distance_table_are_not_numactl():
    assert detect("node 0 size: 8190 MB\nnode 0 free: 1622 MB\n") is None


# what-when-how.com, "Expert Consolidation in Oracle Database 12c" (evaluation
# snapshot 62): numactl --show behind a prompt, then book prose
ORACLE_SHOW = """[oracle@server1 ~]$ numactl --show
policy: default
preferred node: current
physcpubind: 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23
cpubind: 0 1 2 3
nodebind: 0 1 2 3
membind: 0 1 2 3
The default NUMA policy sets the current node as the preferred one and does not enforce binding processes to
"""


def test_numactl_show_is_read_by_command_and_by_content():
    output = ORACLE_SHOW.split("\n", 1)[1].rsplit("The default", 1)[0]
    assert for_command("numactl --show").kind == "numactl_show"
    assert for_command("numactl -s").kind == "numactl_show"
    assert detect(output).kind == "numactl_show"
    show = parse_numactl_show(output)
    assert (show.policy, show.preferred_node) == ("default", "current")
    assert show.physcpubind == list(range(24))
    assert show.cpubind == show.nodebind == show.membind == [0, 1, 2, 3]
    assert show.lines["membind"] == 6 and show.lines["preferred_node"] == 2


def test_numactl_show_after_a_prompt_is_read_and_the_prose_is_not(tmp_path):
    path = tmp_path / "page.txt"
    path.write_text(ORACLE_SHOW)
    host = load(path, split=False).host
    assert host.numa_policy is not None and host.numa_policy.membind == [0, 1, 2, 3]
    assert host.numa_policy.source.line == 2
    assert (host.reading.read_lines, host.reading.prompt_lines, host.reading.unrecognised_lines) == (6, 1, 0)


def test_text_without_show_fields_is_not_numactl_show():
    assert detect("policy: keep logs for 30 days\nmembind: none\n") is None or (
        detect("policy: keep logs for 30 days\nmembind: none\n").kind != "numactl_show"
    )
    with pytest.raises(ParseError):
        parse_numactl_show("available: 2 nodes (0-1)\n")


PUBLISHED = Path(__file__).resolve().parents[2] / "fixtures" / "published"


def test_the_distance_table_pasted_alone_is_read():
    """level1techs/siomon pull request 74: ``numactl -H`` cut to its distance table."""
    host = load(PUBLISHED / "siomon-numactl-distances-only.txt", split=False).host
    assert host.numa.distance_nodes == [0, 1]
    assert host.numa.distances == [[10, 20], [20, 10]]
    assert not host.errors


def test_a_distance_matrix_without_its_heading_is_recognised_and_its_cut_reported():
    """numactl issue 224: a 36-node GH200 matrix pasted without ``node distances:``,
    cut inside row 6."""
    text = (PUBLISHED / "gh200-numactl-distances-cut.txt").read_text()
    assert detect(text).kind == "numactl_hardware"
    with pytest.raises(ParseError, match="distance table incomplete: 7 of 36 rows"):
        parse_numactl_hardware(text)
    first_rows = "\n".join(text.splitlines()[:3])  # the header and rows 0-1 of 36: still cut
    with pytest.raises(ParseError, match="2 of 36 rows"):
        parse_numactl_hardware(first_rows)
