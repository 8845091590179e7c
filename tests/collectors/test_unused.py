"""Outputs Casebook recognises but does not read (``collectors.unused``) are
accounted as such in the host's reading, on real pastes that needed it
(sources in tests/fixtures/published/README.md)."""

from __future__ import annotations

import pytest

from collectors.archive import load
from collectors.transcript import UNUSED, read_transcript
from collectors.unused import CATALOGUE, unused_command, unused_output
from tests.conftest import FIXTURES

PUBLISHED = FIXTURES / "published"


def accounted(reading) -> int:
    return (
        reading.read_lines
        + reading.prompt_lines
        + reading.prose_lines
        + reading.unused_lines
        + reading.unrecognised_lines
    )


def test_systemctl_status_after_a_prompt_is_output_not_used():
    path = PUBLISHED / "systemctl-status-mariadb-prompt.txt"
    host = load(path, split=False).host
    r = host.reading
    assert accounted(r) == r.lines == len(path.read_text().split("\n"))
    assert r.unrecognised_lines == 0 and not r.unrecognised
    whats = {(u.what, u.start_line) for u in r.unused}
    assert ("systemctl", 11) in whats  # "● mariadb.service - ..." up to the journal lines
    assert ("package manager", 2) in whats  # rpm -qa | grep mariadb
    # recognised: no "no recognisable artifact" error for a paste of outputs Casebook does not use
    assert not [e for e in host.errors if "recognisable" in e.message]


def test_systemctl_status_without_a_prompt_is_recognised_by_its_shape():
    host = load(PUBLISHED / "systemctl-status-mariadb-fenced.md", split=False).host
    (block,) = host.reading.unused
    assert block.what == "systemctl" and (block.start_line, block.end_line) == (4, 11)
    assert host.reading.unrecognised_lines == 0


@pytest.mark.parametrize("name", ["sysbench-oltp-insert-prompt.txt", "sysbench-tidb-fenced.md"])
def test_sysbench_results_are_output_not_used(name):
    host = load(PUBLISHED / name, split=False).host
    r = host.reading
    assert {u.what for u in r.unused} == {"sysbench"}
    assert r.unused_lines >= 19  # "SQL statistics:" to the latency summary
    assert r.read_lines == 0 and not host.benchmarks


def test_unused_lines_have_a_role_of_their_own():
    split = read_transcript((PUBLISHED / "sysbench-tidb-fenced.md").read_text())
    assert split.roles.count(UNUSED) == sum(end - start + 1 for start, end, _what in split.unused)


def test_a_parser_always_wins_over_the_catalogue():
    # numactl -H is read even though "cat"-like rows exist for many commands
    assert unused_command("cat /proc/meminfo") == "cat"
    host = load(PUBLISHED / "siomon-numactl-distances-only.txt", split=False).host
    assert not host.reading.unused and host.reading.read_lines == 4


def test_every_row_of_the_catalogue_compiles_and_names_itself():
    import re

    for row in CATALOGUE:
        re.compile(row.command)
        if row.content:
            re.compile(row.content, re.M)
        assert row.what.strip()
    assert unused_output("no tool prints this") is None


def test_solaris_iostat_x_is_another_systems_output_not_used():
    """Solaris's ``iostat -xz`` (round M 1711, serverfault question 259190): svc_t and
    %b are not Linux's await and %util, so its rows are not read as Linux's disks."""
    path = PUBLISHED / "roundm" / "serverfault-solaris-iostat-xz-sd5.txt"
    host = load(path, split=False).host
    assert [(u.what, u.start_line) for u in host.reading.unused] == [("iostat (Solaris)", 2)]
    assert host.disks is None and host.reading.unrecognised_lines == 0


def test_dash_h_is_human_readable_not_a_request_for_usage_text():
    """``du -h``, ``sort -h``: ``-h`` asks for sizes in K/M/G, not for the usage text
    (``numactl --help`` does); their output is the program's."""
    assert unused_command("numactl --help") == "usage text"
    assert unused_command("du -h /var") != "usage text" and unused_command("sort -h") != "usage text"
