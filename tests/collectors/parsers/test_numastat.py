"""numastat parser: default table (seed 002), -m / -n, sysfs counters."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from collectors.facts import ParseError
from collectors.parsers import REGISTRY, load_all
from collectors.parsers.numastat import parse_node_numastat, parse_numastat
from tests.collectors.parsers.lookup import detect, for_path
from tests.conftest import service_unavailable


def _require(tool: str, package: str) -> None:
    """Skip on a developer box without the tool; fail in CI, which must install it."""
    if shutil.which(tool) is None:
        service_unavailable(f"{tool} not installed (apt-get install -y {package})")


def test_seed_002_table_with_garbage_prompt(seeds_dir):
    text = next(seeds_dir.glob("002_*.txt")).read_text(encoding="utf-8")
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split() == ["node0", "node1", "node2"]) - 1
    stat = parse_numastat("\n".join(lines[start : start + 8]))
    assert stat.unit == "pages"
    assert sorted(stat.nodes) == [0, 1, 2]
    assert stat.nodes[0]["numa_hit"] == 40995736
    assert stat.nodes[0]["numa_miss"] == 53540664
    assert stat.nodes[1]["numa_hit"] == 22924791
    assert stat.nodes[1]["numa_miss"] == 10471137
    assert stat.nodes[2]["numa_hit"] == 23705375
    assert stat.nodes[2]["numa_miss"] == 3056956
    assert stat.nodes[0]["other_node"] > stat.nodes[0]["local_node"]
    assert stat.lines["numa_miss"] == 4


def test_sysfs_form_takes_node_from_caller(corpus):
    text = (corpus / "numastat" / "node_exporter_node1_numastat.txt").read_text()
    stat = parse_node_numastat(text, node=1)
    assert stat.nodes == {
        1: {
            "numa_hit": 326720946761,
            "numa_miss": 59858626709,
            "numa_foreign": 12624528,
            "interleave_hit": 57286,
            "local_node": 326719046550,
            "other_node": 59860526920,
        }
    }
    assert list(parse_numastat(text).nodes) == [0]  # documented default


def test_numastat_m_and_n_shapes():
    text = """Per-node system memory usage (in MBs):
Token SwapCached not in hash table.
                          Node 0          Node 1           Total
                 --------------- --------------- ---------------
MemTotal                48192.00        48383.51        96575.51
MemFree                 21052.48          345.82        21398.30

Per-node numastat info (in MBs):
                          Node 0          Node 1           Total
                 --------------- --------------- ---------------
