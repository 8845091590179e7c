"""Database values derived from variables and parameters."""

from __future__ import annotations

from collectors.derived.values import as_int
from collectors.facts import HostFacts, ServiceLog
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


# PostgreSQL memory settings written without a unit count blocks of 8 kB
# (shared_buffers, effective_cache_size, wal_buffers) or kB (work_mem ...)
_PG_BLOCK_SETTINGS = frozenset({"shared_buffers", "effective_cache_size", "wal_buffers"})


def store_settings(host: HostFacts, kind: str) -> ServiceLog | None:
    """The settings of a data store of ``kind`` the host's facts show
    (PostgreSQL's ``SHOW ALL``, Oracle's parameters and large-page report),
    None when none were given."""
    for log in host.services:
        if log.kind == kind and log.settings:
            return log
    return None


def pg_settings(host: HostFacts) -> ServiceLog | None:
    """PostgreSQL's settings (``SHOW ALL``, ``postgresql.conf``)."""
    return store_settings(host, "postgresql")


def oracle_settings(host: HostFacts) -> ServiceLog | None:
    """Oracle's memory parameters and alert-log large-page report."""
    return store_settings(host, "oracle")


def pg_setting_bytes(settings: dict[str, str], name: str) -> int | None:
    """A PostgreSQL memory setting in bytes, as psql (``16GB``), a pg_settings
    grid (``2097152*8kB``) or postgresql.conf (``16384``: blocks) writes it.

    >>> pg_setting_bytes({"shared_buffers": "16GB"}, "shared_buffers")
    17179869184
    >>> pg_setting_bytes({"shared_buffers": "16384*8kB"}, "shared_buffers")
    134217728
    >>> pg_setting_bytes({"shared_buffers": "16384", "work_mem": "4096"}, "shared_buffers")
    134217728
    """
    value = (settings.get(name) or "").strip()
    if not value:
        return None
    count, _, unit = value.partition("*")
    if unit:
        per = size_bytes(unit)
        return int(count) * per if count.isdigit() and per else None
    if value.isdigit():
        return int(value) * (8192 if name in _PG_BLOCK_SETTINGS else 1024)
    return size_bytes(value)
