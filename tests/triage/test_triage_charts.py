"""Server-side SVG charts drawn from the facts of the rebuilt founding snapshots."""

from __future__ import annotations

import re
from xml.etree import ElementTree

import pytest

from collectors.archive import load
from collectors.facts import HostFacts, NumaTopology, from_dict, to_dict
from tests.conftest import FIXTURES
from triage import charts

SEEDS = FIXTURES / "seeds"


def facts(path: str) -> HostFacts:
    """The host as a snapshot stores it and reads it back (``Snapshot.host_facts``)."""
    host: HostFacts = from_dict(HostFacts, to_dict(load(str(SEEDS / path), split=False).host))
    return host


def parse(svg: str) -> ElementTree.Element:
    root = ElementTree.fromstring(svg)  # well-formed XML
    assert root.tag.endswith("svg")
    return root


def widths(svg: str, attr: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for m in re.finditer(
        r'width="([\d.]+)" height="24" fill="[^"]+" data-part="([^"]+)"><title>node (\d+)', svg
    ):
        out[f"{m.group(3)}:{m.group(2)}"] = float(m.group(1))
    return out


def test_memory_bars_show_the_busier_node_0_of_zstack():
    svg = charts.numa_memory_bars(facts("zstack-mariadb-v2v/before/zstack-9.txt"))
    parse(svg)
    w = widths(svg, "data-part")
    # Node 0 holds about 96 GB of anonymous memory, node 1 about 49 GB.
    assert w["0:anon"] > 1.8 * w["1:anon"]
    assert w["1:free"] > w["0:free"]
    assert "<title>Memory per NUMA node</title>" in svg


def test_memory_bars_show_kunpeng_page_cache_pressure_with_translated_legend():
    svg = charts.numa_memory_bars(
        facts("kunpeng-stream-zone-reclaim/before/gp-sdw03.txt"), labels={"page cache": "页缓存"}
    )
    parse(svg)
    w = widths(svg, "data-part")
    assert w["0:page cache"] > 20 * w["0:free"]  # ~490 GB cache vs ~7 GB free
    assert ">页缓存</text>" in svg


def test_cpu_strip_shows_the_softirq_hot_spot_of_oceanbase():
    svg = charts.cpu_heat_strip(facts("oceanbase-bmsql-tuning/before/obs-197.txt"))
    parse(svg)
    softirq = {
        m.group(1): float(m.group(2)) for m in re.finditer(r'data-cpu="(\d+)" data-softirq="([\d.]+)"', svg)
    }
    assert len(softirq) == 18
    assert softirq["0"] == pytest.approx(30.2) and softirq["1"] == pytest.approx(25.4)
    assert max(v for cpu, v in softirq.items() if cpu not in ("0", "1")) < 5


def test_distance_matrix_of_kunpeng():
    svg = charts.numa_distance_matrix(facts("kunpeng-stream-zone-reclaim/before/gp-sdw03.txt"))
    parse(svg)
    assert re.findall(r'data-distance="(\d+)"', svg) == ["10", "32", "32", "10"]


def test_metric_bars_and_empty_inputs():
    svg = charts.metric_bars([("baseline", 120.0), ("pin-emulator", 58.0)], unit="s")
    parse(svg)
    assert 'data-value="120"' in svg and 'data-value="58"' in svg and "58 s" in svg
    assert charts.metric_bars([]) == ""
    assert charts.numa_memory_bars(HostFacts()) == ""
    assert charts.cpu_heat_strip(HostFacts()) == ""
    assert charts.numa_distance_matrix(HostFacts(numa=NumaTopology())) == ""


def test_labels_are_escaped():
    svg = charts.metric_bars([("<script>", 1.0)])
    parse(svg)
    assert "<script>" not in svg
