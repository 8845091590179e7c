"""Issue 25 point 2: a rule is listed as checked only when every fact it
decides on was there (DESIGN.md, "What a result claims").

For EVERY rule: take a real snapshot where it fires (the first golden input
that produces it, else its firing rule test's input), read the facts the rule
declares it decides on for the host it fired on (``RuleSpec.relevant``), then
remove each of them in turn from every host and analyse again: the rule must
move to ``not_checked`` (with the commands of that fact), never to "checked,
quiet"."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

from collectors.archive import load_snapshot
from collectors.facts import HostFacts, SnapshotFacts
from engine.rules import RuleContext, host_name, load_all
from engine.run import FACT_SOURCES, HOST_FACT_CHECKS, analyze, commands_for
from tests.conftest import FIXTURES
from tests.triage.golden_inputs import GOLDEN, snapshots

REGISTRY = load_all()


def _sysctl_drop(h: HostFacts, *keys: str) -> None:
    if h.sysctl is not None:
        for key in keys:
            h.sysctl.values.pop(key, None)


def _nodes(h: HostFacts) -> list:
    return list(h.numa.nodes.values()) if h.numa else []


def _no_numa(h: HostFacts) -> None:
    h.numa = None
    h.capabilities = None
    if h.cpu is not None:
        h.cpu.numa_nodes = None
        h.cpu.numa_node_cpus = {}


def _no_node_meminfo(h: HostFacts) -> None:
    for n in _nodes(h):
        n.meminfo, n.size_mb, n.free_mb = {}, None, None


def _no_pagecache(h: HostFacts) -> None:
    for n in _nodes(h):
        n.meminfo.pop("FilePages", None)


def _no_node_cpus(h: HostFacts) -> None:
    for n in _nodes(h):
        n.cpus = []
    if h.cpu is not None:
        h.cpu.numa_node_cpus = {}
    h.capabilities = None


def _no_hugepages(h: HostFacts) -> None:
    h.hugepages = None
    if h.meminfo is not None:
        h.meminfo.values = {k: v for k, v in h.meminfo.values.items() if not k.startswith("HugePages")}
    for n in _nodes(h):
        n.meminfo = {k: v for k, v in n.meminfo.items() if not k.startswith("HugePages")}
    _sysctl_drop(h, "vm.nr_hugepages")


def _no_per_cpu(h: HostFacts) -> None:
    if h.cpu_usage is not None:
        h.cpu_usage.per_cpu = [c for c in h.cpu_usage.per_cpu if c.cpu == "all"]


def _set(**values: object) -> Callable[[HostFacts], None]:
    def strip(h: HostFacts) -> None:
        for name, value in values.items():
            setattr(h, name, value)

    return strip


def _db(**values: object) -> Callable[[HostFacts], None]:
    def strip(h: HostFacts) -> None:
        if h.database is not None:
            for name, value in values.items():
                setattr(h.database, name, value)

    return strip


def _ob(**values: object) -> Callable[[HostFacts], None]:
    def strip(h: HostFacts) -> None:
        if h.oceanbase is not None:
            for name, value in values.items():
                setattr(h.oceanbase, name, value)

    return strip


def _no_distances(h: HostFacts) -> None:
    if h.numa is not None:
        h.numa.distances = {}
    h.capabilities = None


def _no_warnings(h: HostFacts, *codes: str) -> None:
    """The data stores' warnings ``codes`` gone; the logs (the stores) stay."""
    for log in h.services:
        log.warnings = [w for w in log.warnings if w.code not in codes]


def _setting_gone(key: str, *codes: str) -> Callable[[HostFacts], None]:
    """A sysctl gone from the sysctl output and from the data stores' logs
    (their warnings ``codes`` that printed it)."""

    def strip(h: HostFacts) -> None:
        _sysctl_drop(h, key)
        _no_warnings(h, *codes)

    return strip


def _no_thp(h: HostFacts, *names: str) -> None:
    names = names or ("enabled", "defrag")
    if h.hugepages is not None:
        for name in names:
            setattr(h.hugepages, f"thp_{name}", None)
    codes = {f"thp_{n}" for n in names}
    if "enabled" in names:  # what else tells the mode: 8.0's sysfs advice, Redis's huge pages in use
        codes |= {"thp_sysfs", "anon_huge_pages"}
    _no_warnings(h, *codes)


def _no_mongodb_version(h: HostFacts) -> None:
    for log in h.services:
        if log.kind == "mongodb":
            log.version = None
            log.warnings = [w for w in log.warnings if not w.code.startswith("thp_")]


def _no_redis_fork(h: HostFacts) -> None:
    for log in h.services:
        if log.kind == "redis":
            log.settings.pop("latest_fork_usec", None)
            log.forks = []


def _no_process_numa(h: HostFacts) -> None:
    h.process_numa = []
    _no_warnings(h, "numa_interleave")