Numa_Hit              2346254.31      1983418.21      4329672.52
Numa_Miss                 120.18        36211.64        36331.82
"""
    stat = parse_numastat(text)
    assert stat.unit == "MB"
    assert stat.nodes[1]["MemFree"] == 345.82
    assert stat.nodes[1]["numa_miss"] == 36211.64
    assert "Total" not in str(stat.nodes.keys())


def test_not_numastat():
    with pytest.raises(ParseError):
        parse_numastat("numa_hit lots\n")
    with pytest.raises(ParseError):
        parse_numastat("")


def test_registry_paths():
    load_all()
    assert "node_numastat" in REGISTRY
    assert for_path("sys/devices/system/node/node3/numastat").kind == "node_numastat"
    assert for_path("collector/numastat").kind == "numastat"
    assert detect(Path("/dev/null").read_text() + "numa_hit 1\nnuma_miss 2\n").kind == "numastat"


def test_this_machine_all_forms():
    _require("numastat", "numactl")
    table = parse_numastat(subprocess.run(["numastat"], capture_output=True, text=True, check=True).stdout)
    assert table.unit == "pages" and table.nodes[0]["numa_hit"] > 0
    mem = parse_numastat(
        subprocess.run(["numastat", "-m"], capture_output=True, text=True, check=True).stdout
    )
    assert mem.unit == "MB" and mem.nodes[0]["MemTotal"] > 0
    per = parse_numastat(
        subprocess.run(["numastat", "-n"], capture_output=True, text=True, check=True).stdout
    )
    assert per.unit == "MB" and per.nodes[0]["numa_hit"] > 0


def test_this_machine_sysfs():
    node_dirs = sorted(Path("/sys/devices/system/node").glob("node[0-9]*"))
    if not node_dirs:
        pytest.skip("no /sys/devices/system/node on this kernel")
    node = int(node_dirs[0].name[4:])
    stat = parse_node_numastat((node_dirs[0] / "numastat").read_text(), node=node)
    assert stat.nodes[node]["numa_hit"] > 0


# ------------------------------------------------------------ parsers-mem: -m, -n, -c, -p


def test_numastat_m_this_machine_feeds_node_meminfo():
    from tests.collectors.parsers.machine import paste, run

    out = run("numastat -m 2>&1", tool="numastat", package="numactl")
    stat = parse_numastat(out)
    assert stat.unit == "MB"
    assert {"MemTotal", "MemFree", "MemUsed", "FilePages", "HugePages_Total"} <= set(stat.nodes[0])
    # pasted after a prompt, the "Per-node system memory usage" title and numastat's
    # "Token X not in hash table." stderr lines no longer end the output early
    host = paste(("numastat -m", out))
    assert not host.errors, host.errors
    node0 = host.numa.nodes[0]
    assert node0.meminfo["MemTotal"] == round(stat.nodes[0]["MemTotal"] * 1024)
    assert node0.meminfo["FilePages"] == round(stat.nodes[0]["FilePages"] * 1024)
    # huge pages are counted in pages in node meminfo, not MB
    assert node0.meminfo["HugePages_Total"] == round(stat.nodes[0]["HugePages_Total"] / 2)


def test_numastat_n_and_c_this_machine():
    from tests.collectors.parsers.machine import paste, run

    wide = parse_numastat(run("numastat -n", tool="numastat", package="numactl"))
    compact = parse_numastat(run("numastat -c", tool="numastat", package="numactl"))
    for stat in (wide, compact):
        assert stat.unit == "MB"
        assert set(stat.nodes[0]) >= {"numa_hit", "numa_miss", "local_node", "other_node"}
    assert compact.nodes[0]["numa_hit"] == pytest.approx(wide.nodes[0]["numa_hit"], rel=0.05, abs=2)
    host = paste(("numastat -c", run("numastat -c")))
    assert host.numa.nodes[0].numastat["numa_hit"] > 0


def test_numastat_p_pid_this_machine():
    import os

    from collectors.facts import ProcessNumaUsage
    from tests.collectors.parsers.machine import paste, run

    out = run(f"numastat -p {os.getpid()}", tool="numastat", package="numactl")
    usage = parse_numastat(out)
    assert isinstance(usage, ProcessNumaUsage)
    (proc,) = usage.processes
    assert proc.pid == os.getpid() and proc.name
    assert proc.total_mb > 1 and proc.node_mb[0] == proc.total_mb
    assert set(proc.categories) == {"Huge", "Heap", "Stack", "Private"}
    host = paste((f"numastat -p {os.getpid()}", out))
    assert not host.errors, host.errors
    assert [p.pid for p in host.process_numa] == [os.getpid()]
    assert host.process_numa[0].line == len(out.rstrip("\n").splitlines()) + 1  # the Total row, in the paste


def test_numastat_p_name_lists_every_process():
    from tests.collectors.parsers.machine import paste, run

    out = run("numastat -p python", tool="numastat", package="numactl")
    usage = parse_numastat(out)
    assert len(usage.processes) >= 1
    assert all(p.pid and p.name and p.total_mb > 0 for p in usage.processes)
    host = paste(("sudo numastat -p python", out))
    assert len(host.process_numa) == len(usage.processes)


def test_numastat_unprompted_forms_are_detected():
    from tests.collectors.parsers.machine import run

    for command in ("numastat -m", "numastat -n", "numastat -c", "numastat -p python"):
        text = run(command, tool="numastat", package="numactl")
        assert detect(text).kind == "numastat", command


def test_published_two_node_qemu_compact_and_pid():
    from collectors.facts import ProcessNumaUsage
    from tests.collectors.parsers.machine import paste
    from tests.conftest import FIXTURES

    text = (FIXTURES / "commands" / "numastat_qemu_c_and_p.txt").read_text()
    host = paste(prose=text)
    assert not host.errors, host.errors
    by_pid = {p.pid: p for p in host.process_numa}
    # -c cut the name to "(qemu-syste" with no closing parenthesis; the row still counts
    assert by_pid[4391].name == "qemu-system-x86"  # the -p title names it in full
    assert by_pid[5891].node_mb == {0: 4.0, 1: 1.0}
    assert by_pid[4391].node_mb == {0: 8372.73, 1: 0.16}
    assert by_pid[4391].categories["Huge"] == {0: 8192.0, 1: 0.0}
    compact = parse_numastat("\n".join(text.splitlines()[1:12]))
    assert isinstance(compact, ProcessNumaUsage)
    assert [(p.pid, p.name, p.total_mb) for p in compact.processes] == [
        (4391, "qemu-syste", 8373.0),
        (5891, "sudo", 5.0),
    ]


def test_published_two_node_pid_alone():
    from tests.conftest import FIXTURES

    text = (FIXTURES / "commands" / "numastat_p_two_nodes.txt").read_text()
    table = "\n".join(text.splitlines()[1:])
    assert detect(table).kind == "numastat"
    (proc,) = parse_numastat(table).processes
    assert (proc.pid, proc.name, proc.node_mb, proc.total_mb) == (
        54261,
        "numa",
        {0: 100.53, 1: 51.58},
        152.11,
    )


def test_a_row_cut_mid_paste_is_reported_and_the_rows_before_it_kept():
    # StanfordLegion/legion#1338 as stored: "Inactive" has 2 of its 8 node values
    text = (Path(__file__).parents[2] / "fixtures" / "published" / "summit-numastat-m.txt").read_text()
    out = parse_numastat(text)
    assert out.nodes[8]["MemUsed"] == 10730.69
    assert "Inactive" not in out.nodes[0]
    assert [(e.line, e.message) for e in out.errors] == [(18, "row Inactive cut: 2 of 8 nodes")]


# numactl/numactl#115 (evaluation snapshot 114): numastat -cm after numastat's
# "Token ... not in hash table." warnings, as the stored excerpt shows it, cut in a row name
NUMACTL_115_CM = """Per-node system memory usage (in MBs):
Token Node not in hash table.
Token Node not in hash table.
Token Node not in hash table.
Token Node not in hash table.
                 Node 0 Node 1 Total
                 ------ ------ -----
