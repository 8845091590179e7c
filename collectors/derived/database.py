"""Database values derived from variables and parameters."""

from __future__ import annotations

from collectors.derived.values import as_int
from collectors.facts import HostFacts
from collectors.sizes import size_bytes


def db_pool_bytes(host: HostFacts) -> int | None:
    """The database's buffer pool in bytes (None: no database or unknown)."""
    if host.database is None:
        return None
    return size_bytes(host.database.variables.get("innodb_buffer_pool_size"))


def observer_cpus(host: HostFacts) -> tuple[int | None, str]:
    """An observer's CPUs and the fact they come from: its cpu_count parameter
    when set, else the host's logical CPUs (the CPUs it is bound to are not in
    the facts yet)."""
    ob = host.oceanbase
    cpu_count = as_int(ob.parameters.get("cpu_count")) if ob else None
    if cpu_count:
        return cpu_count, "oceanbase.parameters.cpu_count"
    return host.logical_cpus(), "cpu.cpus"