def _no_datastore(h: HostFacts) -> None:
    h.database, h.services, h.processes, h.process_numa = None, [], None, []
    if h.cpu_usage is not None:
        h.cpu_usage.processes = []


def _no_pg_settings(h: HostFacts) -> None:
    """PostgreSQL's settings gone; the server itself still seen (its log or process)."""
    for log in h.services:
        if log.kind == "postgresql":
            log.settings = {}


def _no_oracle_settings(h: HostFacts) -> None:
    """Oracle's parameters and report gone; the instance itself still seen."""
    for log in h.services:
        if log.kind == "oracle":
            log.settings = {}


def _no_max_map_count(h: HostFacts) -> None:
    """vm.max_map_count gone from sysctl and MongoDB's warning about it gone
    from its log (the log, and so MongoDB, still seen)."""
    _sysctl_drop(h, "vm.max_map_count")
    for log in h.services:
        log.warnings = [w for w in log.warnings if w.code != "max_map_count"]


def _no_free_hugepages(h: HostFacts) -> None:
    """HugePages_Free gone from /proc/meminfo (the reserved count still known)."""
    if h.meminfo is not None:
        h.meminfo.values.pop("HugePages_Free", None)


def _no_page_tables(h: HostFacts) -> None:
    """PageTables gone from /proc/meminfo (the rest of it still known)."""
    if h.meminfo is not None:
        h.meminfo.values.pop("PageTables", None)


def _no_flush_method(h: HostFacts) -> None:
    """innodb_flush_method gone, and the version that would give its default."""
    if h.database is not None:
        for name in ("innodb_flush_method", "innodb_data_file_buffering", "version"):
            h.database.variables.pop(name, None)
        h.database.version = None


def _no_balancing_setting(h: HostFacts) -> None:
    h.sysctl = None
    h.kernel = None


# How to take each fact out of a host: what HOST_FACT_CHECKS looks for, gone.
STRIP: dict[str, Callable[[HostFacts], None]] = {
    "cpu": _set(cpu=None),
    "numa": _no_numa,
    "numa_distances": _no_distances,
    "node_meminfo": _no_node_meminfo,
    "node_pagecache": _no_pagecache,
    "node_cpus": _no_node_cpus,
    "numastat": lambda h: [setattr(n, "numastat", {}) for n in _nodes(h)] and None,
    "meminfo": _set(meminfo=None),
    "hugepages": _no_hugepages,
    "sysctl": _set(sysctl=None),
    "zone_reclaim_mode": lambda h: _sysctl_drop(h, "vm.zone_reclaim_mode"),
    "numa_balancing": _no_balancing_setting,
    "cmdline": _set(cmdline=None),
    "kernel": _set(kernel=None),
    "domains": _set(domains=[]),
    "virsh_list": _set(virsh_list=None),
    "database": _set(database=None),
    "db_variables": _db(variables={}),
    "db_version": _db(version=None),
    "db_events": _db(events=[]),
    "oceanbase": _ob(parameters={}),
    "odp": _ob(proxy_config={}),
    "sql_audit": _ob(plan_type_counts={}),
    "tc": _set(tc=None),
    "pings": _set(pings=[]),
    "ping_rtt": _set(pings=[]),
    "cpu_usage": _set(cpu_usage=None),
    "per_cpu_usage": _no_per_cpu,
    "softirqs": _set(softirqs=None),
    "disks": _set(disks=None),
    "benchmarks": _set(benchmarks=[]),
    "memory_devices": _set(memory_devices=None),
    "nic_channels": _set(nic_channels=[]),
    "interrupts": _set(interrupts=None),
    "vmstat": _set(vmstat=None),
    "page_tables": _no_page_tables,
    "vmstat_swap_unit": _set(vmstat=None),
    "db_flush_method": _no_flush_method,
    "process_numa": _no_process_numa,
    "swappiness": _setting_gone("vm.swappiness"),
    "overcommit": _setting_gone("vm.overcommit_memory", "overcommit_memory"),
    "zone_reclaim": _setting_gone("vm.zone_reclaim_mode", "zone_reclaim"),
    "somaxconn": _setting_gone("net.core.somaxconn", "somaxconn"),
    "thp": _no_thp,
    "thp_defrag": lambda h: _no_thp(h, "defrag"),
    "mongodb_version": _no_mongodb_version,
    "redis_fork": _no_redis_fork,
    "datastore": _no_datastore,
    "proc_vmstat": _set(proc_vmstat=None),
    "ksm": _set(ksm=None),
    "io_schedulers": _set(io_schedulers=None),
    "cpu_governor": lambda h: h.cpu_power.governors.clear() if h.cpu_power else None,
    "pg_settings": _no_pg_settings,
    "oracle_settings": _no_oracle_settings,
    "max_map_count": _no_max_map_count,
    "hugepages_usage": _no_free_hugepages,
    "cpu_idle": lambda h: h.cpu_power.idle_states.clear() if h.cpu_power else None,
}


