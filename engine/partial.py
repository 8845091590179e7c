"""What a result may not claim: conflicting facts and cut structures.

DESIGN.md, "What a result claims": when two artifacts of one host disagree on
a fact (``HostFacts.conflicts``, read by ``collectors.machines``), the rules
that decide on that fact are not checked on that host, with the reason
"conflicting values"; a domain XML cut by the paste (``Domain.cut``) says
nothing of the elements after the cut (``Domain.unseen``), and the rules that
would judge those elements are not checked for that guest. The guest of a
QEMU command line (``Domain.origin``) is read the same way: what the command
line never shows (libvirt's pinning and numatune) is in its ``unseen``.

The run (``engine.run.analyze``) calls :func:`masked` before the rules run (a
host's conflicting facts are hidden from them, so no rule decides on one
value of two) and :func:`partial_not_checked` after, for the list of rules
not checked. The KVM rules ask :func:`cut_hides` before judging an element.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from collectors.facts import Domain, FactConflict, HostFacts, SnapshotFacts, TableCut

T = TypeVar("T")

# A conflicting fact and the engine's fact checks (engine.run.HOST_FACT_CHECKS)
# that depend on it: a rule requiring any of them is not checked.
CONFLICT_AFFECTS: dict[str, tuple[str, ...]] = {
    "numa": ("numa", "node_cpus", "node_meminfo", "numastat", "numa_distances", "cpu"),
    "numa_distances": ("numa_distances",),
    "cpu": ("cpu", "node_cpus", "per_cpu_usage"),
    "meminfo": ("meminfo", "node_meminfo", "hugepages"),
    "database": ("database", "db_variables", "db_version", "db_events"),
}

# The elements of a domain XML whose absence a KVM rule judges: when a cut
# hides one of them, the rule says nothing of that guest (it is listed as not
# checked). Rules that fire on what is shown (hot-plug, pins without isolcpus)
# still judge what the paste holds.
CUT_HIDES: dict[str, tuple[str, ...]] = {
    "kvm.vcpus_unpinned": ("vcpupin",),
    "kvm.emulator_unpinned": ("emulatorpin",),
    "kvm.iothread_unpinned": ("iothreadpin", "disk", "devices"),
    "kvm.guest_numa_missing": ("cpu", "numa"),
    "kvm.memory_not_bound": ("numatune", "memory", "memnode"),
    "kvm.pinning_spans_nodes": ("vcpupin", "numatune", "numa"),
    # "l3-cache": a QEMU command line whose -cpu does not say whether the model
    # shows an L3 (QEMU's l3-cache property, on by default for machine types
    # from 2.8 on: the QEMU version decides, and the command line does not show it)
    "kvm.cpu_model_hides_cache": ("cpu", "l3-cache"),
    "kvm.flat_socket_topology": ("cpu", "topology"),
    # a cut in or before <devices> hides disks (and their <driver>) and NICs
    "kvm.disk_cache_mode": ("devices", "disk"),
    "kvm.vhost_net_disabled": ("devices", "interface"),
    # whether other guests share a guest's CPUs: its affinity, which a QEMU
    # command line never shows (a cut XML is still judged on the pins it shows)
    "kvm.host_contention": ("cpu-affinity",),
}


def cut_hides(domain: Domain, rule_id: str) -> bool:
    """Whether the paste cut ``domain`` before an element ``rule_id`` judges, or
    the QEMU command line it was read from does not show that element."""
    return has_unseen(domain) and any(e in domain.unseen for e in CUT_HIDES.get(rule_id, ()))


def has_unseen(domain: Domain) -> bool:
    """A domain some of whose elements are unknown (``Domain.unseen``): a
    document the paste cut, or the guest of a QEMU command line."""
    return domain.cut or domain.origin == "qemu_cmdline"


def cut_reason(domain: Domain) -> tuple[str, str]:
    """The reason (English, Chinese) a cut domain's rules were not checked."""
    name = domain.name or "?"
    if domain.origin == "qemu_cmdline":
        return (
            f"{name} is known from its QEMU command line, which does not show what libvirt sets outside "
            "it (vCPU, emulator and iothread pinning, numatune) nor what the paste does not show",
            f"虚拟机 {name} 只见其 QEMU 命令行：命令行不包含 libvirt 在命令行之外设置的内容（vCPU、模拟器和 "
            "iothread 绑定，numatune），也不包含粘贴内容中没有的部分",
        )
    where = f"<{domain.cut_in}>" if domain.cut_in else (domain.truncated_after or "its start")
    return (
        f"the domain XML of {name} is cut after {where}: what follows was not in the paste",
        f"虚拟机 {name} 的 domain XML 在 {where} 之后被截断：粘贴内容中没有后面的部分",
    )


