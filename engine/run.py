"""Run every registered rule over the facts of one snapshot.

A rule declares the facts it needs (``requires`` names keys of
:data:`FACT_CHECKS`). When they are missing the rule is reported as skipped
with the reason (``missing <fact>``) instead of silently producing nothing, so
a report tells "checked and fine" apart from "could not check". A rule that
raises is reported in ``skipped`` with the exception type; one broken rule
never stops the analysis.

Every rule declares, per host, the facts it decides on (``relevant``; empty
only when the host's own facts put it out of the rule's scope: one NUMA node,
no database seen). A host that lacks one of them is listed in ``not_checked``
with the commands that produce the fact (:data:`FACT_SOURCES`), and the rule
is then never listed in ``checked`` (DESIGN.md "What a result claims"): a thin
snapshot says what to collect instead of looking healthy. Identical findings are merged
and every finding gets its ``impact``; findings are ordered by it.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from collectors.derived.database import innodb_flush_method, oracle_settings, pg_settings
from collectors.derived.topology import cpu_node_map
from collectors.derived.workload import datastores, service_warning, sysctl_setting, thp_setting
from collectors.facts import HostFacts, SnapshotFacts, to_dict
from engine import partial
from engine.rules import (
    Evidence,
    RuleContext,
    RuleFinding,
    RuleSpec,
    host_domains,
    host_name,
    load_all,
)
from engine.rules.network import ping_rtt_known
from engine.rules.numa import balancing_setting_known
from engine.rules.redis import redis_fork_ms
from engine.rules.swap import swap_rate_known
from engine.rules.thp import mongodb_generation_known
from engine.severity import severity_rank

logger = logging.getLogger(__name__)

# Bump whenever a rule's behaviour changes (thresholds, new rules, evidence):
# snapshots analysed by an older version are re-analysed.
ENGINE_VERSION = "8"


def _numa_nodes(h: HostFacts) -> list:
    return list(h.numa.nodes.values()) if h.numa else []


# Facts one host can have; a rule's ``requires`` and ``relevant`` name these keys.
HOST_FACT_CHECKS: dict[str, Callable[[HostFacts], bool]] = {
    "cpu": lambda h: h.cpu is not None,
    "numa": lambda h: h.numa_node_count() is not None,
    "numa_distances": lambda h: (
        bool(h.numa and h.numa.distances)
        or bool(h.capabilities and any(c.get("distances") for c in h.capabilities.cells.values()))
    ),
    "node_meminfo": lambda h: any(
        n.mem_total_kb() is not None and n.mem_free_kb() is not None for n in _numa_nodes(h)
    ),
    # which CPUs each node holds (numactl -H, sysfs, lscpu or virsh capabilities):
    # numastat -m lists nodes without their CPUs
    "node_cpus": lambda h: bool(cpu_node_map(h)),
    # page cache per node (node meminfo FilePages, numastat -m): free's total says
    # nothing of which node holds it
    "node_pagecache": lambda h: any("FilePages" in n.meminfo for n in _numa_nodes(h)),
    "numastat": lambda h: any(n.numastat for n in _numa_nodes(h)),
    "meminfo": lambda h: h.meminfo is not None,
    "hugepages": lambda h: (
        h.hugepages is not None
        or (h.meminfo is not None and "HugePages_Total" in h.meminfo.values)
        or any("HugePages_Total" in n.meminfo for n in _numa_nodes(h))
        or (h.sysctl is not None and "vm.nr_hugepages" in h.sysctl.values)
    ),
    "sysctl": lambda h: h.sysctl is not None,
    # one setting, not "some sysctl": a ``sysctl -a | grep numa`` has no vm.*
    "zone_reclaim_mode": lambda h: h.sysctl_value("vm.zone_reclaim_mode") is not None,
    # the setting, or what tells its absence apart from not having looked
    "numa_balancing": balancing_setting_known,
    "cmdline": lambda h: h.cmdline is not None,
    "kernel": lambda h: h.kernel is not None,
    "domains": lambda h: bool(host_domains(h)),
    "virsh_list": lambda h: h.virsh_list is not None,
    "database": lambda h: h.database is not None,
    "db_variables": lambda h: bool(h.database and h.database.variables),
    "db_version": lambda h: bool(h.database and h.database.version),
    "db_events": lambda h: bool(h.database and h.database.events),
    # innodb_flush_method, or the version whose default it is
    "db_flush_method": lambda h: innodb_flush_method(h.database) is not None,
    "oceanbase": lambda h: bool(h.oceanbase and h.oceanbase.parameters),
    "odp": lambda h: bool(h.oceanbase and h.oceanbase.proxy_config),
    "sql_audit": lambda h: bool(h.oceanbase and h.oceanbase.plan_type_counts),
    "tc": lambda h: h.tc is not None,
    "pings": lambda h: bool(h.pings),
    # a ping's round trip that decides, not only bounded (Windows' "time<1ms" replies alone)
    "ping_rtt": ping_rtt_known,
    "cpu_usage": lambda h: h.cpu_usage is not None,
    "per_cpu_usage": lambda h: bool(h.cpu_usage and [c for c in h.cpu_usage.per_cpu if c.cpu != "all"]),
    "softirqs": lambda h: h.softirqs is not None,
    "disks": lambda h: bool(h.disks and h.disks.devices),
    "benchmarks": lambda h: bool(h.benchmarks),
    "memory_devices": lambda h: bool(h.memory_devices and h.memory_devices.dimms),
    # a data store (MySQL family, Redis, MongoDB, PostgreSQL, Oracle ...) seen in
    # the database's output, its start-up log or the process list
    "datastore": lambda h: bool(datastores(h)),
    # the THP mode, from /sys or from what a data store's log says it read
    "thp": lambda h: thp_setting(h) is not None,
    # THP defrag: what a fault does when no huge page is free
    "thp_defrag": lambda h: thp_setting(h, "defrag") is not None,
    # MongoDB's version, or the generation its start-up warnings show (8.0's THP
    # advice is the reverse of 7.0's)
    "mongodb_version": mongodb_generation_known,
    "somaxconn": lambda h: sysctl_setting(h, "net.core.somaxconn") is not None,
    # how long Redis's last fork took (INFO latest_fork_usec, or its log's saves)
    "redis_fork": lambda h: redis_fork_ms(h) is not None,
    "swappiness": lambda h: sysctl_setting(h, "vm.swappiness") is not None,
    "overcommit": lambda h: sysctl_setting(h, "vm.overcommit_memory") is not None,
    "zone_reclaim": lambda h: sysctl_setting(h, "vm.zone_reclaim_mode") is not None,
    "vmstat": lambda h: bool(h.vmstat and len(h.vmstat.samples) >= 2),
    # si/so in a known unit (vmstat -S M prints MB), all 0, or moving enough in the smallest unit
    "vmstat_swap_unit": swap_rate_known,
    # the PageTables line of /proc/meminfo (whole or grepped)
    "page_tables": lambda h: bool(h.meminfo and "PageTables" in h.meminfo.values),
    "interrupts": lambda h: h.interrupts is not None,
    "nic_channels": lambda h: bool(h.nic_channels),
    # per-node memory of a process, or MongoDB's own reading of its numa_maps
    "process_numa": lambda h: bool(h.process_numa) or service_warning(h, "numa_interleave") is not None,
    "proc_vmstat": lambda h: h.proc_vmstat is not None,
    # whether KSM runs: the run file (a grep of the pages_* files alone does not say)
    "ksm": lambda h: bool(h.ksm and "run" in h.ksm.values),
    "io_schedulers": lambda h: bool(h.io_schedulers and h.io_schedulers.active),
    "cpu_governor": lambda h: bool(h.cpu_power and h.cpu_power.governors),
    # PostgreSQL's settings (SHOW ALL, postgresql.conf)
    "pg_settings": lambda h: pg_settings(h) is not None,
    # Oracle's memory parameters or its alert log's large-page report
    "oracle_settings": lambda h: oracle_settings(h) is not None,
    # how many reserved huge pages are free (/proc/meminfo)
    "hugepages_usage": lambda h: bool(
        h.meminfo and {"HugePages_Total", "HugePages_Free"} <= set(h.meminfo.values)
    ),
    # vm.max_map_count (sysctl), or MongoDB's warning that it is too low
    "max_map_count": lambda h: (
        sysctl_setting(h, "vm.max_map_count") is not None or service_warning(h, "max_map_count") is not None
    ),
    "cpu_idle": lambda h: bool(h.cpu_power and h.cpu_power.idle_states),
}


def _summarised(snap: SnapshotFacts, count: str) -> int:
    """How many members of the snapshot's fleet summary are physical hosts
    (``count`` "physical") or have benchmark results ("with_benchmarks")."""
    return int(getattr(snap.fleet_summary, count, 0) or 0)


def _any_host(pred: Callable[[HostFacts], Any]) -> Callable[[SnapshotFacts], bool]:
    return lambda snap: any(pred(h) for h in snap.hosts)


FACT_CHECKS: dict[str, Callable[[SnapshotFacts], bool]] = {
    **{name: _any_host(pred) for name, pred in HOST_FACT_CHECKS.items()},
    "guest": lambda snap: bool(snap.guests()),
    # all hosts of a snapshot are one cluster once it holds two physical hosts
    "cluster": lambda snap: len(snap.physical_hosts()) + _summarised(snap, "physical") >= 2,
    # members known by their fleet profile carry their results there
    "benchmarks": lambda snap: (
        any(h.benchmarks for h in snap.hosts)
        or any(p.benchmarks for p in snap.fleet_profiles.values())
        or _summarised(snap, "with_benchmarks") > 0
    ),
}


@dataclass(frozen=True)
class FactSource:
    """Where a fact comes from and the exact commands that produce it, for the
    "not checked" list. ``commands`` work on every platform unless marked;
    ``packages`` names the package per distribution family when the tool may be
    missing; ``root`` says whether the commands need root."""

    artifact: str
    artifact_zh: str
    commands: tuple[str, ...]
    root: bool = False
    packages: dict[str, str] = field(default_factory=dict)


_RHEL, _DEB, _SUSE = "RHEL/CentOS/openEuler/Kylin", "Debian/Ubuntu", "SUSE"
# cpupower: kernel-tools / linux-tools / cpupower by distribution
_CPUPOWER_PACKAGES = {
    _RHEL: "yum install -y kernel-tools",
    _DEB: "apt-get install -y linux-tools-common",
    _SUSE: "zypper install -y cpupower",
}


def _pkg(rhel: str, deb: str | None = None, suse: str | None = None) -> dict[str, str]:
    return {
        _RHEL: f"yum install -y {rhel}",
        _DEB: f"apt-get install -y {deb or rhel}",
        _SUSE: f"zypper install -y {suse or rhel}",
    }


FACT_SOURCES: dict[str, FactSource] = {
    "cpu": FactSource("lscpu", "lscpu 输出", ("lscpu",), packages=_pkg("util-linux")),
    "numa": FactSource(
        "the NUMA topology (numactl -H)",
        "NUMA 拓扑（numactl -H）",
        ("numactl -H", "ls -d /sys/devices/system/node/node*"),
        packages=_pkg("numactl"),
    ),
    "numa_distances": FactSource(
        "the NUMA distance table",
        "NUMA 距离表",
        ("numactl -H", "virsh capabilities"),
        packages=_pkg("numactl"),
    ),
    "node_meminfo": FactSource(
        "per-node memory (node meminfo)",
        "各节点内存（node meminfo）",
        ("cat /sys/devices/system/node/node*/meminfo", "numastat -m", "numactl -H"),
        packages=_pkg("numactl"),
    ),
    "node_cpus": FactSource(
        "the CPUs of each NUMA node",
        "各 NUMA 节点的 CPU",
        ("numactl -H", "lscpu", "cat /sys/devices/system/node/node*/cpulist"),
        packages=_pkg("numactl"),
    ),
    "node_pagecache": FactSource(
        "the page cache of each NUMA node (FilePages)",
        "各 NUMA 节点的页缓存（FilePages）",
        ("cat /sys/devices/system/node/node*/meminfo", "numastat -m"),
        packages=_pkg("numactl"),
    ),
    "numastat": FactSource(
        "numastat counters",
        "numastat 计数",
        ("numastat", "cat /sys/devices/system/node/node*/numastat"),
        packages=_pkg("numactl"),
    ),
    "meminfo": FactSource("/proc/meminfo", "/proc/meminfo", ("cat /proc/meminfo",)),
    "hugepages": FactSource(
        "the static huge page count",
        "静态大页数量",
        ("grep -i huge /proc/meminfo", "sysctl vm.nr_hugepages"),
    ),
    "sysctl": FactSource("kernel settings (sysctl -a)", "内核参数（sysctl -a）", ("sysctl -a",)),
    "zone_reclaim_mode": FactSource(
        "vm.zone_reclaim_mode", "vm.zone_reclaim_mode", ("sysctl vm.zone_reclaim_mode", "sysctl -a")
    ),
    "numa_balancing": FactSource(
        "kernel.numa_balancing (or the kernel release)",
        "kernel.numa_balancing（或内核版本）",
        ("sysctl kernel.numa_balancing", "uname -r"),
    ),
    "cmdline": FactSource("the kernel command line", "内核启动参数", ("cat /proc/cmdline",)),
    "kernel": FactSource("the kernel release", "内核版本", ("uname -r", "cat /etc/os-release")),
    "domains": FactSource(
        "the libvirt domain XML of each guest",
        "每台虚拟机的 libvirt 域 XML",
        (
            "sudo virsh list --all",
            "sudo virsh dumpxml <domain>",
            "virsh -c qemu:///system dumpxml <domain>  # without root: a user in the libvirt group",
            "sudo cat /etc/libvirt/qemu/<domain>.xml",
        ),
        root=True,
        packages={
            _RHEL: "yum install -y libvirt-client",
            _DEB: "apt-get install -y libvirt-clients",
            _SUSE: "zypper install -y libvirt-client",
        },
    ),
    "virsh_list": FactSource(
        "the running guests (virsh list)",
        "运行中的虚拟机（virsh list）",
        (
            "sudo virsh list --all",
            "virsh -c qemu:///system list --all  # without root: a user in the libvirt group",
        ),
        root=True,
    ),
    "database": FactSource(
        "the database variables",
        "数据库参数",
        ("mysql -u root -p -e 'SHOW GLOBAL VARIABLES'", "sudo mysql -e 'SHOW GLOBAL VARIABLES'"),
    ),
    "db_variables": FactSource(
        "the database variables (SHOW GLOBAL VARIABLES)",
        "数据库参数（SHOW GLOBAL VARIABLES）",
        (
            "mysql -u root -p -e 'SHOW GLOBAL VARIABLES'",
            "sudo mysql -e 'SHOW GLOBAL VARIABLES'  # root through the unix socket (Debian/Ubuntu MariaDB)",
            "mysqladmin -u root -p variables",
        ),
    ),
    "db_version": FactSource(
        "the database version", "数据库版本", ("mysql -u root -p -e 'SELECT VERSION()'", "mysqld --version")
    ),
    "db_flush_method": FactSource(
        "InnoDB's flush method (innodb_flush_method and the server version)",
        "InnoDB 的刷盘方式（innodb_flush_method 和服务器版本）",
        (
            'mysql -u root -p -e "SHOW GLOBAL VARIABLES WHERE Variable_name IN '
            "('version', 'innodb_flush_method', 'innodb_buffer_pool_size')\"",
            "mysqladmin -u root -p variables",
        ),
    ),
    "db_events": FactSource(
        "the database error log",
        "数据库错误日志",
        (
            "sudo tail -n 2000 \"$(mysql -Nse 'SELECT @@log_error')\"",
            "sudo journalctl -u mysqld -u mariadb --no-pager",
        ),
        root=True,
    ),
    "oceanbase": FactSource(
        "OceanBase parameters",
        "OceanBase 参数",
        ("obclient -h <observer> -P 2881 -u root@sys -p -e 'SHOW PARAMETERS'",),
    ),
    "odp": FactSource(
        "the ODP (obproxy) configuration",
        "ODP（obproxy）配置",
        ("obclient -h <obproxy> -P 2883 -u root@proxysys -p -e 'SHOW PROXYCONFIG'",),
    ),
    "sql_audit": FactSource(
        "gv$sql_audit plan types",
        "gv$sql_audit 计划类型统计",
        (
            "obclient -h <observer> -P 2881 -u root@sys -p -e "
            "'SELECT plan_type, COUNT(*) FROM oceanbase.gv$sql_audit GROUP BY plan_type'",
        ),
    ),
    "tc": FactSource(
        "tc qdiscs", "tc 队列规则", ("tc -s qdisc show",), packages=_pkg("iproute", "iproute2", "iproute2")
    ),
    "pings": FactSource("ping round trips", "ping 往返时延", ("ping -c 10 <peer>",)),
    "ping_rtt": FactSource(
        "ping round trips measured below a millisecond (Linux ping, or Windows ping with its statistics)",
        "精确到毫秒以下的 ping 往返时延（Linux 的 ping，或带统计行的 Windows ping）",
        ("ping -c 10 <peer>",),
    ),
    "cpu_usage": FactSource(
        "CPU usage over time",
        "一段时间内的 CPU 使用率",
        ("top -bn3 -d 5", "mpstat -P ALL 5 3"),
        packages=_pkg("sysstat"),
    ),
    "per_cpu_usage": FactSource(
        "per-CPU usage", "各 CPU 使用率", ("mpstat -P ALL 5 3", "top -1 -bn3 -d 5"), packages=_pkg("sysstat")
    ),
    "softirqs": FactSource("/proc/softirqs", "/proc/softirqs", ("cat /proc/softirqs",)),
    "disks": FactSource("disk statistics", "磁盘统计", ("iostat -x 5 3",), packages=_pkg("sysstat")),
    "benchmarks": FactSource("benchmark results", "基准测试结果", ("<the benchmark's own output>",)),
    "datastore": FactSource(
        "the data stores the host runs (process list)",
        "主机运行的数据库（进程列表）",
        ("ps -eo pid,psr,pcpu,pmem,args",),
    ),
    "thp": FactSource(
        "the transparent huge page mode",
        "透明大页（THP）模式",
        (
            "cat /sys/kernel/mm/transparent_hugepage/enabled",
            "cat /sys/kernel/mm/transparent_hugepage/defrag",
        ),
    ),
    "thp_defrag": FactSource(
        "the transparent huge page defrag mode",
        "透明大页（THP）defrag 模式",
        ("cat /sys/kernel/mm/transparent_hugepage/defrag",),
    ),
    "mongodb_version": FactSource(
        "the MongoDB version",
        "MongoDB 版本",
        ("mongod --version", "mongosh --quiet --eval 'db.version()'"),
    ),
    "somaxconn": FactSource("net.core.somaxconn", "net.core.somaxconn", ("sysctl net.core.somaxconn",)),
    "redis_fork": FactSource(
        "how long Redis's latest fork took (INFO latest_fork_usec)",
        "Redis 最近一次 fork 的耗时（INFO latest_fork_usec）",
        ("redis-cli INFO stats | grep latest_fork_usec", "redis-cli INFO memory | grep '^used_memory:'"),
    ),
    "swappiness": FactSource("vm.swappiness", "vm.swappiness", ("sysctl vm.swappiness",)),
    "overcommit": FactSource(
        "the overcommit policy", "内存超分配策略", ("sysctl vm.overcommit_memory vm.overcommit_ratio",)
    ),
    "zone_reclaim": FactSource(
        "vm.zone_reclaim_mode", "vm.zone_reclaim_mode", ("sysctl vm.zone_reclaim_mode",)
    ),
    "vmstat": FactSource(
        "swap and memory activity over time (vmstat)",
        "一段时间内的换页与内存活动（vmstat）",
        ("vmstat 5 6",),
        packages=_pkg("procps-ng", "procps", "procps"),
    ),
    "vmstat_swap_unit": FactSource(
        "vmstat with its command line (the unit of si/so: -S M prints MB)",
        "带命令行的 vmstat（si/so 的单位：-S M 时为 MB）",
        ("vmstat 5 6",),
        packages=_pkg("procps-ng", "procps", "procps"),
    ),
    "page_tables": FactSource(
        "page-table memory (PageTables in /proc/meminfo)",
        "页表内存（/proc/meminfo 的 PageTables）",
        ("cat /proc/meminfo",),
    ),
    "interrupts": FactSource("/proc/interrupts", "/proc/interrupts", ("cat /proc/interrupts",)),
    "proc_vmstat": FactSource(
        "reclaim and compaction counters (/proc/vmstat)",
        "回收与内存规整计数（/proc/vmstat）",
        ("cat /proc/vmstat",),
    ),
    "ksm": FactSource(
        "kernel same-page merging state (/sys/kernel/mm/ksm)",
        "内核同页合并状态（/sys/kernel/mm/ksm）",
        ("grep . /sys/kernel/mm/ksm/*",),
    ),
    "io_schedulers": FactSource(
        "the I/O scheduler of each block device",
        "各块设备的 I/O 调度器",
        ("grep . /sys/block/*/queue/scheduler /sys/block/*/queue/rotational",),
    ),
    "cpu_governor": FactSource(
        "the CPU frequency governor",
        "CPU 调频策略（governor）",
        ("cpupower frequency-info", "grep . /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor"),
        packages=_CPUPOWER_PACKAGES,
    ),
    "cpu_idle": FactSource(
        "the CPU idle states (C-states) and their exit latencies",
        "CPU 空闲状态（C-state）及其退出延迟",
        ("cpupower idle-info",),
        packages=_CPUPOWER_PACKAGES,
    ),
    "nic_channels": FactSource(
        "the NIC queue counts (ethtool -l)",
        "网卡队列数（ethtool -l）",
        ("ethtool -l <interface>",),
        packages=_pkg("ethtool"),
    ),
    "process_numa": FactSource(
        "per-node memory of the database process",
        "数据库进程在各节点上的内存",
        ("numastat -p <pid>", "cat /proc/<pid>/numa_maps"),
        packages=_pkg("numactl"),
    ),
    "memory_devices": FactSource(
        "the DIMM population (dmidecode)",
        "内存条安装情况（dmidecode）",
        ("sudo dmidecode -t memory",),
        root=True,
        packages=_pkg("dmidecode"),
    ),
    "pg_settings": FactSource(
        "the PostgreSQL settings (SHOW ALL)",
        "PostgreSQL 的参数（SHOW ALL）",
        ("sudo -u postgres psql -c 'SHOW ALL'", "cat \"$(sudo -u postgres psql -Atc 'SHOW config_file')\""),
    ),
    "oracle_settings": FactSource(
        "Oracle's memory parameters and the alert log's large-page report",
        "Oracle 的内存参数和告警日志中的大页报告",
        (
            "grep -A12 'Large Pages Information' "
            '"$ORACLE_BASE"/diag/rdbms/*/*/trace/alert_*.log | tail -n 14',
            "sqlplus -s / as sysdba <<< 'show parameter memory_target'",
            "sqlplus -s / as sysdba <<< 'show parameter sga'",
            "sqlplus -s / as sysdba <<< 'show parameter use_large_pages'",
        ),
    ),
    "max_map_count": FactSource("vm.max_map_count", "vm.max_map_count", ("sysctl vm.max_map_count",)),
    "hugepages_usage": FactSource(
        "how many reserved huge pages are in use", "预留大页的使用情况", ("grep -i huge /proc/meminfo",)
    ),
}


def fact_sources(facts: Iterable[str]) -> list[FactSource]:
    """Where each of ``facts`` comes from, for those FACT_SOURCES knows."""
    return [FACT_SOURCES[name] for name in facts if name in FACT_SOURCES]


def commands_for(facts: list[str] | tuple[str, ...]) -> list[str]:
    """The exact commands that produce ``facts`` (those that need root start with
    sudo), then the package install per distribution family where the tool may
    be missing."""
    lines: list[str] = []
    for source in fact_sources(facts):
        lines += source.commands
        lines += (f"{install}  # {family}, if missing" for family, install in source.packages.items())
    return list(dict.fromkeys(lines))  # each line once, where it first comes


# What most rules decide on: the first outputs to collect from a host that
# gave nothing checkable (or the collector, collectors/collect.sh, for all of them).
FIRST_FACTS = ("cpu", "numa", "node_meminfo", "numastat", "sysctl", "meminfo")


def first_commands() -> list[str]:
    """The commands that produce :data:`FIRST_FACTS` (no package lines)."""
    return [c for c in commands_for(FIRST_FACTS) if "install -y" not in c]


@dataclass
class NotChecked:
    """A rule that could not be evaluated on a host where it is relevant, and
    how to get the evidence it needs (DESIGN.md ``not_checked``)."""

    rule: str
    reason: str  # "no /proc/meminfo or HugePages_Total was read"
    reason_zh: str = ""
    commands: list[str] = field(default_factory=list)  # exact commands that produce the evidence
    host: str = ""


@dataclass
class AnalysisResult:
    findings: list[RuleFinding] = field(default_factory=list)
    # (rule id, reason): "missing <fact>" or "error: <ExceptionType>: <message>"
    skipped: list[tuple[str, str]] = field(default_factory=list)
    engine_version: str = ENGINE_VERSION
    # rule IDs evaluated (their facts were there), and the relevant ones that were not
    checked: list[str] = field(default_factory=list)
    not_checked: list[NotChecked] = field(default_factory=list)

    @property
    def rule_ids(self) -> set[str]:
        return {f.rule for f in self.findings}


def missing_facts(spec: RuleSpec, snapshot: SnapshotFacts) -> list[str]:
    """Names of the facts ``spec`` needs that the snapshot lacks."""
    missing = []
    for name in spec.requires:
        check = FACT_CHECKS.get(name)
        if check is None:
            raise KeyError(f"rule {spec.id} requires unknown fact {name!r}")
        if not check(snapshot):
            missing.append(name)
    if spec.requires_mode == "any" and len(missing) < len(spec.requires):
        return []
    return missing


# impact = SEVERITY_WEIGHT[severity] x min(past, PAST_CAP): a warning never
# outranks a critical finding, however far past its threshold it is.
SEVERITY_WEIGHT = {"critical": 100.0, "warning": 10.0, "info": 1.0}
PAST_CAP = 9.9


def impact_of(finding: RuleFinding) -> float:
    """Severity weight x how far past its threshold (``RuleFinding.past``, capped)."""
    weight = SEVERITY_WEIGHT.get(finding.severity, 0.0)
    return round(weight * min(max(finding.past, 1.0), PAST_CAP), 3)


def _evidence_key(finding: RuleFinding) -> tuple:
    return tuple(
        (e.fact, json.dumps(to_dict(e.value), sort_keys=True, default=str)) for e in finding.evidence
    )


def merge_identical(findings: list[RuleFinding]) -> list[RuleFinding]:
    """One finding per (rule, host, evidence facts and values): the same fact read
    from two artifacts (``tc qdisc show`` and ``tc -s qdisc``) is one problem; the
    merged finding cites every place it was read."""
    merged: dict[tuple, RuleFinding] = {}
    # the places each merged finding cites, kept as it grows (thousands of
    # guests can give one host-level finding thousands of times)
    cited: dict[tuple, set[tuple]] = {}
    out = []
    for finding in findings:
        key = (finding.rule, finding.host, _evidence_key(finding))
        first = merged.get(key)
        if first is None:
            merged[key] = finding
            cited[key] = {(e.fact, e.artifact, e.line) for e in finding.evidence}
            out.append(finding)
        else:
            _merge_into(first, finding, cited[key])
    return out


def _merge_into(first: RuleFinding, finding: RuleFinding, seen: set[tuple]) -> None:
    """Add to ``first`` the places ``finding`` cites that it does not (``seen``,
    kept up to date), the larger past and the worse severity of the two."""
    for e in finding.evidence:
        if (e.fact, e.artifact, e.line) not in seen:
            seen.add((e.fact, e.artifact, e.line))
            first.evidence.append(e)
    first.past = max(first.past, finding.past)
    if severity_rank(finding.severity) < severity_rank(first.severity):
        first.severity = finding.severity


def _missing_on_host(needs: tuple[str, ...], host: HostFacts) -> list[str]:
    return [name for name in needs if name in HOST_FACT_CHECKS and not HOST_FACT_CHECKS[name](host)]


def not_checked_for(
    registry: dict[str, RuleSpec], ctx: RuleContext, findings: list[RuleFinding]
) -> list[NotChecked]:
    """Rules that are relevant to a host (their ``relevant`` declaration) but
    lack a fact there: what was not seen and the commands that produce it."""
    fired = {(f.rule, f.host) for f in findings}
    return [
        entry
        for rule_id in sorted(registry)
        if registry[rule_id].relevant is not None
        for entry in _hosts_lacking_facts(rule_id, registry[rule_id], ctx, fired)
    ]


def _hosts_lacking_facts(
    rule_id: str, spec: RuleSpec, ctx: RuleContext, fired: set[tuple[str, str]]
) -> Iterator[NotChecked]:
    """A "not in the snapshot" entry of rule ``rule_id`` for each host it did
    not fire on (``fired``) that lacks a fact it is relevant with."""
    for host in ctx.hosts:
        name = host_name(host)
        if (rule_id, name) in fired:
            continue
        missing = _missing_on_host(_relevant_checks(spec, ctx, host, log=True), host)
        if missing:
            yield _not_in_snapshot(rule_id, spec, name, missing)


def _not_in_snapshot(rule_id: str, spec: RuleSpec, host: str, missing: list[str]) -> NotChecked:
    """The rule was not checked on ``host`` for lack of the ``missing`` facts."""
    sources = fact_sources(missing)
    what = "; ".join(s.artifact for s in sources) or ", ".join(missing)
    what_zh = "；".join(s.artifact_zh for s in sources) or ", ".join(missing)
    return NotChecked(
        rule=rule_id,
        reason=f'{what}: not in the snapshot, so "{spec.title}" could not be checked',
        reason_zh=f"快照中没有{what_zh}，无法检查“{spec.title_zh}”",
        commands=commands_for(missing),
        host=host,
    )


def _run_rules(
    registry: dict[str, RuleSpec], ctx: RuleContext, local: RuleContext, result: AnalysisResult
) -> list[str]:
    """Run every rule in id order, a fleet rule over every host (``ctx``), the
    others over the hosts analysed in full (``local``); the ids of those that ran."""
    return [
        rule_id
        for rule_id in sorted(registry)
        if _run_rule(rule_id, registry[rule_id], ctx if is_fleet_rule(rule_id) else local, result)
    ]


def _run_rule(rule_id: str, spec: RuleSpec, ctx: RuleContext, result: AnalysisResult) -> bool:
    """Run one rule, adding its findings to ``result``; False (with the reason in
    ``result.skipped``) when its facts are missing or it broke."""
    try:
        missing = missing_facts(spec, ctx.snapshot)
        if missing:
            result.skipped.append((rule_id, "missing " + spec.join_requires(missing)))
            return False
        found = list(spec.func(ctx) or ())
    except Exception as exc:  # a broken rule must not lose the other findings
        logger.exception("rule %s failed", rule_id)
        result.skipped.append((rule_id, f"error: {type(exc).__name__}: {exc}"))
        return False
    result.findings.extend(found)
    return True


def _rank(findings: list[RuleFinding]) -> list[RuleFinding]:
    """Identical findings merged, each given its impact, the largest first
    (ties keep a stable rule, host order)."""
    merged = merge_identical(findings)
    for finding in merged:
        finding.impact = impact_of(finding)
    merged.sort(key=lambda f: (-f.impact, f.rule, f.host))
    return merged


def _not_checked(
    registry: dict[str, RuleSpec], ctx: RuleContext, local: RuleContext, findings: list[RuleFinding]
) -> list[NotChecked]:
    """What could not be checked: the fleet rules over every host, the others
    over the hosts analysed in full (``local``)."""
    if local is ctx:
        return not_checked_for(registry, ctx, findings)
    fleet = {k: v for k, v in registry.items() if is_fleet_rule(k)}
    others = {k: v for k, v in registry.items() if not is_fleet_rule(k)}
    both = not_checked_for(fleet, ctx, findings) + not_checked_for(others, local, findings)
    fleet_only = ctx.snapshot.fleet_only
    return sorted((n for n in both if n.host not in fleet_only), key=lambda n: n.rule)


def _analysed_in_full(ctx: RuleContext) -> RuleContext:
    """``ctx`` without the hosts present for the fleet rules only (the other
    members of a large cluster, rebuilt from their stored summaries): every
    other rule, and the not-checked list, see the hosts analysed in full."""
    snapshot = ctx.snapshot
    if not snapshot.fleet_only:
        return ctx
    full = [h for h in snapshot.hosts if h.label not in snapshot.fleet_only]
    return RuleContext(snapshot=SnapshotFacts(hosts=full))


def analyze(snapshot: SnapshotFacts, rules: dict[str, RuleSpec] | None = None) -> AnalysisResult:
    """Run ``rules`` (default: the whole registry) over ``snapshot``."""
    registry = rules if rules is not None else load_all()
    whole = snapshot
    snapshot = partial.masked(snapshot)  # conflicting facts: no rule decides on them
    ctx = RuleContext(snapshot=snapshot)
    local = _analysed_in_full(ctx)
    result = AnalysisResult()
    ran = _run_rules(registry, ctx, local, result)
    result.findings = _rank(result.findings)
    result.not_checked = _not_checked(registry, ctx, local, result.findings)
    result.not_checked = with_partial(registry, whole, result)
    # Checked: the rule ran and no host it applies to lacked a fact it decides on
    # (DESIGN.md "What a result claims"): a rule is never both.
    lacking = {n.rule for n in result.not_checked}
    result.checked = [r for r in ran if r not in lacking]
    return result


def _relevant_checks(
    spec: RuleSpec, ctx: RuleContext, host: HostFacts, *, log: bool = False
) -> tuple[str, ...]:
    """The fact checks the rule's ``relevant`` declaration names for ``host``;
    none without one, or when it breaks (it must not stop the analysis: the
    first to ask, ``not_checked_for``, logs the failure)."""
    try:
        return tuple(spec.relevant(ctx, host) or ()) if spec.relevant else ()
    except Exception:
        if log:
            logger.exception("relevance of %s failed", spec.id)
        return ()


def with_partial(
    registry: dict[str, RuleSpec], whole: SnapshotFacts, result: AnalysisResult
) -> list[NotChecked]:
    """``result.not_checked`` with the rules a conflict or a cut kept from
    deciding (``engine.partial``): their reason replaces "not in the snapshot"."""
    ctx = RuleContext(snapshot=whole)
    local = [h for h in whole.hosts if h.label not in whole.fleet_only]
    fired = {(f.rule, f.host) for f in result.findings}
    extra = partial.partial_not_checked(
        registry, local, fired, host_name, lambda spec, host: _relevant_checks(spec, ctx, host)
    )
    if not extra:
        return result.not_checked
    return _with_reasons_replaced(result.not_checked, extra)


def _with_reasons_replaced(
    not_checked: list[NotChecked], extra: list[tuple[str, str, str, str]]
) -> list[NotChecked]:
    """``not_checked`` with an entry for each (rule, host, reason, reason_zh) of
    ``extra``, replacing the one of the same rule and host, sorted by rule and host."""
    replaced = {(rule, host) for rule, host, _r, _z in extra}
    kept = [n for n in not_checked if (n.rule, n.host) not in replaced]
    # the commands that get a missing fact stay with the entry whose reason changes
    commands = {(n.rule, n.host): n.commands for n in not_checked}
    added = [
        NotChecked(rule=r, reason=why, reason_zh=why_zh, host=h, commands=list(commands.get((r, h), [])))
        for r, h, why, why_zh in extra
    ]
    return sorted(kept + added, key=lambda n: (n.rule, n.host))


def rule_digest(spec: RuleSpec) -> str:
    """What a rule decides by, hashed: its severity, the facts it needs, its
    thresholds, measures and the source of its function. A deploy that
    changes any of them changes the digest (a change confined to a shared
    helper of ``collectors.derived`` does not: bump the rule's thresholds or
    code, or start a retro-scan by hand with ``manage.py retroscan --rule``)."""
    try:
        code = inspect.getsource(spec.func)
    except (OSError, TypeError):  # no source shipped: the compiled body
        code = spec.func.__code__.co_code.hex()
    declared = [spec.id, spec.severity, list(spec.requires), spec.requires_mode, list(spec.measures)]
    text = json.dumps([*declared, spec.thresholds, code], sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def rule_digests(registry: dict[str, RuleSpec] | None = None) -> dict[str, str]:
    """Rule ID -> :func:`rule_digest` of every registered rule."""
    registry = registry if registry is not None else load_all()
    return {rule_id: rule_digest(spec) for rule_id, spec in sorted(registry.items())}


def is_fleet_rule(rule_id: str) -> bool:
    """Fleet rules compare the hosts of a cluster with each other."""
    return rule_id.startswith("fleet.")


def evidence_to_dict(e: Evidence) -> dict[str, Any]:
    """One evidence item as the API, ``analyze --json`` and the stored
    findings carry it."""
    return {"fact": e.fact, "value": to_dict(e.value), "artifact": e.artifact, "line": e.line, "host": e.host}


def finding_to_dict(finding: RuleFinding) -> dict[str, Any]:
    return {
        "rule": finding.rule,
        "severity": finding.severity,
        "title": finding.title,
        "title_zh": finding.title_zh,
        "explanation": finding.explanation,
        "explanation_zh": finding.explanation_zh,
        "evidence": [evidence_to_dict(e) for e in finding.evidence],
        "measures": list(finding.measures),
        "host": finding.host,
        "impact": finding.impact,
    }


def result_to_json(
    snapshot: SnapshotFacts,
    result: AnalysisResult,
    errors: list | None = None,
    *,
    similar_cases: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The ``--json`` object of DESIGN.md (also the API's findings shape).
    ``similar_cases`` are the knowledge base's answer, given by the caller
    (``kb.similarity.similar_cases_for``); none when omitted."""
    if errors is None:
        errors = snapshot.errors
    if similar_cases is None:
        similar_cases = []
    return {
        "engine_version": result.engine_version,
        "facts": {"hosts": [to_dict(h) for h in snapshot.hosts]},
        "findings": [finding_to_dict(f) for f in result.findings],
        "skipped": [{"rule": rule_id, "reason": reason} for rule_id, reason in result.skipped],
        "similar_cases": similar_cases,
        "checked": list(result.checked),
        "not_checked": [to_dict(n) for n in result.not_checked],
        "errors": [
            {
                "artifact": getattr(e, "artifact", ""),
                "message": getattr(e, "message", str(e)),
                "line": getattr(e, "line", None),
            }
            for e in errors
        ],
    }