MemTotal           1007    988  1995
MemFree             953    900  1854
MemUsed              54     87   141
FilePages             3     33    37
Mapp
"""


def test_a_row_cut_in_its_name_at_the_end_of_the_paste_is_reported():
    stat = parse_numastat(NUMACTL_115_CM)
    assert stat.nodes[0]["MemUsed"] == 54 and stat.nodes[1]["FilePages"] == 33
    (error,) = stat.errors
    assert error.line == 12 and "Mapp cut: 0 of 2 nodes" in error.message
    assert "Mapp" not in stat.nodes[0]


PUBLISHED = Path(__file__).resolve().parents[2] / "fixtures" / "published"


def _numastat_n_lines() -> list[str]:
    """The ``numastat -n`` table of a public shell script, without its ``# `` marks."""
    text = (PUBLISHED / "numastat-n-script-comment.txt").read_text()
    return [line[2:] if line.startswith("# ") else line.lstrip("#") for line in text.splitlines()]


def test_numastat_n_with_its_node_header_only():
    """``Node 0 Node 1 Total`` and capitalised rows in MB, without the
    ``Per-node numastat info`` title."""
    text = "\n".join(_numastat_n_lines())
    assert detect(text).kind == "numastat"
    out = parse_numastat(text)
    assert out.unit == "MB"
    assert out.nodes[0]["numa_hit"] == 85806.66 and out.nodes[1]["other_node"] == 7135.91
    assert not out.errors


def test_numastat_n_body_alone_assumes_nodes_and_says_so():
    body = "\n".join(_numastat_n_lines()[2:])  # from "Numa_Hit", header and rule cut off
    assert detect(body).kind == "numastat"
    out = parse_numastat(body)
    assert sorted(out.nodes) == [0, 1] and out.unit == "MB"
    assert out.nodes[1]["numa_miss"] == 7119.75  # the Total column is not a node
    assert [e.message for e in out.errors] == ["no node header: nodes assumed to be 0-1"]