def test_every_host_fact_can_be_taken_out_and_has_commands():
    assert sorted(STRIP) == sorted(HOST_FACT_CHECKS)
    for name in HOST_FACT_CHECKS:
        assert name in FACT_SOURCES and commands_for([name]), name


# Rules the golden inputs never fire: their firing rule tests' inputs.
SEEDS = FIXTURES / "seeds"


def _edited(path: Path, old: str, new: str) -> Callable[[Path], list[Path]]:
    def make(tmp: Path) -> list[Path]:
        text = path.read_text(encoding="utf-8")
        assert old in text
        out = tmp / path.name
        out.write_text(text.replace(old, new), encoding="utf-8")
        return [out]

    return make


def _cluster_drift(tmp: Path) -> list[Path]:
    out = []
    for path in sorted((SEEDS / "kunpeng-stream-zone-reclaim" / "before").glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        if path.name == "gp-sdw02.txt":
            text = text.replace("vm.zone_reclaim_mode = 0", "vm.zone_reclaim_mode = 1")
        (tmp / path.name).write_text(text, encoding="utf-8")
        out.append(tmp / path.name)
    return out


_INTERLEAVE_ROW = "| innodb_numa_interleave              | ON "
EXTRA: dict[str, Callable[[Path], list[Path]]] = {
    "memory.db_exceeds_node": _edited(
        SEEDS / "percona-numa-interleave-startup" / "before" / "db-3301.txt",
        _INTERLEAVE_ROW,
        _INTERLEAVE_ROW.replace(" ON ", " OFF"),
    ),
    "fleet.numa_config_drift": _cluster_drift,
    # a KVM host that shows its guests without their XMLs too (virsh list): a
    # bare domain XML is the only sign on its input that a guest exists
    "kvm.virtio_net_single_queue": lambda _tmp: sorted(
        (SEEDS / "zstack-mariadb-v2v" / "before").glob("*.txt")
    ),
    # the library case's fixture (values its write-ups state); no golden input shows PostgreSQL settings
    "postgresql.huge_pages_unused": lambda tmp: [
        FIXTURES / "cases" / "postgresql-linux70-preemption-spinlock" / "before" / "pg17-graviton4.txt"
    ],
    # published outputs (tests/fixtures/published/memory)
    "memory.swap_activity": lambda _tmp: [
        FIXTURES / "published" / "memory" / "lkml-2003-sap-2.4.20rmap-vmstat.txt"
    ],
    "memory.page_tables_large": lambda _tmp: [
        FIXTURES / "published" / "memory" / "pg-hugepages-post-pagetables-grep.txt"
    ],
    "mysql.flush_method_buffered": lambda _tmp: [
        FIXTURES / "published" / "dbside" / "burton-2007-innodb-7g-pool-8g-swap.txt"
    ],
    # no published KVM guest with vhost-net off prints its XML (kb/data/rules_without_case.yaml):
    # the published nova guest's XML with its domain type made kvm (its only edit)
    "kvm.vhost_net_disabled": _edited(
        FIXTURES / "published" / "kvmxml" / "sdndbg-neutron-diag-nova-tcg-instance.xml",
        "<domain type='qemu'",
        "<domain type='kvm'",
    ),
    "numa.balancing_disabled": _edited(
        SEEDS / "zstack-mariadb-v2v" / "before" / "zstack-9.txt",
        "kernel.numa_balancing = 1",
        "kernel.numa_balancing = 0",
    ),
}


@cache
def _golden_inputs() -> dict[str, list[Path]]:
    golden = json.loads(GOLDEN.read_text())
    inputs = snapshots()
    first: dict[str, list[Path]] = {}
    # the seeds first: whole hosts, where a rule's scope shows in more than one artifact
    for name in sorted(golden, key=lambda n: (not n.startswith("seed/"), n)):
        for f in golden[name]["findings"]:
            first.setdefault(f["rule"], inputs[name])
    return first


def _firing_snapshot(rule_id: str, tmp: Path) -> SnapshotFacts | None:
    if rule_id in EXTRA:
        return load_snapshot(EXTRA[rule_id](tmp))
    paths = _golden_inputs().get(rule_id)
    return load_snapshot(paths) if paths else None


# A rule comparing several settings still fires on the others.
STILL_FIRES: dict[str, tuple[str, ...]] = {
    # the hosts still differ in another setting (read from another artifact)
    "fleet.numa_config_drift": ("numa", "sysctl"),
    "kvm.host_contention": ("domains",),  # the busy processes on the host
    "memory.hugepages_absent": ("meminfo",),  # the guests' size, from their XMLs
    # the error log shows the slow start
    "mysql.numa_interleave_populate_startup": ("db_variables", "db_version"),
    "mysql.numa_interleave_unavailable": ("db_variables",),  # a MariaDB build never has it
}
# Facts that are also the only sign on the input that the rule applies (a
# workload seen): without them the rule is not relevant, so it is neither
# checked nor not checked.
SCOPE: dict[str, tuple[str, ...]] = {
    "disk.latency_high": ("disks",),  # iostat alone: no database or benchmark on the input
    "fleet.benchmark_spread": ("benchmarks",),  # no benchmark: no spread to ask about
    # the outputs alone, no data store or guest in sight: without them nothing says the host matters
    "memory.direct_reclaim_stalls": ("proc_vmstat",),
    "kvm.ksm_active": ("ksm",),
    "net.irq_single_cpu": ("interrupts",),
    "disk.io_scheduler": ("io_schedulers",),
    "cpu.deep_cstates": ("cpu_idle",),
    "memory.swap_activity": ("vmstat", "vmstat_swap_unit"),
    "memory.page_tables_large": ("page_tables",),
    "mysql.flush_method_buffered": ("db_flush_method",),
    "kvm.vhost_net_disabled": ("domains",),  # its input is one guest's XML: nothing else shows a guest
}

# memory.dimm_population_unbalanced fires in its rule test on facts built from
# dmidecode records (no transcript of a whole host has one): walked there.
WALKED_ELSEWHERE = {"memory.dimm_population_unbalanced"}


@pytest.mark.parametrize("rule_id", sorted(REGISTRY))
def test_every_rule_declares_what_it_decides_on(rule_id):
    spec = REGISTRY[rule_id]
    assert spec.relevant is not None, f"{rule_id} declares no facts it decides on (relevant=)"


@pytest.mark.parametrize("rule_id", sorted(set(REGISTRY) - WALKED_ELSEWHERE))
def test_rule_without_a_deciding_fact_is_not_checked(rule_id, tmp_path):
    snapshot = _firing_snapshot(rule_id, tmp_path)
    assert snapshot is not None, f"no input fires {rule_id}"
    result = analyze(snapshot)
    fired = [f for f in result.findings if f.rule == rule_id]
    assert fired, f"{rule_id} does not fire on its input"
    assert rule_id in result.checked
    ctx = RuleContext(snapshot=snapshot)
    by_name = {host_name(h): h for h in snapshot.hosts}
    hosts = [by_name[f.host] for f in fired if f.host in by_name] or list(snapshot.hosts)
    declared = sorted({name for h in hosts for name in (REGISTRY[rule_id].relevant(ctx, h) or ())})
    assert declared, f"{rule_id} declares no facts for the host it fired on"
    for name in declared:
        stripped = _strip(snapshot, name)
        again = analyze(stripped)
        if rule_id in again.rule_ids and name in STILL_FIRES.get(rule_id, ()):
            continue  # another part of the rule still has its facts and fires
        assert rule_id not in again.rule_ids, (rule_id, name, "still fires without it")
        assert rule_id not in again.checked, (rule_id, name, "listed as checked without it")
        if name in SCOPE.get(rule_id, ()):
            continue  # the fact was the only sign the rule applies: no verdict, and not "checked"
        entries = [n for n in again.not_checked if n.rule == rule_id]
        assert entries, (rule_id, name, "not listed under not_checked")
        assert any(set(commands_for([name])) <= set(n.commands) for n in entries), (rule_id, name)


def _strip(snapshot: SnapshotFacts, name: str) -> SnapshotFacts:
    copy = _deepcopy(snapshot)
    for h in copy.hosts:
        STRIP[name](h)
    if name == "benchmarks":
        copy.fleet_profiles = {}
    return copy


def _deepcopy(snapshot: SnapshotFacts) -> SnapshotFacts:
    import copy

    return copy.deepcopy(snapshot)


def test_dimm_rule_without_its_dmidecode_is_not_checked():
    from tests.engine.rules.test_rules_memory import _analyze_host, _dimm, _host_with_dimms

    dimms = [_dimm(f"CPU1_DIMM_{c}1", 0, c, 16384, i * 20) for i, c in enumerate("ABCD")]
    dimms += [
        _dimm(f"CPU2_DIMM_{c}1", 1, c, 16384 if c in "AB" else None, 100 + i * 20)
        for i, c in enumerate("ABCD")
    ]
    host = _host_with_dimms(dimms)
    assert "memory.dimm_population_unbalanced" in _analyze_host(host).rule_ids
    host.memory_devices = None
    result = analyze(SnapshotFacts(hosts=[host]))
    assert "memory.dimm_population_unbalanced" not in result.checked
    assert "memory.dimm_population_unbalanced" not in result.rule_ids
