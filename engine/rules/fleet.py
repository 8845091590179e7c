"""Fleet rules: hosts of one cluster compared with each other.

A snapshot with two or more physical hosts is treated as one cluster. Both
rules name the odd hosts out, not just the spread: on an 18-host cluster the
engineer must know which three machines to look at without checking each one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from collectors.derived.fleet import (
    DRIFT_KEYS,
    TIME_UNITS,
    BenchKey,
    BenchRow,
    Cited,
    FleetProfile,
    FleetSummary,
    FleetView,
    fleet_profile,
)
from collectors.facts import HostFacts
from engine.rules import Evidence, RuleContext, RuleFinding, finding, host_name, rule

BENCHMARK_SPREAD_RATIO = 1.5


def profiles(ctx: RuleContext) -> list[tuple[HostFacts, FleetProfile]]:
    """The physical hosts with their fleet profiles: stored ones for the
    members given by profile only (``SnapshotFacts.fleet_profiles``), derived
    here for the hosts analysed in full."""
    stored = ctx.snapshot.fleet_profiles
    # a machine the loader split off another's paste (collectors.machines) is
    # not known to belong to its cluster: two servers of a manual page are not one
    hosts = [h for h in ctx.physical_hosts() if h.split_reason is None]
    return [(h, stored.get(h.label) or fleet_profile(h)) for h in hosts]


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


def _in_cluster(ctx: RuleContext, host: HostFacts) -> bool:
    """A physical host analysed with at least one other (a fleet rule's subject)."""
    return (
        not host.is_guest
        and len(ctx.physical_hosts()) + int(getattr(ctx.snapshot.fleet_summary, "physical", 0) or 0) >= 2
    )


@rule(
    "fleet.numa_config_drift",
    severity="warning",
    title="Hosts of the cluster are configured differently",
    title_zh="集群内主机配置不一致",
    condition=(
        "among the physical hosts of one snapshot (2+), a setting known on at least two hosts differs: "
        "NUMA node "
        "count, vm.zone_reclaim_mode, kernel.numa_balancing, static huge pages, THP mode or kernel release; "
        "the finding names the hosts that differ from the majority value (every host when there is none); "
        "when a benchmark finds hosts slow (fleet.benchmark_spread), from the majority of the others, or "
        "else the best host's value, never the slow hosts' majority"
    ),
    condition_zh=(
        "同一快照中的物理主机（2 台及以上）之间，某项至少在两台主机上已知的设置不一致：NUMA 节点数、"
        "vm.zone_reclaim_mode、kernel.numa_balancing、静态大页、THP 模式或内核版本；发现中列出与多数值不同的"
        "主机（没有多数值时列出全部主机）；当基准测试判定某些主机偏慢（fleet.benchmark_spread）时，以其余主机的"
        "多数值为参照，否则以最好主机的取值为参照，绝不以慢主机的多数值为参照"
    ),
    requires=("cluster",),
    # each physical host of a cluster: its node count and its kernel settings
    relevant=lambda ctx, h: ("numa", "sysctl") if _in_cluster(ctx, h) else (),
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
        "better_majority": (
            "{setting} differs between the hosts of this cluster: {count} of the {hosts} hosts that {bench} "
            "does not find slow have {usual}; different: {odd}. The slow hosts' value is not the reference: "
            "identical hardware then behaves differently under the same test.",
            "集群内各主机的 {setting} 不一致：{bench} 未判为慢的 {hosts} 台主机中 {count} 台为 {usual}；"
            "不同的主机：{odd}。慢主机的取值不作为参照：相同的硬件在同样的测试下表现不同。",
        ),
        "best_host": (
            "{setting} differs between the hosts of this cluster: the host with the best {bench}, "
            "{best_host}, has {usual}; different: {odd}. Identical hardware then behaves differently under "
            "the same test, and results cannot be compared host to host.",
            "集群内各主机的 {setting} 不一致：{bench} 最好的主机 {best_host} 为 {usual}；不同的主机：{odd}。"
            "相同的硬件在同样的测试下表现不同，主机之间的结果无法比较。",
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
def numa_config_drift(ctx: RuleContext) -> Iterator[RuleFinding]:
    view = fleet_view(ctx)
    slow, best = _benchmark_outliers(view)
    for key in DRIFT_KEYS:
        counts = view.drift_counts(key)
        if len(counts) < 2:  # (each value is some host's: two values are two hosts)
            continue
        ref = _drift_reference(view, key, counts, slow, best)
        usual = ref.value if ref is not None else None
        odd = _odd_rows(view, key, counts, usual)
        reference = _reference_rows(view, key, usual, slow)
        template, filled = _drift_explained(view, key, counts, ref, odd, best)
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
            # the hosts that differ from the reference hold the finding (their
            # snapshots, the rules page's count), never the reference; without
            # a reference every host
            affected=sorted({name for name, _c in odd}) if ref is not None else [],
        )


def _odd_rows(
    view: FleetView, key: str, counts: Mapping[str, int], usual: str | None
) -> list[tuple[str, Cited]]:
    """The (host, cited value) rows of ``key`` whose value is not ``usual``: on
    a large cluster a list of every host's value hides the three that differ.
    Without a reference (``usual`` None) every group is "odd" and every host is cited."""
    return [row for value in sorted(counts) if value != usual for row in view.drift_rows(key, value)]


def _drift_explained(
    view: FleetView,
    key: str,
    counts: Mapping[str, int],
    ref: _Reference | None,
    odd: list[tuple[str, Cited]],
    best: tuple[str, str] | None,
) -> tuple[str, dict[str, Any]]:
    """The explanation template of a drift and its values: the odd hosts
    against the reference, or without one every value with its hosts."""
    if ref is None:
        groups = "; ".join(
            f"{v}: {', '.join(name for name, _ in view.drift_rows(key, v))}" for v in sorted(counts)
        )
        return "no_majority", {"setting": key, "groups": groups}
    return ref.template, {
        "setting": key,
        "count": ref.count,
        "hosts": ref.hosts,
        "usual": ref.value,
        "odd": ", ".join(f"{name} ({c.value})" for name, c in odd),
        "best_host": best[0] if best else "",
        "bench": best[1] if best else "",
    }


@dataclass(frozen=True)
class _Reference:
    """The value a drift is judged against and how many hosts of the group it
    was taken from hold it (explanation template ``template``)."""

    value: str
    template: str  # "majority", "better_majority", "best_host"
    count: int
    hosts: int


def _values_of_hosts_not_slow(
    view: FleetView, key: str, counts: Mapping[str, int], slow: set[str]
) -> list[tuple[str, str]]:
    """(host, its value of ``key``) for each host no benchmark finds slow."""
    return [(name, str(c.value)) for v in counts for name, c in view.drift_rows(key, v) if name not in slow]


def _drift_reference(
    view: FleetView, key: str, counts: Mapping[str, int], slow: set[str], best: tuple[str, str] | None
) -> _Reference | None:
    """When a benchmark finds hosts slow (``slow``) the value of the majority
    of the others (the better majority), else the best host's value: never the
    slow hosts' majority, which makes the good host the odd one out (issue 25).
    Without a benchmark spread, the strict majority of all hosts. None: no
    reference (a tie)."""
    overall = majority(counts)
    among_fast = _reference_among_fast(view, key, counts, slow, best, overall) if slow else None
    if among_fast is not None:
        return among_fast
    if overall is None:
        return None
    return _Reference(overall, "majority", counts[overall], sum(counts.values()))


def _reference_among_fast(
    view: FleetView,
    key: str,
    counts: Mapping[str, int],
    slow: set[str],
    best: tuple[str, str] | None,
    overall: str | None,
) -> _Reference | None:
    """The value of the majority of the hosts no benchmark finds slow, else
    (no majority there) the best host's value, when it is not the ``overall``
    majority already."""
    better = _values_of_hosts_not_slow(view, key, counts, slow)
    tally = Counter(value for _name, value in better)
    value, template = majority(tally), "better_majority"
    if value is None and best is not None:
        value, template = next((held for name, held in better if name == best[0]), None), "best_host"
    if value is None or value == overall:
        return None
    return _Reference(value, template, tally[value], len(better))


def _reference_rows(view: FleetView, key: str, usual: str | None, slow: set[str]) -> list[tuple[str, Cited]]:
    """One host holding the reference value (one no benchmark finds slow
    first), or none without a reference."""
    rows = view.drift_rows(key, usual) if usual is not None else []
    return [next((r for r in rows if r[0] not in slow), rows[0])] if rows else []


def _compared(view: FleetView) -> Iterator[tuple[BenchKey, BenchRow]]:
    """Each benchmark two hosts or more have a result of, with its best result."""
    for key in view.bench_keys():
        best = view.bench_best(key)
        if best is not None and view.bench_count(key) >= 2:
            yield key, best


def _hosts_of(rows: list[BenchRow]) -> set[str]:
    """The hosts of benchmark rows: the uploading host's name and the tested one's."""
    return {name for host, _b, tested in rows for name in (host, tested)}


def _benchmark_outliers(view: FleetView) -> tuple[set[str], tuple[str, str] | None]:
    """The hosts a benchmark finds slow (``fleet.benchmark_spread``'s outliers,
    by host and by tested name) and (the best host, "kind name") of the widest
    spread; (set(), None) without a spread."""
    slow: set[str] = set()
    spreads: list[tuple[float, str, str]] = []
    for key, best in _compared(view):
        rows = _slow_rows(view, key, best[1].value)
        if not rows:
            continue
        slow |= _hosts_of(rows)
        spreads.append((spread(rows[0][1].value, best[1].value), best[2], f"{key[0]} {best[1].name}"))
    widest = max(spreads, key=lambda s: s[0], default=None)  # the first of equal spreads
    return slow, (widest[1], widest[2]) if widest else None


def _slow_rows(view: FleetView, key: BenchKey, best_value: float) -> list[BenchRow]:
    """The results at least BENCHMARK_SPREAD_RATIO times worse than the best,
    worst first (always the worst host when there is such a spread)."""
    slow = []
    for row in view.bench_from_worst(key):
        if spread(row[1].value, best_value) < BENCHMARK_SPREAD_RATIO:
            break
        slow.append(row)
    return slow


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
    # each physical host of a cluster where some host has results
    relevant=lambda ctx, h: (
        ("benchmarks",)
        if h.benchmarks
        or (_in_cluster(ctx, h) and (any(x.benchmarks for x in ctx.hosts) or ctx.snapshot.fleet_profiles))
        else ()
    ),
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
def benchmark_spread(ctx: RuleContext) -> Iterator[RuleFinding]:
    # per (kind, name, unit): one (the first) result per tested host; a
    # gpcheckperf report uploaded from one host names every host it tested
    view = fleet_view(ctx)
    for (kind, unit), (ratio, key) in sorted(_widest_spreads(view).items()):
        lower_is_better = unit in TIME_UNITS
        best = view.bench_best(key)
        assert best is not None
        best_value = best[1].value
        # The outliers are the hosts at least RATIO times worse than the best
        # one: always at least the worst host, and on a cluster of identical
        # machines exactly the ones to look at (the best is the reference).
        slow = _slow_rows(view, key, best_value)
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
            # the slow hosts (their snapshots), never the best one it is judged against
            affected=sorted(_hosts_of(slow)),
        )


def _widest_spreads(view: FleetView) -> dict[tuple[str, str], tuple[float, BenchKey]]:
    """(kind, unit) -> (spread, benchmark) of the metric (e.g. Triad) with the
    widest spread of at least BENCHMARK_SPREAD_RATIO: one finding per kind."""
    widest: dict[tuple[str, str], tuple[float, BenchKey]] = {}
    for key, best in _compared(view):
        kind, _name, unit = key
        ratio = spread(best[1].value, next(view.bench_from_worst(key))[1].value)
        if ratio >= BENCHMARK_SPREAD_RATIO and ratio > widest.get((kind, unit), (0.0, key))[0]:
            widest[(kind, unit)] = (ratio, key)
    return widest