def conflicting_checks(host: HostFacts) -> dict[str, FactConflict]:
    """Fact check name -> the conflict that makes it unusable on ``host``."""
    out: dict[str, FactConflict] = {}
    for conflict in host.conflicts:
        for check in CONFLICT_AFFECTS.get(conflict.fact, (conflict.fact,)):
            out.setdefault(check, conflict)
    return out


def _clear_numa(h: HostFacts) -> None:
    h.numa = None
    if h.cpu is not None:
        h.cpu = dataclasses.replace(h.cpu, numa_nodes=None, numa_node_cpus={})


def _clear_distances(h: HostFacts) -> None:
    if h.numa is not None:
        h.numa = dataclasses.replace(h.numa, distances=[], distance_nodes=[])
    h.capabilities = None


def _clear(attr: str) -> Callable[[HostFacts], None]:
    return lambda h: setattr(h, attr, None)


_MASKS: dict[str, Callable[[HostFacts], None]] = {
    "numa": _clear_numa,
    "numa_distances": _clear_distances,
    "cpu": _clear("cpu"),
    "meminfo": _clear("meminfo"),
    "database": _clear("database"),
}


def _usage_cut(host: HostFacts) -> bool:
    return host.cpu_usage is not None and host.cpu_usage.cut


def cut_usage_reason(host: HostFacts) -> tuple[str, str]:
    """Why a rule that judges every CPU's row and stayed quiet was not checked:
    the per-CPU table (top's ``%CpuN`` lines, mpstat -P ALL) was cut by the
    paste, so the rows not shown may hold what it looks for. A rule that fired
    on the rows shown keeps its finding (its evidence is in the paste)."""
    usage = host.cpu_usage
    assert usage is not None
    shown = len([c for c in usage.per_cpu if c.cpu != "all"])
    tool = usage.tool or "top"
    return (
        f"the per-CPU table of {tool} is cut after CPU {usage.truncated_after}: "
        f"{shown} of {usage.of_cpus} CPUs shown, what the others showed was not in the paste",
        f"{tool} 的每 CPU 表格在 CPU {usage.truncated_after} 之后被截断：{usage.of_cpus} 个 CPU 中只显示了 "
        f"{shown} 个，其余 CPU 的数据不在粘贴内容中",
    )


# the per-CPU counter tables a paste can cut: fact check -> (file, HostFacts field)
_TABLES = (("softirqs", "/proc/softirqs", "softirqs"), ("interrupts", "/proc/interrupts", "interrupts"))


def _table_text(cut: TableCut, cpus: int) -> tuple[str, str]:
    """What a cut took from a table, in English and Chinese."""
    en: list[str] = []
    zh: list[str] = []
    if cut.rows:
        names = ", ".join(cut.rows[:4]) + (f" +{len(cut.rows) - 4}" if len(cut.rows) > 4 else "")
        en.append(f"row {names} shows fewer counts than its {cpus} CPU columns")
        zh.append(f"行 {names} 的计数少于表头的 {cpus} 个 CPU 列")
    if cut.wrapped:
        en.append(f"{cut.wrapped} lines wrapped onto the next")
        zh.append(f"{cut.wrapped} 行被终端折行")
    if cut.truncated_after:
        en.append(f"it stops after row {cut.truncated_after}")
        zh.append(f"表格在 {cut.truncated_after} 行之后中断")
    return "; ".join(en), "；".join(zh)


def table_cuts(host: HostFacts) -> dict[str, tuple[str, str]]:
    """Fact check (``softirqs``, ``interrupts``) -> why (English, Chinese) the
    paste's per-CPU table of it cannot be judged whole: a rule that stayed
    quiet on the rows shown says nothing of the rows cut."""
    out: dict[str, tuple[str, str]] = {}
    for check, path, attr in _TABLES:
        table = getattr(host, attr)
        cut = table.cut if table is not None else None
        if cut is None:
            continue
        en, zh = _table_text(cut, len(table.cpus))
        line, line_zh = (f" (line {cut.line})", f"（第 {cut.line} 行）") if cut.line else ("", "")
        out[check] = (
            f"the {path} table is cut{line}: {en}; what the cut rows held was not in the paste",
            f"{path} 表格被截断{line_zh}：{zh}；被截断的行的数据不在粘贴内容中",
        )
    return out


