"""Per-node meminfo parser: seed 000 (two nodes in one paste) and the corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.facts import ParseError
from collectors.parsers.node_meminfo import parse_node_meminfo
from tests.collectors.parsers.lookup import detect, for_command, for_path


def test_seed_000_both_nodes(seeds_dir):
    text = next(seeds_dir.glob("000_*.txt")).read_text(encoding="utf-8")
    start = text.index("[root@zstack-9 ~]# cat /sys/devices/system/node/node1/meminfo")
    end = text.index("```", start)
    info = parse_node_meminfo(text[start:end])
    assert info.nodes[1]["MemTotal"] == 402653184
    assert info.nodes[1]["MemFree"] == 342521148
    assert info.nodes[1]["MemUsed"] == 60132036
    assert info.nodes[0]["MemTotal"] == 401212464
    assert info.nodes[0]["MemFree"] == 290726364
    assert info.nodes[0]["MemUsed"] == 110486100
    assert info.nodes[1]["HugePages_Total"] == 0
    assert info.lines["1.MemTotal"] == 2
    assert info.lines["0.MemUsed"] == 34


def test_corpus_node2(corpus):
    info = parse_node_meminfo((corpus / "node_meminfo" / "node_exporter_node2_meminfo.txt").read_text())
    assert info.nodes[2]["FilePages"] == 83579188


def test_not_node_meminfo():
    with pytest.raises(ParseError):
        parse_node_meminfo("MemTotal: 100 kB\n")


def test_registry():
    assert for_command("cat /sys/devices/system/node/node1/meminfo").kind == "node_meminfo"
    assert for_path("sys/devices/system/node/node0/meminfo").kind == "node_meminfo"
    assert detect("Node 0 MemTotal:  100 kB\nNode 0 MemFree: 5 kB\n").kind == "node_meminfo"


def test_this_machine():
    files = sorted(Path("/sys/devices/system/node").glob("node[0-9]*/meminfo"))
    if not files:
        pytest.skip("no per-node meminfo on this kernel")
    info = parse_node_meminfo("".join(f.read_text() for f in files))
    assert len(info.nodes) == len(files)
    assert all(v["MemTotal"] >= v["MemFree"] for v in info.nodes.values())


# ------------------------------------------- parsers-mem: subsets (a grep of the files)


def test_grep_of_node_meminfo_files_this_machine():
    from tests.collectors.parsers.lookup import detect, for_command
    from tests.collectors.parsers.machine import paste, run

    out = run("grep -H -i huge /sys/devices/system/node/node*/meminfo", tool="grep")
    assert out.startswith("/sys/devices/system/node/node0/meminfo:Node 0 ")
    info = parse_node_meminfo(out)
    assert "HugePages_Total" in info.nodes[0] and "MemTotal" not in info.nodes[0]
    assert detect(out).kind == "node_meminfo"
    plain = run("cat /sys/devices/system/node/node*/meminfo | grep -i huge")
    assert detect(plain).kind == "node_meminfo"
    for command in (
        "cat /sys/devices/system/node/node*/meminfo | grep -i huge",
        "grep -i huge /sys/devices/system/node/node*/meminfo",
        "cat /sys/devices/system/node/node{0,1}/meminfo",
    ):
        assert for_command(command).kind == "node_meminfo", command
    host = paste(("cat /sys/devices/system/node/node*/meminfo | grep -i huge", plain))
    assert not host.errors
    assert (
        host.numa.nodes[0].meminfo["HugePages_Total"] == parse_node_meminfo(plain).nodes[0]["HugePages_Total"]
    )
