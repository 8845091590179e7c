"""OceanBase: observer parameters, ODP (obproxy) configuration and sql_audit plan types.

All three arrive as SQL client result tables, usually after an ``obclient>`` or
``MySQL [oceanbase]>`` prompt (the transcript splitter hands over the output block)::

    +-------+----------+----------------+----------+-----------------------+-----------+-------+
    | zone  | svr_type | svr_ip         | svr_port | name                  | data_type | value |
    +-------+----------+----------------+----------+-----------------------+-----------+-------+
    | zone1 | observer | 10.0.0.1       |     2882 | cpu_quota_concurrency | NULL      | 4     |
    +-------+----------+----------------+----------+-----------------------+-----------+-------+

``show proxyconfig`` has ``name | value | info | need_reboot | visible_level``; the
plan-type query has ``plan_type | count(*)``. ``\\G`` vertical output is read too.

Engineers also quote parameters inline ("cpu_quota_concurrency = 4 and
net_thread_count = 32"); for observer parameters whose names we know, such
``name = value`` mentions are read when no table is present. ``ALTER SYSTEM SET``
statements are skipped: they are proposed changes, not the running configuration.
"""

from __future__ import annotations

import re

from collectors.facts import OceanBaseFacts, ParseError
from collectors.parsers import register
from collectors.parsers.mysql import ResultTable, parse_result_tables

# Observer parameters the rules and engineers talk about; only these are read from
# inline "name = value" mentions, so prose cannot invent parameters.
KNOWN_OBSERVER_PARAMETERS = frozenset(
    {
        "cpu_quota_concurrency",
        "net_thread_count",
        "cpu_count",
        "memory_limit",
        "memory_limit_percentage",
        "system_memory",
        "enable_perf_event",
        "enable_sql_audit",
        "workers_per_cpu_quota",
        "large_query_threshold",
        "large_query_worker_percentage",
        "syslog_level",
        "enable_syslog_recycle",
        "max_syslog_file_count",
        "trace_log_slow_query_watermark",
        "writing_throttling_trigger_percentage",
        "freeze_trigger_percentage",
        "minor_freeze_times",
        "merge_thread_count",
        "minor_merge_concurrency",
        "clog_sync_time_warn_threshold",
        "ob_enable_batched_multi_statement",
        "_ob_enable_prepared_statement",
        "_enable_numa_aware",
        "enable_early_lock_release",
        "tenant_cpu_variation_per_server",
        "server_cpu_quota_min",
        "server_cpu_quota_max",
    }
)

_PROXY_MARKERS = {"need_reboot", "visible_level", "config_level"}
_PARAMETER_MARKERS = {"svr_ip", "zone", "data_type", "edit_level", "scope", "section", "svr_type"}
_INLINE = re.compile(
    r"\b(?P<name>" + "|".join(sorted(KNOWN_OBSERVER_PARAMETERS, key=len, reverse=True)) + r")\s*(?:=|:)\s*"
    r"'?(?P<value>[A-Za-z0-9_.%-]+?)'?(?=[\s,;。，)]|\.\s|\.$|$)"
)


def _name_value_tables(text: str, *, proxy: bool) -> list[ResultTable]:
    out = []
    for table in parse_result_tables(text):
        cols = set(table.columns)
        if not {"name", "value"} <= cols:
            continue
        # __all_virtual_sys_parameter_stat has need_reboot/visible_level too: server
        # columns (svr_ip, zone ...) make a table observer parameters, else the
        # proxy's columns make it the proxy's
        is_param = bool(cols & _PARAMETER_MARKERS)
        if (not is_param) if proxy else (is_param or not cols & _PROXY_MARKERS):
            out.append(table)
    return out


def _read_name_value(tables: list[ResultTable], target: dict[str, str], lines: dict[str, int]) -> None:
    for table in tables:
        name_i, value_i = table.columns.index("name"), table.columns.index("value")
        for row, ln in zip(table.rows, table.row_lines, strict=True):
            name = row[name_i].strip().lower()
            if not name:
                continue
            # show parameters prints one row per server; the first one is kept
            # (servers of one cluster normally share a value)
            if name not in target:
                target[name] = row[value_i].strip()
                lines[name] = ln


# "ALTER SYSTEM SET name = value" (a prompt before it): a change asked for, not a setting shown
_ALTER_SYSTEM = re.compile(r"(?i)\s*(\S+>\s*)?alter\s+system\b")


def _looks_like_parameters(head: str) -> bool:
    if any(_is_parameter_table(set(table.columns)) for table in parse_result_tables(head)):
        return True
    if "|" in head:
        return False  # some other result table
    return _quotes_parameters(head)


def _is_parameter_table(cols: set[str]) -> bool:
    """Whether a table of these columns lists observer parameters: name and value,
    alone or with server columns."""
    return {"name", "value"} <= cols and bool(cols & _PARAMETER_MARKERS or cols == {"name", "value"})


def _quotes_parameters(head: str) -> bool:
    """Observer settings quoted inline ("cpu_quota_concurrency = 4"), outside ALTER SYSTEM
    (most heads hold no parameter name: a substring test per name rules them out)."""
    return any(name in head for name in KNOWN_OBSERVER_PARAMETERS) and any(
        _INLINE.search(line) and not _ALTER_SYSTEM.match(line) for line in head.splitlines()
    )


