"""Oracle alert log large-page report and memory parameters (published
excerpts: Tanel Poder's 11.2.0.3 start-up, Oracle Exadata Recipes) and the
instance parameter file (round H: wachira90's 11.2 notes)."""

from __future__ import annotations

import pytest

from collectors.archive import load
from collectors.facts import ParseError
from collectors.parsers.oracle import parse_oracle, parse_oracle_pfile
from tests.conftest import FIXTURES

DBSIDE = FIXTURES / "published" / "dbside"
ROUND_H = FIXTURES / "published" / "roundh"


def test_alert_log_large_pages_report():
    log = parse_oracle((DBSIDE / "tanel-11203-alert-large-pages-85pct.log").read_text())
    assert log.kind == "oracle"
    assert log.settings["sga_in_large_pages_pct"] == "85"
    assert log.settings["sga_size"] == "1202 MB"
    assert log.settings["large_pages_configured"] == "512"
    assert log.settings["large_page_size"] == "2048 KB"
    assert log.lines["sga_size"] == 23


def test_show_parameter_rows():
    text = (
        "NAME                                 TYPE        VALUE\n"
        "------------------------------------ ----------- ------------------------------\n"
        "memory_target                        big integer 1536M\n"
        "use_large_pages                      string      TRUE\n"
    )
    log = parse_oracle(text)
    assert log.settings == {"memory_target": "1536M", "use_large_pages": "TRUE"}


@pytest.mark.parametrize("text", ["", "Starting ORACLE instance (normal)\n"])
def test_garbage_is_a_parse_error(text):
    with pytest.raises(ParseError):
        parse_oracle(text)


def _pfile_block() -> tuple[str, int]:
    """The init.ora of wachira90's 11.2 notes (round H, 1207) and its first line."""
    text = (ROUND_H / "wachira90-oracle11g-initora-memory-target.md").read_text()
    start = text.index("db_name='ORCL'")
    end = text.index("compatible ='11.2.0'\n") + len("compatible ='11.2.0'\n")
    return text[start:end], text.count("\n", 0, start) + 1


def test_pfile_memory_target_is_read():
    block, _ = _pfile_block()
    log = parse_oracle_pfile(block)
    assert log.kind == "oracle"
    assert log.settings == {"memory_target": "3G"}
    assert log.lines["memory_target"] == 2
    assert not log.errors


def test_pfile_in_a_markdown_note_is_found_without_a_command():
    """The pfile sits in a fence under a heading naming its path: every one of
    its lines (comments and all) is read, and the df after it too."""
    _, first = _pfile_block()
    host = load(ROUND_H / "wachira90-oracle11g-initora-memory-target.md").host
    (log,) = [s for s in host.services if s.kind == "oracle"]
    assert log.settings["memory_target"] == "3G"
    assert log.lines["memory_target"] == first + 1
    assert host.reading.unrecognised_lines == 0


def test_pfile_one_instance_wins_over_every_instance():
    """create pfile's spelling: ``*.`` for every instance, ``SID.`` for one."""
    log = parse_oracle_pfile("orcl1.sga_target=2G\n*.sga_target=1G\n*.memory_target=0\n")
    assert log.settings == {"sga_target": "2G", "memory_target": "0"}


@pytest.mark.parametrize("text", ["", "# only a comment\n", "The quick brown fox.\n"])
def test_pfile_garbage_is_a_parse_error(text):
    with pytest.raises(ParseError):
        parse_oracle_pfile(text)
