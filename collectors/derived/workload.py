"""What a host runs: the data stores seen in its facts, and the kernel settings
that matter to them read from wherever the snapshot shows them (the kernel's
own output first, else what a data store's start-up log says it read)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from collectors.facts import HostFacts, ProcessInfo

# process names of data stores (a command's first word, its path stripped; or a
# process-list row's whole command for the Java ones)
_PROCESS_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("redis", re.compile(r"(?:^|/)(?:redis-server|keydb-server|valkey-server)\b")),
    ("mongodb", re.compile(r"(?:^|/)mongod(?:\s|$)")),
    ("postgresql", re.compile(r"(?:^|/)(?:postgres|postmaster)(?::|\s|$)")),
    ("oracle", re.compile(r"(?:^|/)ora_(?:pmon|smon|lgwr|dbw\d)_\w+")),
    ("mysql", re.compile(r"(?:^|/)(?:mysqld|mariadbd)(?:\s|$)")),
    ("elasticsearch", re.compile(r"org\.elasticsearch\.bootstrap\.Elasticsearch")),
    ("cassandra", re.compile(r"org\.apache\.cassandra\.service\.CassandraDaemon")),
)
# kinds of ``DatabaseFacts.kind`` (the MySQL family's parsers)
_MYSQL_FAMILY = {"mysql", "mariadb", "percona"}


@dataclass(frozen=True)
class Datastore:
    """A data store a host runs, where it was seen, and its version if known."""

    kind: str  # "redis", "mongodb", "postgresql", "oracle", "mysql", "elasticsearch", "cassandra"
    version: str | None
    fact: str  # "database.kind", "services[redis]", "processes[4180]", "process_numa[mongod]"
    parsed: Any  # the parsed artifact, for evidence
    line: int | None


def _process_kind(command: str) -> str | None:
    for kind, pattern in _PROCESS_KINDS:
        if pattern.search(command):
            return kind
    return None


def datastores(host: HostFacts) -> list[Datastore]:
    """Every data store seen on ``host``, one per kind (the most specific
    sighting: a database's own output, then its log, then a process)."""
    found: dict[str, Datastore] = {}
    for store in _sightings(host):
        held = found.get(store.kind)
        if held is None or (held.version is None and store.version is not None):
            found[store.kind] = store
    return sorted(found.values(), key=lambda s: s.kind)


def _sightings(host: HostFacts) -> Iterator[Datastore]:
    """Every sighting of a data store, the most specific first."""
    db = host.database
    if db is not None and (db.kind in _MYSQL_FAMILY or db.kind is None):
        yield Datastore("mysql", db.version, "database.kind", db, db.lines.get("version"))
    for log in host.services:
        if log.kind:
            yield Datastore(log.kind, log.version, f"services[{log.kind}]", log, log.lines.get("version"))
    yield from _process_list_sightings(host)
    yield from _process_numa_sightings(host)


def process_rows(host: HostFacts) -> list[ProcessInfo]:
    """The rows of the host's process lists: ps's, then top's."""
    rows = list(host.processes.processes) if host.processes else []
    if host.cpu_usage is not None:
        rows += host.cpu_usage.processes
    return rows


def _process_list_sightings(host: HostFacts) -> Iterator[Datastore]:
    """The data stores the process lists (ps, top) name."""
    for p in process_rows(host):
        kind = _process_kind(p.command)
        if kind:
            parsed = host.processes if host.processes and p in host.processes.processes else host.cpu_usage
            yield Datastore(kind, None, f"processes[{p.pid}]", parsed, p.line)


def _process_numa_sightings(host: HostFacts) -> Iterator[Datastore]:
    """The data stores the per-process NUMA tables (numastat -p) name."""
    for pn in host.process_numa:
        kind = _process_kind(pn.name or "")
        if kind:
            yield Datastore(kind, None, f"process_numa[{pn.name}]", None, pn.line)


def version_tuple(version: str | None) -> tuple[int, ...] | None:
    """(major, minor, patch) of a version string ("4.4.6-ent" -> (4, 4, 6)).

    >>> version_tuple("6.0.8"), version_tuple("10.4.14-MariaDB-log"), version_tuple(None)
    ((6, 0, 8), (10, 4, 14), None)
    """
    if not version:
        return None
    m = re.match(r"\s*v?(\d{1,4})(?:\.(\d{1,4}))?(?:\.(\d{1,6}))?", version)
    if m is None:
        return None
    return tuple(int(g) for g in m.groups() if g is not None)


@dataclass(frozen=True)
class Setting:
    """A kernel setting and the artifact it was read from."""

    value: str
    fact: str  # "hugepages.thp_enabled", "sysctl.vm.swappiness", "services[mongodb].thp_enabled"
    parsed: Any
    line: int | None
    # True when it is what a data store's log says it read (the kernel's own
    # output was not in the snapshot)
    from_log: bool = False


def _log_setting(host: HostFacts, code: str) -> Setting | None:
    for log in host.services:
        for w in log.warnings:
            if w.code == code and w.value is not None:
                return Setting(w.value, f"services[{log.kind}].{code}", log, w.line, True)
    return None


def thp_setting(host: HostFacts, name: str = "enabled") -> Setting | None:
    """THP ``enabled`` or ``defrag`` (the [selected] mode)."""
    hp = host.hugepages
    value = getattr(hp, f"thp_{name}", None)  # (None without hugepages facts)
    if value and hp is not None:
        return Setting(value, f"hugepages.thp_{name}", hp, hp.lines.get(f"thp_{name}"))
    return _log_setting(host, f"thp_{name}")


_SYSCTL_LOG_CODES = {
    "vm.overcommit_memory": "overcommit_memory",
    "vm.zone_reclaim_mode": "zone_reclaim",
    "net.core.somaxconn": "somaxconn",
    "vm.max_map_count": "max_map_count",
}


def sysctl_setting(host: HostFacts, key: str) -> Setting | None:
    """A sysctl key from ``sysctl`` output, else from a data store's warning
    that printed it."""
    value = host.sysctl_value(key)
    if value is not None and host.sysctl is not None:
        return Setting(value.strip(), f"sysctl.{key}", host.sysctl, host.sysctl.lines.get(key))
    code = _SYSCTL_LOG_CODES.get(key)
    return _log_setting(host, code) if code else None


def service_warning(host: HostFacts, code: str) -> tuple[Any, Any] | None:
    """(log, warning) of the first data store warning ``code`` on the host
    that prints the setting's value, else the first one (a mongosh summary
    line names the warning, the JSON log line after it the value)."""
    found = [(log, w) for log in host.services for w in log.warnings if w.code == code]
    return next(((log, w) for log, w in found if w.value is not None), found[0] if found else None)


# --- vendor guidance on NUMA balancing and zone reclaim (issue 25) --------------------------

# server processes beyond the data stores above whose vendors say how NUMA
# balancing should be set (a command's first word, its path stripped)
_VENDOR_PROCESSES = (
    (re.compile(r"^(ora_pmon_|ora_smon_|tnslsnr$)"), "oracle"),
    (re.compile(r"^hdb(indexserver|nameserver|daemon)"), "sap-hana"),
    (re.compile(r"^sqlservr$"), "mssql"),
    (re.compile(r"^observer$"), "oceanbase"),
)
# These vendors require kernel.numa_balancing = 0 for their database: Oracle,
# SAP HANA (check 2200_numa_balancing) and SQL Server (the tuned profiles
# oracle, sap-hana, mssql), OceanBase (obdiag system/parameter.py).
BALANCING_OFF_WORKLOADS = frozenset({"oracle", "sap-hana", "mssql", "oceanbase"})
# Databases whose page cache filling a node is normal and where turning zone
# reclaim on caused the incident (PostgreSQL, Cassandra, MongoDB write-ups);
# every database host is treated so: its memory is placed, not reclaimed.
DATABASE_WORKLOADS = frozenset(
    {
        "oracle",
        "sap-hana",
        "mssql",
        "postgresql",
        "mongodb",
        "oceanbase",
        "mysql",
        "cassandra",
        "elasticsearch",
    }
)


# What TuneD's own profiles set for NUMA balancing and zone reclaim, and what
# they include (redhat-performance/tuned profiles/*/tuned.conf at commit
# 2bfa4423586bb516452c538a232c8f7075bafbdf; throughput-performance turns
# balancing off on Cavium ThunderX only, not modelled). A custom profile is
# unknown here: its name is reported, its settings are not guessed.
TUNED_INCLUDES = {
    "atomic-guest": "virtual-guest",
    "atomic-host": "throughput-performance",
    "cpu-partitioning": "network-latency",
    "cpu-partitioning-powersave": "cpu-partitioning",
    "enterprise-storage": "throughput-performance",
    "hpc-compute": "latency-performance",
    "mssql": "throughput-performance",
    "network-latency": "latency-performance",
    "network-throughput": "throughput-performance",
    "oracle": "throughput-performance",
    "postgresql": "throughput-performance",
    "realtime": "network-latency",
    "realtime-virtual-guest": "realtime",
    "realtime-virtual-host": "realtime",
    "sap-hana-kvm-guest": "sap-hana",
    "sap-netweaver": "throughput-performance",
    "spectrumscale-ece": "throughput-performance",
    "virtual-guest": "throughput-performance",
    "virtual-host": "throughput-performance",
}
TUNED_SETS: dict[str, dict[str, str]] = {
    "hpc-compute": {"kernel.numa_balancing": "0", "vm.zone_reclaim_mode": "1"},
    "mssql": {"kernel.numa_balancing": "0"},
    "network-latency": {"kernel.numa_balancing": "0"},
    "oracle": {"kernel.numa_balancing": "0"},
    "sap-hana": {"kernel.numa_balancing": "0"},
    "spectrumscale-ece": {"kernel.numa_balancing": "1"},
}
# the workload a profile is made for (its vendor's guidance)
TUNED_WORKLOADS = {
    "oracle": "oracle",
    "mssql": "mssql",
    "sap-hana": "sap-hana",
    "sap-hana-kvm-guest": "sap-hana",
    "postgresql": "postgresql",
}


def tuned_profiles(host: HostFacts, *, applied: bool = True) -> list[str]:
    """The host's TuneD profiles, last one winning; with ``applied`` only
    those in effect (not a preset tuned-adm says is not active)."""
    tuned = host.tuned
    if tuned is None or (applied and tuned.applied is False):
        return []
    return list(tuned.profiles)


def tuned_setting(host: HostFacts, key: str) -> tuple[str, str] | None:
    """(value, profile) of sysctl ``key`` as the host's TuneD profiles set it
    (the profile named is the one whose tuned.conf has the line); None when no
    known profile sets it."""
    found = None
    for profile in tuned_profiles(host):
        name: str | None = profile
        for _depth in range(8):  # includes are a short chain
            if name is None:
                break
            if key in TUNED_SETS.get(name, {}):
                found = (TUNED_SETS[name][key], name)
                break
            name = TUNED_INCLUDES.get(name)
    return found


def workloads(host: HostFacts) -> set[str]:
    """The workloads the host's facts show: its data stores (:func:`datastores`),
    OceanBase parameters, the servers of :data:`_VENDOR_PROCESSES`, and the
    workload its TuneD profile is made for (:data:`TUNED_WORKLOADS`).

    >>> from collectors.facts import DatabaseFacts
    >>> sorted(workloads(HostFacts(label="db", database=DatabaseFacts(kind="mariadb"))))
    ['mysql']
    """
    found = {store.kind for store in datastores(host)}
    found |= {TUNED_WORKLOADS[p] for p in tuned_profiles(host, applied=False) if p in TUNED_WORKLOADS}
    if host.oceanbase is not None:
        found.add("oceanbase")
    return found | _vendor_servers(host)


def _vendor_servers(host: HostFacts) -> set[str]:
    """The workloads of the servers of :data:`_VENDOR_PROCESSES` ps lists (by
    the name of the program each process runs)."""
    found: set[str] = set()
    for proc in host.processes.processes if host.processes else ():
        first = (proc.command or "").split()
        name = first[0].rsplit("/", 1)[-1] if first else ""
        found.update(workload for pattern, workload in _VENDOR_PROCESSES if pattern.search(name))
    return found
