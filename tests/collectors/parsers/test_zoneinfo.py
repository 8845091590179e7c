"""/proc/zoneinfo parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.facts import ParseError
from collectors.parsers.zoneinfo import parse_zoneinfo
from tests.collectors.parsers.lookup import detect, for_path

SAMPLE = """Node 0, zone      DMA
  per-node stats
      nr_inactive_anon 51410
  pages free     3840
        boost    0
        min      52
        low      65
        high     78
        spanned  4095
        protection: (0, 2950, 23983, 23983, 23983)
      nr_free_pages 3840
Node 1, zone   Normal
  pages free     1000
        min      9000
        low      11250
        high     13500
"""


def test_sample_watermarks():
    info = parse_zoneinfo(SAMPLE)
    assert [(z.node, z.zone, z.free_pages, z.min, z.low, z.high) for z in info.zones] == [
        (0, "DMA", 3840, 52, 65, 78),
        (1, "Normal", 1000, 9000, 11250, 13500),
    ]
    assert info.lines["1.Normal"] == 12


def test_errors():
    with pytest.raises(ParseError):
        parse_zoneinfo("pages free 3\n")


def test_registry():
    assert for_path("proc/zoneinfo").kind == "zoneinfo"
    assert detect(SAMPLE).kind == "zoneinfo"


def test_this_machine():
    info = parse_zoneinfo(Path("/proc/zoneinfo").read_text())
    populated = [z for z in info.zones if z.free_pages]
    assert populated
    assert all(z.min is not None and z.min <= z.low <= z.high for z in populated)


def test_this_machine_is_detected_as_zoneinfo_not_numastat():
    # zoneinfo's per-node stats carry numa_hit/numa_miss lines too
    assert detect(Path("/proc/zoneinfo").read_text()).kind == "zoneinfo"
