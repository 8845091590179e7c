"""What a host runs, as far as its facts show: the workloads whose vendors say
how NUMA balancing and zone reclaim should be set (issue 25; sources in
docs/rules.md, from the tuned profiles, obdiag, SAP's checks and the public
PostgreSQL, Cassandra and MongoDB incidents)."""

from __future__ import annotations

import re

from collectors.facts import HostFacts

# process names (``ps`` comm or the first word of args) -> workload
_PROCESSES = (
    (re.compile(r"^(ora_pmon_|ora_smon_|tnslsnr$|oracle)"), "oracle"),
    (re.compile(r"^hdb(indexserver|nameserver|daemon)"), "sap-hana"),
    (re.compile(r"^sqlservr$"), "mssql"),
    (re.compile(r"^(postgres|postmaster)$"), "postgresql"),
    (re.compile(r"^mongod$"), "mongodb"),
    (re.compile(r"^observer$"), "oceanbase"),
    (re.compile(r"^(mysqld|mariadbd|mysqld_safe)$"), "mysql"),
)
# These vendors require kernel.numa_balancing = 0 for their database: Oracle,
# SAP HANA (check 2200_numa_balancing) and SQL Server (the tuned profiles
# oracle, sap-hana, mssql), OceanBase (obdiag system/parameter.py).
BALANCING_OFF_WORKLOADS = frozenset({"oracle", "sap-hana", "mssql", "oceanbase"})
# Databases whose page cache filling a node is normal and where turning zone
# reclaim on caused the incident (PostgreSQL, Cassandra, MongoDB write-ups);
# every database host is treated so: its memory is placed, not reclaimed.
DATABASE_WORKLOADS = frozenset({"oracle", "sap-hana", "mssql", "postgresql", "mongodb", "oceanbase", "mysql"})


def workloads(host: HostFacts) -> set[str]:
    """The workloads the host's facts show: database facts (MySQL family,
    OceanBase) and known server processes.

    >>> from collectors.facts import DatabaseFacts
    >>> sorted(workloads(HostFacts(label="db", database=DatabaseFacts(kind="mariadb"))))
    ['mysql']
    """
    found: set[str] = set()
    if host.database is not None:
        found.add("mysql")
    if host.oceanbase is not None:
        found.add("oceanbase")
    for proc in host.processes.processes if host.processes else ():
        name = (proc.command or "").split()[0].rsplit("/", 1)[-1] if proc.command else ""
        for pattern, workload in _PROCESSES:
            if pattern.search(name):
                found.add(workload)
    return found
