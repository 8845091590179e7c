"""OceanBase parsers on the result tables of seed 004 (sliced from the seed file)."""

from __future__ import annotations

import pytest

from collectors.facts import ParseError
from collectors.parsers.oceanbase import (
    parse_oceanbase_parameters,
    parse_odp_proxyconfig,
    parse_sql_audit_plan_types,
)
from tests.collectors.parsers.lookup import detect, for_command
from tests.conftest import SEEDS, service_unavailable


def seed_004() -> list[str]:
    seed = next(SEEDS.glob("004_*.txt"), None)
    if seed is None:
        service_unavailable("seed 004 missing")
    return seed.read_text(encoding="utf-8").splitlines()


def output_after(lines: list[str], command_fragment: str) -> str:
    """The result block printed after the ``MySQL [oceanbase]>`` prompt whose
    statement contains ``command_fragment``, up to the "N rows in set" line: what the
    transcript splitter hands to a parser."""
    start = next(i for i, ln in enumerate(lines) if ln.startswith("MySQL [") and command_fragment in ln)
    end = next(i for i in range(start, len(lines)) if " in set (" in lines[i])
    return "\n".join(lines[start + 1 : end + 1])


def test_seed_004_plan_type_counts():
    lines = seed_004()
    block = output_after(lines, "from gv$sql_audit")
    facts = parse_sql_audit_plan_types(block)
    assert facts.plan_type_counts == {0: 115557, 1: 1463222, 2: 1286613, 3: 8647}
    executed = sum(facts.plan_type_counts[t] for t in (1, 2, 3))
    assert (facts.plan_type_counts[2], executed) == (1286613, 2758482)
    assert facts.plan_type_counts[2] / executed == pytest.approx(0.4664, abs=1e-4)
    assert "1286613" in block.splitlines()[facts.lines["plan_type.2"] - 1]
    assert detect(block).kind == "sql_audit_plan_types"
    command = next(ln for ln in lines if "from gv$sql_audit" in ln).split("> ", 1)[1]
    assert for_command(command).kind == "sql_audit_plan_types"


def test_seed_004_server_routing_mode():
    lines = seed_004()
    block = output_after(lines, "show proxyconfig")
    facts = parse_odp_proxyconfig(block)
    assert facts.proxy_config == {"server_routing_mode": "random"}
    assert detect(block).kind == "odp_proxyconfig"
    command = next(ln for ln in lines if "show proxyconfig" in ln).split("> ", 1)[1]
    assert for_command(command).kind == "odp_proxyconfig"


def test_seed_004_observer_parameters_quoted_inline():
    # Seed 004 gives the running values in a sentence, followed by the proposed
    # ALTER SYSTEM statements (2 and 6), which must not be taken as current values.
    lines = seed_004()
    start = next(i for i, ln in enumerate(lines) if "cpu_quota_concurrency = 4" in ln)
    block = "\n".join(lines[start : start + 3])
    assert "alter system set cpu_quota_concurrency = 2" in block
    facts = parse_oceanbase_parameters(block)
    assert facts.parameters == {"cpu_quota_concurrency": "4", "net_thread_count": "32"}
    assert facts.lines == {"cpu_quota_concurrency": 1, "net_thread_count": 1}
    assert detect(block).kind == "oceanbase_parameters"
    # the ALTER SYSTEM statements alone are a proposal, not a configuration
    alters = "\n".join(block.splitlines()[1:])
    spec = detect(alters)
    assert spec is None or spec.kind != "oceanbase_parameters"


def test_other_seed_004_tables_are_not_mistaken_for_oceanbase_facts():
    lines = seed_004()
    others = ("from gv$unit", "from __all_virtual_meta_table where tenant_id", "gv$plan_cache_plan_stat")
    for fragment in others:
        block = output_after(lines, fragment)
        spec = detect(block)
        assert spec is None or spec.kind not in {
            "oceanbase_parameters",
            "odp_proxyconfig",
            "sql_audit_plan_types",
        }
        with pytest.raises(ParseError):
            parse_oceanbase_parameters(block)
        with pytest.raises(ParseError):
            parse_sql_audit_plan_types(block)


SHOW_PARAMETERS = """\
+-------+----------+----------+-----------------------+-----------+-------+---------+-------------------+
| zone  | svr_ip   | svr_port | name                  | data_type | value | scope   | edit_level        |
+-------+----------+----------+-----------------------+-----------+-------+---------+-------------------+
| zone1 | 10.0.0.1 |     2882 | cpu_quota_concurrency | NULL      | 4     | CLUSTER | DYNAMIC_EFFECTIVE |
| zone2 | 10.0.0.2 |     2882 | cpu_quota_concurrency | NULL      | 4     | CLUSTER | DYNAMIC_EFFECTIVE |
+-------+----------+----------+-----------------------+-----------+-------+---------+-------------------+
2 rows in set (0.01 sec)
"""


def test_show_parameters_table_is_not_proxy_config():
    facts = parse_oceanbase_parameters(SHOW_PARAMETERS)
    assert facts.parameters == {"cpu_quota_concurrency": "4"}
    assert facts.lines == {"cpu_quota_concurrency": 4}
    assert detect(SHOW_PARAMETERS).kind == "oceanbase_parameters"
    with pytest.raises(ParseError):
        parse_odp_proxyconfig(SHOW_PARAMETERS)


def test_virtual_parameter_stat_with_need_reboot_is_observer_parameters():
    text = (
        "*************************** 1. row ***************************\n"
        "zone: zone1\nsvr_type: observer\nsvr_ip: 10.0.0.1\nsvr_port: 2882\n"
        "name: net_thread_count\ndata_type: NULL\nvalue: 32\nneed_reboot: 1\n"
        "section: OBSERVER\nvisible_level: SYS\nscope: CLUSTER\nsource: DEFAULT\n"
        "edit_level: STATIC_EFFECTIVE\n1 row in set (0.00 sec)\n"
    )
    assert parse_oceanbase_parameters(text).parameters == {"net_thread_count": "32"}
    assert detect(text).kind == "oceanbase_parameters"
    with pytest.raises(ParseError):
        parse_odp_proxyconfig(text)


def test_vertical_parameters():
    text = (
        "*************************** 1. row ***************************\n"
        "name: net_thread_count\n"
        "value: 32\n"
        "*************************** 2. row ***************************\n"
        "name: cpu_count\n"
        "value: 16\n"
        "2 rows in set (0.00 sec)\n"
    )
    facts = parse_oceanbase_parameters(text)
    assert facts.parameters == {"net_thread_count": "32", "cpu_count": "16"}
    assert facts.lines == {"net_thread_count": 2, "cpu_count": 5}


@pytest.mark.parametrize(
    ("parser", "text"),
    [
        (parse_oceanbase_parameters, ""),
        (parse_oceanbase_parameters, "alter system set cpu_quota_concurrency = 2;"),
        (parse_odp_proxyconfig, "ERROR 1064 (42000): You have an error in your SQL syntax"),
        (parse_sql_audit_plan_types, "+-----------+----------+\n| plan_type | count(1) |\n| one | 1 |\n"),
        (parse_sql_audit_plan_types, "Empty set (0.00 sec)"),
    ],
)
def test_unusable_text_raises_parse_error(parser, text):
    with pytest.raises(ParseError):
        parser(text)