@register(
    "oceanbase_parameters",
    commands=(
        r"(?i)\bshow\s+parameters\b",
        r"(?i)\bselect\b.*\bname\b.*\bvalue\b.*\bfrom\b.*(parameter|__all_sys_parameter|__all_virtual_sys_parameter_stat)",
    ),
    detect=_looks_like_parameters,
    needles=("|", "*****", "=", ":"),
    priority=3,
)
def parse_oceanbase_parameters(text: str) -> OceanBaseFacts:
    """Observer parameters from ``show parameters`` / ``gv$`` / ``select name, value`` tables.

    >>> t = ("+-----------------------+-------+\\n| name                  | value |\\n"
    ...      "+-----------------------+-------+\\n| cpu_quota_concurrency | 4     |\\n"
    ...      "+-----------------------+-------+\\n")
    >>> parse_oceanbase_parameters(t).parameters
    {'cpu_quota_concurrency': '4'}
    """
    facts = OceanBaseFacts()
    _read_name_value(_name_value_tables(text, proxy=False), facts.parameters, facts.lines)
    if not facts.parameters:
        _read_inline(facts, text)
    if not facts.parameters:
        raise ParseError("no OceanBase parameter table (name/value columns) or known parameter setting")
    return facts


def _read_inline(facts: OceanBaseFacts, text: str) -> None:
    """Known parameters set inline in prose (``cpu_quota_concurrency = 4``), the
    first of each kept; ALTER SYSTEM lines are not read."""
    for number, line in enumerate(text.splitlines(), 1):
        if _ALTER_SYSTEM.match(line):
            continue
        for m in _INLINE.finditer(line):
            name = m.group("name")
            if name not in facts.parameters:
                facts.parameters[name] = m.group("value")
                facts.lines[name] = number


@register(
    "odp_proxyconfig",
    commands=(r"(?i)\bshow\s+proxyconfig\b",),
    paths=(r"(?i)proxyconfig[^/]*$",),
    detect=lambda head: any(
        {"name", "value"} <= set(t.columns)
        and set(t.columns) & _PROXY_MARKERS
        and not set(t.columns) & _PARAMETER_MARKERS
        for t in parse_result_tables(head)
    ),
    priority=9,
)
def parse_odp_proxyconfig(text: str) -> OceanBaseFacts:
    """ODP settings from ``show proxyconfig [like ...]``.

    >>> t = ("+---------------------+--------+-------------+\\n| name | value | need_reboot |\\n"
    ...      "+---------------------+--------+-------------+\\n| server_routing_mode | random | false |\\n"
    ...      "+---------------------+--------+-------------+\\n")
    >>> parse_odp_proxyconfig(t).proxy_config
    {'server_routing_mode': 'random'}
    """
    facts = OceanBaseFacts()
    _read_name_value(_name_value_tables(text, proxy=True), facts.proxy_config, facts.lines)
    if not facts.proxy_config:
        raise ParseError("no proxyconfig table (name/value columns)")
    return facts


def _count_column(columns: list[str]) -> int | None:
    for i, col in enumerate(columns):
        if re.fullmatch(r"count\s*\(\s*(\*|1|\w+)\s*\)|cnt|count|c|num", col):
            return i
    return None


@register(
    "sql_audit_plan_types",
    commands=(r"(?i)\bselect\b.*\bplan_type\b.*\bfrom\b.*sql_audit",),
    detect=lambda head: any(
        t.columns and t.columns[0] == "plan_type" and _count_column(t.columns) is not None
        for t in parse_result_tables(head)
    ),
    priority=9,
)
def parse_sql_audit_plan_types(text: str) -> OceanBaseFacts:
    """``plan_type -> count`` from ``select plan_type, count(*) from gv$sql_audit group by plan_type``.

    >>> t = ("+-----------+----------+\\n| plan_type | count(1) |\\n+-----------+----------+\\n"
    ...      "| 1 | 1463222 |\\n| 2 | 1286613 |\\n+-----------+----------+\\n")
    >>> parse_sql_audit_plan_types(t).plan_type_counts
    {1: 1463222, 2: 1286613}
    """
    facts = OceanBaseFacts()
    for table in parse_result_tables(text):
        if "plan_type" not in table.columns:
            continue
        count_i = _count_column(table.columns)
        if count_i is None:
            continue
        _add_plan_types(facts, table, table.columns.index("plan_type"), count_i)
    if not facts.plan_type_counts:
        raise ParseError("no plan_type/count result table")
    return facts


def _add_plan_types(facts: OceanBaseFacts, table: ResultTable, plan_i: int, count_i: int) -> None:
    """Add each row's count to its plan type's; ParseError on a row that is no numbers."""
    for row, ln in zip(table.rows, table.row_lines, strict=True):
        try:
            plan_type = int(row[plan_i])
            count = int(row[count_i].replace(",", ""))
        except ValueError:
            raise ParseError(f"non-numeric plan_type row: {row!r}", line=ln) from None
        facts.plan_type_counts[plan_type] = facts.plan_type_counts.get(plan_type, 0) + count
        facts.lines[f"plan_type.{plan_type}"] = ln
