"""PostgreSQL settings: psql SHOW ALL (aligned and unaligned, this machine's
PostgreSQL 15), a single SHOW, postgresql.conf and a pg_settings grid."""

from __future__ import annotations

import pytest

from collectors.derived.database import pg_setting_bytes
from collectors.facts import ParseError
from collectors.parsers.postgres import parse_pg_settings
from tests.conftest import FIXTURES

SHOW_ALL = FIXTURES / "published" / "dbside" / "this-vm-pg15-show-all.txt"


def test_show_all_aligned_from_this_machine():
    pg = parse_pg_settings(SHOW_ALL.read_text())
    assert pg.kind == "postgresql" and pg.version == "15.20"
    assert pg.settings["shared_buffers"] == "128MB" and pg.settings["huge_pages"] == "try"
    assert pg.settings["shared_memory_size_in_huge_pages"] == "72"
    assert len(pg.settings) > 300
    line = SHOW_ALL.read_text().splitlines()[pg.lines["huge_pages"] - 1]
    assert line.lstrip().startswith("huge_pages ")
    assert pg_setting_bytes(pg.settings, "shared_buffers") == 128 * 1024**2


def test_show_all_unaligned_reads_the_same_settings():
    aligned = parse_pg_settings(SHOW_ALL.read_text())
    unaligned = "\n".join(
        "|".join(cell.strip() for cell in line.split("|"))
        for line in SHOW_ALL.read_text().splitlines()
        if "|" in line
    )
    assert parse_pg_settings(unaligned).settings == aligned.settings


def test_single_show_and_conf():
    pg = parse_pg_settings(" shared_buffers \n----------------\n 16GB\n(1 row)\n")
    assert pg.settings == {"shared_buffers": "16GB"} and pg.lines["shared_buffers"] == 3
    conf = parse_pg_settings("#huge_pages = try\nshared_buffers = 16384\t# 8kB blocks\nhuge_pages = 'off'\n")
    assert conf.settings == {"shared_buffers": "16384", "huge_pages": "off"}
    assert pg_setting_bytes(conf.settings, "shared_buffers") == 16384 * 8192


def test_pg_settings_grid_keeps_the_unit():
    grid = (
        "      name      | setting | unit\n"
        "----------------+---------+------\n"
        " shared_buffers | 2097152 | 8kB\n"
        " huge_pages     | off     |\n"
    )
    pg = parse_pg_settings(grid)
    assert pg.settings["shared_buffers"] == "2097152*8kB"
    assert pg_setting_bytes(pg.settings, "shared_buffers") == 16 * 1024**3


@pytest.mark.parametrize("text", ["", "hello world\n", "| Variable_name | Value |\n| a | b |\n"])
def test_garbage_is_a_parse_error(text):
    with pytest.raises(ParseError):
        parse_pg_settings(text)
