"""gpcheckperf reports (published outputs): one STREAM / disk result per host."""

from __future__ import annotations

import pytest

from collectors.facts import ParseError
from collectors.parsers.gpcheckperf import parse_gpcheckperf
from tests.collectors.parsers.lookup import detect, for_command
from tests.collectors.parsers.machine import paste
from tests.conftest import FIXTURES

PUBLISHED = FIXTURES / "commands"


def _by(results, kind):
    return {b.host: b.value for b in results if b.kind == kind}


def test_per_host_lines_of_D_report():
    text = (PUBLISHED / "gpcheckperf_gp-node_rds_D.txt").read_text()
    res = parse_gpcheckperf(text).results
    assert _by(res, "stream") == {"gp-node2": 13897.30, "gp-node1": 9154.40}
    assert _by(res, "disk_write") == {"gp-node2": 749.73, "gp-node1": 752.26}
    assert _by(res, "disk_read") == {"gp-node2": 2117.45, "gp-node1": 2127.55}
    stream = [b for b in res if b.kind == "stream"]
    assert {b.name for b in stream} == {"Copy"} and {b.unit for b in stream} == {"MB/s"}


def test_min_max_lines_name_the_two_bounding_hosts():
    text = (PUBLISHED / "gpcheckperf_node1-3_netperf.txt").read_text()
    res = parse_gpcheckperf(text).results
    assert _by(res, "stream") == {"node3": 4582.90, "node1": 6775.00}
    assert detect(text).kind == "gpcheckperf"


def test_tab_indented_report_and_space_in_host_bracket():
    text = (PUBLISHED / "gpcheckperf_gpsdw_indented.txt").read_text()
    assert detect(text).kind == "gpcheckperf"
    res = parse_gpcheckperf(text).results
    assert _by(res, "stream") == {"gpsdw2": 8890.95, "gpsdw3": 18413.74}


def test_pasted_with_prompt_gives_benchmarks_of_several_hosts():
    text = (PUBLISHED / "gpcheckperf_gp-node_rds_D.txt").read_text()
    assert for_command("gpcheckperf -f ~/hostfile_exkeys -r ds -D -d /data/primary").kind == "gpcheckperf"
    host = paste(prose=text)
    assert not host.errors, host.errors
    stream = {b.host: b for b in host.benchmarks if b.kind == "stream"}
    assert set(stream) == {"gp-node1", "gp-node2"}
    # evidence lines point at the uploaded file
    lines = text.splitlines()
    assert "[gp-node1]" in lines[stream["gp-node1"].line - 1]
    assert max(b.value for b in stream.values()) / min(b.value for b in stream.values()) > 1.5


def test_netperf_section_is_read_as_part_of_the_report():
    # "Netperf bisection bandwidth test" / "Summary:" are declared output lines, not prose
    text = (
        "[gpadmin@node1 ~]$ gpcheckperf -f hosts -d /tmp\n"
        + (PUBLISHED / "gpcheckperf_node1-3_netperf.txt").read_text()
    )
    host = paste(prose=text)
    assert not host.errors
    assert {b.host for b in host.benchmarks if b.kind == "stream"} == {"node1", "node3"}


def test_not_a_report():
    with pytest.raises(ParseError):
        parse_gpcheckperf("stream tot bandwidth (MB/s): 1.0\n")
