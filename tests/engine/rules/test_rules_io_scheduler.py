"""disk.io_scheduler (engine/rules/io_scheduler.py) on published
``/sys/block/<dev>/queue/scheduler`` outputs and on this machine
(tests/fixtures/published/host, sources in tests/fixtures/published/README.md)."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES

HOST = FIXTURES / "published" / "host"
RULE = "disk.io_scheduler"


def _text(name: str) -> str:
    return (HOST / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("name", "device"),
    [("mysql-notes-cat-scheduler-cfq.txt", "sda"), ("suse-notes-nginx-sdb-scheduler-cfq.txt", "sdb")],
)
def test_fires_on_cfq(analyze_texts, name, device):
    result = analyze_texts(_text(name))
    assert "disk.io_scheduler" in result.rule_ids
    (f,) = [f for f in result.findings if f.rule == RULE]
    assert f.values["device"] == device and f.values["scheduler"] == "cfq"
    assert f.severity == "info"  # no data store or guest in these outputs
    assert f.evidence[0].fact == f"io_schedulers.active.{device}" and f.evidence[0].line is not None


def test_is_a_warning_where_a_data_store_runs(analyze_texts):
    # the MySQL note's cfq disk, and a MariaDB/Redis process list (this machine's)
    ps = _text("this-vm-mariadb-redis-schedulers.txt").split("$ ps aux", 1)[1]
    result = analyze_texts(_text("mysql-notes-cat-scheduler-cfq.txt") + "$ ps aux" + ps)
    (f,) = [f for f in result.findings if f.rule == RULE]
    assert f.severity == "warning"
    assert "mysql" in f.explanation


def test_quiet_on_this_machine_with_mariadb(analyze_texts):
    # none on the loop devices, mq-deadline on vda: the blk-mq defaults
    result = analyze_texts(_text("this-vm-mariadb-redis-schedulers.txt"))
    assert RULE in result.checked
    assert "disk.io_scheduler" not in result.rule_ids


def test_a_database_host_without_the_schedulers_is_not_checked(analyze_texts):
    ps = _text("this-vm-mariadb-redis-schedulers.txt").split("\n$ ps aux", 1)[1]
    result = analyze_texts("$ ps aux" + ps)
    assert RULE not in result.checked
    missing = {n.rule: n.commands for n in result.not_checked}
    assert "grep . /sys/block/*/queue/scheduler /sys/block/*/queue/rotational" in missing[RULE]
