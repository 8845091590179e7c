"""Oracle alert log large-page report and memory parameters (published
excerpts: Tanel Poder's 11.2.0.3 start-up, Oracle Exadata Recipes)."""

from __future__ import annotations

import pytest

from collectors.facts import ParseError
from collectors.parsers.oracle import parse_oracle
from tests.conftest import FIXTURES

DBSIDE = FIXTURES / "published" / "dbside"


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
