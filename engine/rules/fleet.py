"""Fleet rules: hosts of one cluster compared with each other.

A snapshot with two or more physical hosts is treated as one cluster. Both
rules name the odd hosts out, not just the spread: on an 18-host cluster the
engineer must know which three machines to look at without checking each one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from collectors.derived.fleet import (
    DRIFT_KEYS,
    TIME_UNITS,
    BenchKey,
    FleetProfile,
    FleetSummary,
    FleetView,
    fleet_profile,
)
from collectors.facts import HostFacts
from engine.rules import Evidence, Finding, RuleContext, finding, host_name, rule

BENCHMARK_SPREAD_RATIO = 1.5


def profiles(ctx: RuleContext) -> list[tuple[HostFacts, FleetProfile]]:
    """The physical hosts with their fleet profiles: stored ones for the
    members given by profile only (``SnapshotFacts.fleet_profiles``), derived
    here for the hosts analysed in full."""
    stored = ctx.snapshot.fleet_profiles
    return [(h, stored.get(h.label) or fleet_profile(h)) for h in ctx.physical_hosts()]


def fleet_view(ctx: RuleContext) -> FleetView:
    """What the fleet rules compare: the physical hosts of the snapshot, then
    the members known by the cluster's summary (``SnapshotFacts.fleet_summary``,
    kept up to date by the analysis), each in host order."""
    front = ctx.snapshot.derived.get("fleet_front")
    if not isinstance(front, FleetSummary):  # built once for both fleet rules
        front = ctx.snapshot.derived["fleet_front"] = FleetSummary.of(
            (host_name(h), p) for h, p in profiles(ctx)
        )
    rest = ctx.snapshot.fleet_summary
    return FleetView(front, rest if isinstance(rest, FleetSummary) else None)


@rule(
    "fleet.numa_config_drift",
    severity="warning",
    title="Hosts of the cluster are configured differently",
    title_zh="集群内主机配置不一致",
    condition=(
        "among the physical hosts of one snapshot (2+), a setting known on at least two hosts differs: "
        "NUMA node "
        "count, vm.zone_reclaim_mode, kernel.numa_balancing, static huge pages, THP mode or kernel release; "
        "the finding names the hosts that differ from the majority value (every host when there is none)"
    ),
    condition_zh=(
        "同一快照中的物理主机（2 台及以上）之间，某项至少在两台主机上已知的设置不一致：NUMA 节点数、"
        "vm.zone_reclaim_mode、kernel.numa_balancing、静态大页、THP 模式或内核版本；发现中列出与多数值不同的"
        "主机（没有多数值时列出全部主机）"
    ),
    requires=("cluster",),
    measures=("align-host-numa-config", "enable-numa-in-firmware"),
    seeds=("kunpeng-stream-zone-reclaim",),
    thresholds={"settings": list(DRIFT_KEYS)},
    rationale=(
        "Hosts of one cluster are expected to behave alike; any differing NUMA setting is a reason for one "
        "host to be slower (seed 001: zone_reclaim_mode on some hosts only). A difference is a difference: "
        "no magnitude."
    ),
    rationale_zh=(
        "同一集群的主机应当表现一致；任何一项 NUMA 设置不同，都可能是某台主机变慢的原因（奠基案例 001：只有"
        "部分主机开启了 zone_reclaim_mode）。有差异即是问题：没有程度之分。"
    ),
    explanations={
        "majority": (
            "{setting} differs between the hosts of this cluster ({count} of {hosts} hosts have {usual}; "
            "different: {odd}). Identical hardware then behaves differently under the same test, and results "
            "cannot be compared host to host.",
            "集群内各主机的 {setting} 不一致（{hosts} 台主机中 {count} 台为 {usual}；不同的主机：{odd}）。相"
            "同的"
            "硬件在同样的测试下表现不同，主机之间的结果无法比较。",
        ),
        "no_majority": (
            "{setting} differs between the hosts of this cluster ({groups}). Identical hardware then behaves "
            "differently under the same test, and results cannot be compared host to host.",
            "集群内各主机的 {setting} 不一致（{groups}）。相同的硬件在同样的测试下表现不同，主机之间的结果无"
            "法"
            "比较。",
        ),
    },
)
def numa_config_drift(ctx: RuleContext) -> Iterator[Finding]:
    view = fleet_view(ctx)
    for key in DRIFT_KEYS:
        counts = view.drift_counts(key)
        if sum(counts.values()) < 2 or len(counts) < 2:
            continue
        usual = majority(counts)
        # Name the odd hosts out: on a large cluster a list of every host's
        # value hides the three that differ. Without a strict majority every
        # group is "odd" and every host is cited.
        odd = [row for value in sorted(counts) if value != usual for row in view.drift_rows(key, value)]
        first = view.drift_first(key, usual) if usual is not None else None
        reference = [first] if first is not None else []
        if usual is not None:
            template = "majority"
            filled: dict[str, Any] = {
                "setting": key,
                "count": counts[usual],
                "hosts": sum(counts.values()),
                "usual": usual,
                "odd": ", ".join(f"{name} ({c.value})" for name, c in odd),
            }
        else:
            template = "no_majority"
            groups = "; ".join(
                f"{v}: {', '.join(name for name, _ in view.drift_rows(key, v))}" for v in sorted(counts)
            )
            filled = {"setting": key, "groups": groups}
        yield finding(
            "fleet.numa_config_drift",
            None,
            template,
            values=filled,
            evidence=[
                Evidence(fact=key, value=c.value, artifact=c.artifact, line=c.line, host=name)
                for name, c in [*odd, *reference]
            ],
            host_label="cluster",
        )


def majority(counts: Mapping[Any, int]) -> Any | None:
    """The value held by strictly more hosts than any other, else None (a tie,
    or no value at all). The cluster page highlights cells the same way."""
    ranked = Counter(counts).most_common(2)
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]


def spread(a: float, b: float) -> float:
    """How many times the larger of two positive results is the smaller."""
    return max(a, b) / min(a, b)


@rule(
    "fleet.benchmark_spread",
    severity="warning",
    title="The same benchmark differs widely across the cluster",
    title_zh="同一基准测试在集群内差异很大",
    condition=(
        f"the same benchmark (kind and name, e.g. STREAM Triad) differs >= {BENCHMARK_SPREAD_RATIO}x between "
        "the best and the worst physical host of one cluster (for time-based results, the slowest over the "
        "fastest); the finding names the hosts >= that ratio worse than the best host"
    ),
    condition_zh=(
        "同一基准测试（类型和名称相同，例如 STREAM Triad）在同一集群中最好与最差的物理主机之间相差 >= "
        f"{BENCHMARK_SPREAD_RATIO} 倍（以时间计的结果取最慢除以最快）；发现中列出比最好的主机差该倍数及以上的"
        "主机"
    ),
    # one host's upload may hold the results of several (a gpcheckperf report)
    requires=("benchmarks",),
    measures=("zone-reclaim-mode", "drop-caches-before-benchmark", "align-host-numa-config"),
    seeds=("kunpeng-stream-zone-reclaim",),
    thresholds={"ratio": BENCHMARK_SPREAD_RATIO},
    rationale=(
        "Run-to-run noise of STREAM or tpmC on identical hardware is 5-10 %; 1.5x between identical hosts "
        "is a configuration or placement difference (seed 001: 15000 vs 6000 MB/s). past = spread / 1.5."
    ),
    rationale_zh=(
        "在相同硬件上，STREAM 或 tpmC 多次运行之间的波动为 5-10 %；相同主机之间相差 1.5 倍，说明配置或放置存"
        "在差异（奠基案例 001：15000 对 6000 MB/s）。past = 差距 / 1.5。"
    ),
    explanation=(
        "{kind} {name} ranges from {worst:g} {unit} on {worst_host} to {best:g} {unit} on {best_host} "
        "({spread:.1f}x) on hosts that should be identical. {slow} of {hosts} hosts are {ratio:g}x or more "
        "worse than the best: {slow_hosts}. Look for what differs at run time (page cache, memory placement) "
        "rather than in the hardware."
    ),
    explanation_zh=(
        "{kind} {name} 在 {worst_host} 上为 {worst:g} {unit}，在 {best_host} 上为 {best:g} {unit}"
        "（{spread:.1f} "
        "倍），而这些主机本应相同。{hosts} 台主机中有 {slow} 台比最好的主机差 {ratio:g} 倍或更多：{slow_hosts"
        "}。"
        "应查找运行时的差异（页缓存、内存放置），而不是硬件差异。"
    ),
)
def benchmark_spread(ctx: RuleContext) -> Iterator[Finding]:
    # per (kind, name, unit): one (the first) result per tested host; a
    # gpcheckperf report uploaded from one host names every host it tested
    view = fleet_view(ctx)
    # one finding per benchmark kind: the metric (e.g. Triad) with the widest spread
    widest: dict[tuple[str, str], tuple[float, BenchKey]] = {}
    for key in view.bench_keys():
        kind, _name, unit = key
        best = view.bench_best(key)
        if view.bench_count(key) < 2 or best is None:
            continue
        worst_value = next(view.bench_from_worst(key))[1].value
        ratio = max(best[1].value, worst_value) / min(best[1].value, worst_value)
        if ratio >= BENCHMARK_SPREAD_RATIO and ratio > widest.get((kind, unit), (0.0, key))[0]:
            widest[(kind, unit)] = (ratio, key)
    for (kind, unit), (ratio, key) in sorted(widest.items()):
        lower_is_better = unit in TIME_UNITS
        best = view.bench_best(key)
        assert best is not None
        best_value = best[1].value
        # The outliers are the hosts at least RATIO times worse than the best
        # one: always at least the worst host, and on a cluster of identical
        # machines exactly the ones to look at (the best is the reference).
        slow = []
        for row in view.bench_from_worst(key):
            if spread(row[1].value, best_value) < BENCHMARK_SPREAD_RATIO:
                break
            slow.append(row)
        # worst first; hosts with the same result by name
        slow.sort(key=lambda r: (-r[1].value if lower_is_better else r[1].value, r[2]))
        worst = slow[0]
        yield finding(
            "fleet.benchmark_spread",
            None,
            values={
                "kind": kind,
                "name": best[1].name,
                "unit": unit,
                "worst": worst[1].value,
                "worst_host": worst[2],
                "best": best[1].value,
                "best_host": best[2],
                "spread": ratio,
                "slow": len(slow),
                "hosts": view.bench_count(key),
                "ratio": BENCHMARK_SPREAD_RATIO,
                "slow_hosts": ", ".join(f"{tested} ({b.value:g})" for _h, b, tested in slow),
            },
            # the outliers, worst first, then the best host as the reference
            evidence=[
                Evidence(
                    fact=f"benchmarks[{b.kind}:{b.name}]",
                    value=b.value,
                    artifact=b.artifact,
                    line=b.line,
                    host=name,
                )
                for name, b, _tested in [*slow, best]
            ],
            host_label="cluster",
            past=ratio / BENCHMARK_SPREAD_RATIO,
        )
