"""Fleet rules: hosts of one cluster compared with each other.

A snapshot with two or more physical hosts is treated as one cluster.
"""

from __future__ import annotations

from collections import defaultdict

from triage.rules import RuleContext, artifact_evidence, evidence, finding, host_name, rule
from triage.rules.memory import static_hugepages

BENCHMARK_SPREAD_RATIO = 1.5
DRIFT_KEYS = (
    "numa_nodes",
    "vm.zone_reclaim_mode",
    "kernel.numa_balancing",
    "static_hugepages",
    "thp",
    "kernel",
)


def _numa_config(host) -> dict[str, tuple[object, object]]:
    """Comparable NUMA-related settings: name -> (value, parsed fact)."""
    out: dict[str, tuple[object, object]] = {}
    nodes = host.numa_node_count()
    if nodes is not None:
        out["numa_nodes"] = (nodes, host.numa or host.cpu)
    for key in ("vm.zone_reclaim_mode", "kernel.numa_balancing"):
        value = host.sysctl_value(key)
        if value is not None:
            out[key] = (value.strip(), host.sysctl)
    count, parsed, _ = static_hugepages(host)
    if count is not None:
        out["static_hugepages"] = (count, parsed)
    if host.hugepages and host.hugepages.thp_enabled:
        out["thp"] = (host.hugepages.thp_enabled, host.hugepages)
    if host.kernel and host.kernel.release:
        out["kernel"] = (host.kernel.release, host.kernel)
    return out


@rule(
    "fleet.numa_config_drift",
    severity="warning",
    title="Hosts of the cluster are configured differently",
    title_zh="集群内主机配置不一致",
    condition=(
        "among the physical hosts of one snapshot (2+), a setting known on at least two hosts differs: "
        "NUMA node "
        "count, vm.zone_reclaim_mode, kernel.numa_balancing, static huge pages, THP mode or kernel release"
    ),
    requires=("cluster",),
    measures=("align-host-numa-config", "enable-numa-in-firmware"),
    seeds=("kunpeng-stream-zone-reclaim",),
    thresholds={"settings": list(DRIFT_KEYS)},
)
def numa_config_drift(ctx: RuleContext):
    hosts = ctx.physical_hosts()
    configs = [(h, _numa_config(h)) for h in hosts]
    for key in DRIFT_KEYS:
        known = [(h, cfg[key]) for h, cfg in configs if key in cfg]
        values = {str(v) for _, (v, _) in known}
        if len(known) < 2 or len(values) < 2:
            continue
        by_value: dict[str, list[str]] = defaultdict(list)
        for h, (v, _) in known:
            by_value[str(v)].append(host_name(h))
        summary = "; ".join(f"{v}: {', '.join(names)}" for v, names in sorted(by_value.items()))
        yield finding(
            "fleet.numa_config_drift",
            None,
            f"{key} differs between the hosts of this cluster ({summary}). Identical hardware then behaves "
            "differently under the same test, and results cannot be compared host to host.",
            f"集群内各主机的 {key} 不一致（{summary}）。相同的硬件在同样的测试下表现不同，主机之间的结果无"
            "法比较。",
            evidence=[evidence(h, key, v, parsed, key) for h, (v, parsed) in known],
            host_label="cluster",
        )


@rule(
    "fleet.benchmark_spread",
    severity="warning",
    title="The same benchmark differs widely across the cluster",
    title_zh="同一基准测试在集群内差异很大",
    condition=(
        f"the same benchmark (kind and name, e.g. STREAM Triad) differs >= {BENCHMARK_SPREAD_RATIO}x between "
        "the best and the worst physical host of one cluster (for time-based results, the slowest over the "
        "fastest)"
    ),
    requires=("cluster", "benchmarks"),
    measures=("zone-reclaim-mode", "drop-caches-before-benchmark", "align-host-numa-config"),
    seeds=("kunpeng-stream-zone-reclaim",),
    thresholds={"ratio": BENCHMARK_SPREAD_RATIO},
)
def benchmark_spread(ctx: RuleContext):
    results: dict[tuple[str, str, str], list] = defaultdict(list)
    for h in ctx.physical_hosts():
        seen = set()
        for b in h.benchmarks:
            key = (b.kind.lower(), b.name.lower(), b.unit)
            if key in seen or b.value <= 0:
                continue  # one (the first) result per host
            seen.add(key)
            results[key].append((h, b))
    # one finding per benchmark kind: the metric (e.g. Triad) with the widest spread
    widest: dict[tuple[str, str], tuple[float, list]] = {}
    for (kind, _name, unit), rows in sorted(results.items()):
        if len(rows) < 2:
            continue
        ratio = max(r[1].value for r in rows) / min(r[1].value for r in rows)
        if ratio >= BENCHMARK_SPREAD_RATIO and ratio > widest.get((kind, unit), (0.0, []))[0]:
            widest[(kind, unit)] = (ratio, rows)
    for (kind, unit), (ratio, rows) in sorted(widest.items()):
        best = max(rows, key=lambda r: r[1].value)
        worst = min(rows, key=lambda r: r[1].value)
        name = best[1].name
        yield finding(
            "fleet.benchmark_spread",
            None,
            f"{kind} {name} ranges from {worst[1].value:g} {unit} on {host_name(worst[0])} to "
            f"{best[1].value:g} "
            f"{unit} on {host_name(best[0])} ({ratio:.1f}x) on hosts that should be identical: look for what "
            "differs at run time (page cache, memory placement) rather than in the hardware.",
            f"{kind} {name} 在 {host_name(worst[0])} 上为 {worst[1].value:g} {unit}，在 "
            f"{host_name(best[0])} 上为 "
            f"{best[1].value:g} {unit}（{ratio:.1f} 倍），而这些主机本应相同：应查找运行时的差异（页缓存、"
            "内存放置），"
            "而不是硬件差异。",
            evidence=[
                artifact_evidence(h, b.kind, f"benchmarks[{b.kind}:{b.name}]", b.value, b.line)
                for h, b in sorted(rows, key=lambda r: r[1].value)
            ],
            host_label="cluster",
        )