def masked(snapshot: SnapshotFacts) -> SnapshotFacts:
    """``snapshot`` with every host's conflicting facts hidden (a shallow copy
    per host that has any; the snapshot itself is not changed)."""
    if not any(h.conflicts for h in snapshot.hosts):
        return snapshot
    hosts = [_masked_host(host) if host.conflicts else host for host in snapshot.hosts]
    return dataclasses.replace(snapshot, hosts=hosts)


def _masked_host(host: HostFacts) -> HostFacts:
    """A shallow copy of ``host`` with each of its conflicting facts hidden."""
    host = copy.copy(host)
    for conflict in host.conflicts:
        mask = _MASKS.get(conflict.fact)
        if mask is not None:
            mask(host)
    return host


def _conflict_text(conflict: FactConflict) -> str:
    shown = []
    for value, artifact, line in zip(conflict.values, conflict.artifacts, conflict.lines, strict=False):
        shown.append(f"{value} ({artifact}{f', line {line}' if line else ''})")
    return f"{conflict.reason}: " + " vs ".join(shown)


def _conflict_reason(conflict: FactConflict) -> tuple[str, str]:
    text = _conflict_text(conflict)
    return (
        f"conflicting values: {text}",
        f"取值冲突（同一主机的输出不一致，可能混入了另一台机器）：{text}",
    )


def _first_needed(by_check: dict[str, T], needs: set[str]) -> T | None:
    """The entry of ``by_check`` for the first of ``needs`` (in name order) it holds."""
    return next((by_check[n] for n in sorted(needs) if n in by_check), None)


@dataclasses.dataclass(frozen=True)
class _Gaps:
    """What a host's facts cannot decide: fact checks with conflicting values,
    a cut per-CPU table (why, in English and Chinese), cut counter tables
    (fact check -> why) and domain XMLs cut by the paste."""

    conflicts: dict[str, FactConflict]
    usage_cut: tuple[str, str] | None
    tables: dict[str, tuple[str, str]]
    cut_domains: list[Domain]

    @classmethod
    def of(cls, host: HostFacts) -> _Gaps:
        return cls(
            conflicts=conflicting_checks(host),
            usage_cut=cut_usage_reason(host) if _usage_cut(host) else None,
            tables=table_cuts(host),
            cut_domains=[d for d in host.domains if has_unseen(d)],
        )

    def __bool__(self) -> bool:
        return bool(self.conflicts or self.usage_cut or self.tables or self.cut_domains)

    def why_undecided(self, rule_id: str, needs: set[str], judges_every_cpu: bool) -> tuple[str, str] | None:
        """Why rule ``rule_id``, which needs the fact checks ``needs``, could
        not decide (English, Chinese), the first that applies: a conflict on
        one of its facts, the cut per-CPU table it judges, a cut counter
        table, a domain cut before an element it judges; None: it decided."""
        conflict = _first_needed(self.conflicts, needs)
        if conflict is not None:
            return _conflict_reason(conflict)
        if self.usage_cut and judges_every_cpu:
            return self.usage_cut
        table = _first_needed(self.tables, needs)
        if table is not None:
            return table
        domain = next((d for d in self.cut_domains if cut_hides(d, rule_id)), None)
        return cut_reason(domain) if domain is not None else None


def partial_not_checked(
    rules: dict[str, Any],
    hosts: Iterable[HostFacts],
    fired: set[tuple[str, str]],
    host_name: Callable[[HostFacts], str],
    relevant: Callable[[Any, HostFacts], tuple[str, ...]],
) -> list[tuple[str, str, str, str]]:
    """``(rule, host, reason, reason_zh)`` for every rule a conflict or a cut
    kept from deciding on a host. ``rules`` is the registry (``RuleSpec`` by
    id), ``relevant`` the facts a spec needs on a host."""
    out: list[tuple[str, str, str, str]] = []
    for host in hosts:
        name, gaps = host_name(host), _Gaps.of(host)
        if not gaps:
            continue
        for rule_id in sorted(rules):
            if (rule_id, name) in fired:
                continue
            spec = rules[rule_id]
            relevant_checks = relevant(spec, host)
            needs = set(spec.requires) | set(relevant_checks)
            why = gaps.why_undecided(rule_id, needs, "per_cpu_usage" in relevant_checks)
            if why is not None:
                out.append((rule_id, name, *why))
    return out
