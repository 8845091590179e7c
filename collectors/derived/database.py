"""Database values derived from variables and parameters."""

from __future__ import annotations

import re
from dataclasses import dataclass

from collectors.derived.values import as_bool, as_int
from collectors.facts import DatabaseFacts, HostFacts, ServiceLog
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
    value = (settings.get(name) or "").strip()  # (an empty one is no size: None below)
    count, _, unit = value.partition("*")
    if unit:
        per = size_bytes(unit)
        return int(count) * per if count.isdigit() and per else None
    if value.isdigit():
        return int(value) * (8192 if name in _PG_BLOCK_SETTINGS else 1024)
    return size_bytes(value)


# innodb_flush_method values whose data-file reads and writes go through the
# kernel's page cache (fdatasync is 5.x's name for fsync; littlesync/nosync are
# test settings); O_DIRECT, O_DIRECT_NO_FSYNC and Percona's ALL_O_DIRECT bypass it
BUFFERED_FLUSH_METHODS = frozenset({"fsync", "fdatasync", "o_dsync", "littlesync", "nosync"})
# MariaDB printed the method as a number before 10.5 in some builds (0..5 in this order)
_MARIADB_FLUSH_NUMBERS = ("fsync", "O_DSYNC", "littlesync", "nosync", "O_DIRECT", "O_DIRECT_NO_FSYNC")


@dataclass(frozen=True)
class FlushMethod:
    """How InnoDB opens its data files, and how that is known: ``"variable"``
    (innodb_flush_method as the server or my.cnf gives it), ``"buffering"``
    (MariaDB 11's innodb_data_file_buffering) or ``"default"`` (not set: the
    default of the version)."""

    method: str
    how: str
    variable: str  # the variable the answer rests on ("version" for a default)

    @property
    def buffered(self) -> bool:
        return self.method.lower() in BUFFERED_FLUSH_METHODS


def mysql_version(db: DatabaseFacts) -> tuple[str, tuple[int, ...]] | None:
    """The server's flavour and version numbers, from its version string.

    >>> mysql_version(DatabaseFacts(version="10.4.14-MariaDB-log"))
    ('mariadb', (10, 4, 14))
    >>> mysql_version(DatabaseFacts(kind="mysql", version="5.7"))
    ('mysql', (5, 7))
    """
    text = db.version or db.variables.get("version") or ""
    m = re.match(r"\s*(\d+)\.(\d+)(?:\.(\d+))?", text)
    if not m:
        return None
    label = " ".join([db.kind or "", text, db.variables.get("version_comment", "")]).lower()
    return _flavour(label), tuple(int(g) for g in m.groups() if g is not None)


def _flavour(label: str) -> str:
    """``mariadb`` or ``percona`` when the server's kind, version and comment
    (``label``, lower case) name one, else ``mysql``."""
    return next((name for name in ("mariadb", "percona") if name in label), "mysql")


def _default_flush_method(db: DatabaseFacts) -> str | None:
    """The data-file flush method a server uses when innodb_flush_method is not
    set: fsync up to MySQL 8.0 (5.x prints the default as an empty value) and
    before MariaDB 10.6, O_DIRECT from MariaDB 10.6 (MDEV-24854) and MySQL 8.4;
    None when the version does not tell (MySQL 8.1-8.3, or no version)."""
    parsed = mysql_version(db)
    if parsed is None:
        return None
    flavour, numbers = parsed
    if flavour == "mariadb":
        return "O_DIRECT" if numbers[:2] >= (10, 6) else "fsync"
    if numbers[:2] <= (8, 0):
        return "fsync"
    return "O_DIRECT" if numbers[:2] >= (8, 4) else None


def innodb_flush_method(db: DatabaseFacts | None) -> FlushMethod | None:
    """How the server's InnoDB data files are opened, or None when the facts
    do not show innodb_flush_method (a LIKE or WHERE query that did not ask for
    it, a my.cnf that does not set it: the server may have it from elsewhere).
    An empty value is the server's default, told by its version.

    >>> innodb_flush_method(DatabaseFacts(variables={"innodb_flush_method": "O_DIRECT"})).buffered
    False
    >>> innodb_flush_method(DatabaseFacts(version="5.7.30", variables={"innodb_flush_method": ""}))
    FlushMethod(method='fsync', how='default', variable='version')
    >>> innodb_flush_method(DatabaseFacts(version="5.7.22-22-log")) is None
    True
    >>> innodb_flush_method(DatabaseFacts(variables={"innodb_flush_method": ""},
    ...     variable_sources={"innodb_flush_method": "server"})).method
    'fsync'
    """
    if db is None:
        return None
    buffering = as_bool(db.variables.get("innodb_data_file_buffering"))
    if buffering is not None:
        method = "fsync" if buffering else "O_DIRECT"
        return FlushMethod(method, "buffering", "innodb_data_file_buffering")
    if "innodb_flush_method" not in db.variables:
        # a LIKE or WHERE query that did not ask for it, or a my.cnf: not known
        return None
    value = _flush_method_named(db.variables.get("innodb_flush_method") or "")
    if value:
        return FlushMethod(value, "variable", "innodb_flush_method")
    return _unset_flush_method(db)


def _unset_flush_method(db: DatabaseFacts) -> FlushMethod | None:
    """The flush method of a server whose innodb_flush_method is empty: its
    version's default, else fsync when the server itself printed it empty."""
    default = _default_flush_method(db)
    if default:
        return FlushMethod(default, "default", "version")
    if db.variable_sources.get("innodb_flush_method") == "server":
        # only MySQL/Percona up to 5.7 print the variable empty: its NULL default, fsync
        return FlushMethod("fsync", "default", "innodb_flush_method")
    return None


def _flush_method_named(value: str) -> str:
    """The method a value of innodb_flush_method names (MariaDB's numbers by
    their names); "" for an empty or NULL one."""
    value = value.strip().strip("'\"")
    if value.isdigit() and int(value) < len(_MARIADB_FLUSH_NUMBERS):
        value = _MARIADB_FLUSH_NUMBERS[int(value)]
    return "" if value.upper() == "NULL" else value
