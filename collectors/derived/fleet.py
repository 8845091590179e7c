"""A host's fleet profile: what the fleet rules and the cluster page compare
across the members of a cluster, computed once when the host is analysed and
stored with its snapshot (``Snapshot.fleet_facts``).

A cluster of thousands of hosts is compared from these profiles (a few hundred
bytes each): no upload is parsed again and no member's full facts are rebuilt.
Every value keeps the artifact and line it was read from, so findings built
from a stored profile cite exactly what findings built from the parsed host do.
"""

from __future__ import annotations

import bisect
import heapq
import operator
import statistics
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from collectors.derived.citing import cited_artifact, first_artifact_of_kind, line_of
from collectors.derived.memory import static_hugepages
from collectors.facts import HostFacts, from_dict, to_dict

# The settings fleet.numa_config_drift compares, in its order.
DRIFT_KEYS = (
    "numa_nodes",
    "vm.zone_reclaim_mode",
    "kernel.numa_balancing",
    "static_hugepages",
    "thp",
    "kernel",
)


@dataclass
class Cited:
    """A value and where it was read."""

    value: Any
    artifact: str = ""
    line: int | None = None


@dataclass
class BenchmarkResult:
    kind: str
    name: str
    unit: str
    value: float
    line: int | None = None
    host: str | None = None  # the tested host, when the report names it (gpcheckperf)
    artifact: str = ""  # the first artifact of ``kind`` the host was read from


@dataclass
class FleetProfile:
    label: str = ""
    hostname: str | None = None
    role: str | None = None
    guest: bool = False
    # runs guests (real domain XMLs or a virsh list): the members a guest's
    # analysis must see in full
    hypervisor: bool = False
    # DRIFT_KEYS -> the host's value (keys it does not report are absent)
    drift: dict[str, Cited] = field(default_factory=dict)
    # the cluster page's settings columns -> raw value (None: unknown)
    settings: dict[str, Any] = field(default_factory=dict)
    # the cluster page's measure columns -> [shown, value]
    measures: dict[str, list[Any]] = field(default_factory=dict)
    benchmarks: list[BenchmarkResult] = field(default_factory=list)


def _drift(host: HostFacts) -> dict[str, Cited]:
    """Comparable NUMA-related settings, each cited as the rules cite it."""
    out: dict[str, Cited] = {}
    for key, value, parsed in _drift_values(host):
        line = line_of(parsed, key)
        out[key] = Cited(value, cited_artifact(host, parsed, line), line)
    return out


def _drift_values(host: HostFacts) -> Iterator[tuple[str, Any, Any]]:
    """``(key, value, the fact it was read from)`` of each drift setting the host shows."""
    nodes = host.numa_node_count()
    if nodes is not None:
        yield "numa_nodes", nodes, host.numa or host.cpu
    for key in ("vm.zone_reclaim_mode", "kernel.numa_balancing"):
        value = host.sysctl_value(key)
        if value is not None:
            yield key, value.strip(), host.sysctl
    count, parsed, _ = static_hugepages(host)
    if count is not None:
        yield "static_hugepages", count, parsed
    if host.hugepages and host.hugepages.thp_enabled:
        yield "thp", host.hugepages.thp_enabled, host.hugepages
    if host.kernel and host.kernel.release:
        yield "kernel", host.kernel.release, host.kernel


def _gib(kb: float) -> float:
    return round(kb / 1024 / 1024, 1)


def memory_per_node(host: HostFacts) -> tuple[str, float | None]:
    """Node sizes as shown ("251.4 GiB", "251.4 / 502.9 GiB") and their median."""
    if not host.numa:
        return "—", None
    totals = [
        total for _id, node in sorted(host.numa.nodes.items()) if (total := node.mem_total_kb()) is not None
    ]
    if not totals:
        return "—", None
    shown = sorted({f"{_gib(t):g}" for t in totals})
    return " / ".join(shown) + " GiB", _gib(statistics.median(totals))


def page_cache_share(host: HostFacts) -> tuple[str, float | None]:
    """The largest share of a node's memory held by page cache (FilePages):
    seed 001's slow hosts had it on the node STREAM allocated from."""
    shares = _node_cache_shares(host)
    if shares:
        share, node_id = max(shares)
        return f"{share:.0f}% (node {node_id})", share
    if host.meminfo and host.meminfo.values.get("MemTotal") and "Cached" in host.meminfo.values:
        share = 100.0 * host.meminfo.values["Cached"] / host.meminfo.values["MemTotal"]
        return f"{share:.0f}%", share
    return "—", None


def _node_cache_shares(host: HostFacts) -> list[tuple[float, int]]:
    """``(percent of its memory in page cache, node)`` of each node whose size and FilePages are known."""
    shares = []
    for node_id, node in sorted(host.numa.nodes.items()) if host.numa else ():
        total, cache = node.mem_total_kb(), node.meminfo.get("FilePages")
        if total and cache is not None:
            shares.append((100.0 * cache / total, node_id))
    return shares


def fleet_profile(host: HostFacts, *, hypervisor: bool = False) -> FleetProfile:
    """The profile of ``host`` (``hypervisor``: whether it runs guests, which
    the caller knows from the libvirt facts)."""
    return FleetProfile(
        label=host.label,
        hostname=host.hostname,
        role=host.role,
        guest=host.is_guest,
        hypervisor=hypervisor,
        drift=_drift(host),
        settings={
            "numa_nodes": host.numa_node_count(),
            "zone_reclaim_mode": host.sysctl_value("vm.zone_reclaim_mode"),
            "numa_balancing": host.sysctl_value("kernel.numa_balancing"),
            "thp": host.hugepages.thp_enabled if host.hugepages else None,
            "hugepages": static_hugepages(host)[0],
            "kernel": host.kernel.release if host.kernel else None,
            "cpu_model": host.cpu.model_name if host.cpu else None,
        },
        measures={
            "memory_per_node": list(memory_per_node(host)),
            "page_cache_share": list(page_cache_share(host)),
        },
        benchmarks=[
            BenchmarkResult(
                kind=b.kind,
                name=b.name,
                unit=b.unit,
                value=b.value,
                line=b.line,
                host=b.host,
                artifact=first_artifact_of_kind(host, b.kind),
            )
            for b in host.benchmarks
        ],
    )


def profile_to_json(profile: FleetProfile) -> dict[str, Any]:
    data: dict[str, Any] = to_dict(profile)
    return data


def profile_from_json(data: dict[str, Any]) -> FleetProfile:
    """The profile ``profile_to_json`` stored (built field by field: a cluster
    page reads thousands)."""
    if not isinstance(data, dict):
        return FleetProfile()
    try:
        return FleetProfile(
            label=data.get("label") or "",
            hostname=data.get("hostname"),
            role=data.get("role"),
            guest=bool(data.get("guest")),
            hypervisor=bool(data.get("hypervisor")),
            drift={k: Cited(**v) for k, v in (data.get("drift") or {}).items()},
            settings=dict(data.get("settings") or {}),
            measures=dict(data.get("measures") or {}),
            benchmarks=[BenchmarkResult(**b) for b in data.get("benchmarks") or []],
        )
    except TypeError:  # stored by another version of the profile
        profile: FleetProfile = from_dict(FleetProfile, data)
        return profile


def profile_host(profile: FleetProfile) -> HostFacts:
    """A stand-in host for a member known only by its profile: its identity
    and role, so the engine can place it (physical or guest); the fleet rules
    read the profile itself."""
    return HostFacts(
        label=profile.label,
        hostname=profile.hostname,
        role=_profile_role(profile),
    )


def _profile_role(profile: FleetProfile) -> str | None:
    """The role of the member known by ``profile``: its own, else "guest"
    when the profile says it is one."""
    return profile.role or ("guest" if profile.guest else None)


def profile_is_guest(profile: FleetProfile) -> bool:
    """Whether the engine places the member known by ``profile`` as a guest
    (as it places its stand-in host, :func:`profile_host`)."""
    return _profile_role(profile) == "guest"


# ---------------------------------------------------------------- fleet summary
#
# What the fleet rules compare, kept per cluster so that an analysis does not
# walk every member's profile: per compared setting, the members holding each
# value; per benchmark, the results ranked best first. Members are added,
# replaced and removed one at a time (a member joining costs a few insertions
# into sorted lists), and the rules read only the few hosts they name.

# Where a member stands in the order the rules list hosts in: the hosts
# analysed in full first, then the other members, newest first. Smaller first.
Order = tuple[int, ...]
# (kind, name) lowercased and the unit: what ``fleet.benchmark_spread`` compares
BenchKey = tuple[str, str, str]
# (host name, result, tested host's name)
BenchRow = tuple[str, BenchmarkResult, str]
# (rank: smaller is better, order, place in the member's results, tested
# host's name, member id)
_Ranked = tuple[float, Order, int, str, int]

# Units of results where less is better (a timed statement).
TIME_UNITS = ("s", "ms")


class _Group:
    """Rows of members in host order (by their ``Order``, then id)."""

    __slots__ = ("keys", "rows")

    def __init__(self) -> None:
        self.keys: list[tuple[Order, int]] = []
        self.rows: dict[int, Any] = {}

    def add(self, order: Order, member: int, row: Any) -> None:
        key = (order, member)
        if not self.keys or self.keys[-1] < key:
            self.keys.append(key)  # added in host order (``FleetSummary.of``)
        else:
            bisect.insort(self.keys, key)
        self.rows[member] = row

    def remove(self, order: Order, member: int) -> None:
        del self.keys[bisect.bisect_left(self.keys, (order, member))]
        del self.rows[member]

    def __len__(self) -> int:
        return len(self.keys)

    def first(self) -> tuple[int, Any] | None:
        if not self.keys:
            return None
        member = self.keys[0][1]
        return member, self.rows[member]

    def ordered(self) -> list[Any]:
        return [self.rows[member] for _order, member in self.keys]


# (order, member id, place in the member's results, row): one contributor of
# a tested host's result
_Contributor = tuple[Order, int, int, BenchRow]


class _Bench:
    """One benchmark's results: each tested host's contributors in host order
    (the first one counts; nearly always there is one), and the counted
    results ranked best first."""

    __slots__ = ("lower", "ranked", "tested")

    def __init__(self, unit: str) -> None:
        self.lower = unit in TIME_UNITS
        self.tested: dict[str, list[_Contributor]] = {}
        self.ranked: list[_Ranked] = []

    def rank(self, value: float) -> float:
        return value if self.lower else -value

    def _counted(self, tested: str) -> _Ranked | None:
        contributors = self.tested.get(tested)
        if not contributors:
            return None
        order, member, place, row = contributors[0]
        return (self.rank(row[1].value), order, place, tested, member)

    def add(self, order: Order, member: int, row: BenchRow, place: int, *, rank: bool = True) -> None:
        """Add a contributor; ``rank=False`` leaves ``ranked`` to :meth:`rank_all`."""
        tested = row[2]
        before = self._counted(tested) if rank else None
        bisect.insort(self.tested.setdefault(tested, []), (order, member, place, row), key=lambda c: c[:2])
        if rank:
            self._recount(before, self._counted(tested))

    def rank_all(self) -> None:
        self.ranked = sorted(r for tested in self.tested if (r := self._counted(tested)) is not None)

    def remove(self, order: Order, member: int, tested: str) -> None:
        before = self._counted(tested)
        contributors = self.tested[tested]
        contributors[:] = [c for c in contributors if c[1] != member]
        if not contributors:
            del self.tested[tested]
        self._recount(before, self._counted(tested))

    def _recount(self, before: _Ranked | None, after: _Ranked | None) -> None:
        if before == after:
            return
        if before is not None:
            del self.ranked[bisect.bisect_left(self.ranked, before)]
        if after is not None:
            bisect.insort(self.ranked, after)

    def row(self, ranked: _Ranked) -> BenchRow:
        return next(c[3] for c in self.tested[ranked[3]] if c[1] == ranked[4])


@dataclass
class SummaryMember:
    """A member as the summary holds it (``FleetSummary.members``)."""

    order: Order
    name: str
    profile: FleetProfile
    physical: bool
    drift: dict[str, Cited]
    bench: dict[tuple[BenchKey, str], tuple[BenchRow, int]]


def _bench_rows(name: str, profile: FleetProfile) -> dict[tuple[BenchKey, str], tuple[BenchRow, int]]:
    """(benchmark, tested host) -> the member's first positive result of it
    and its place among the member's results."""
    out: dict[tuple[BenchKey, str], tuple[BenchRow, int]] = {}
    for place, b in enumerate(profile.benchmarks):
        tested = b.host or name
        key = ((b.kind.lower(), b.name.lower(), b.unit), tested)
        if key not in out and b.value > 0:
            out[key] = ((name, b, tested), place)
    return out


class FleetSummary:
    """The fleet rules' view of a set of members (each known by an id, a host
    name and its :class:`FleetProfile`), updated one member at a time."""

    def __init__(self) -> None:
        self.members: dict[int, SummaryMember] = {}
        self.physical = 0  # members placed as physical hosts
        self.with_benchmarks = 0  # members with any benchmark result
        self.drift: dict[str, dict[str, _Group]] = {}  # key -> str(value) -> (name, Cited)
        self.bench: dict[BenchKey, _Bench] = {}

    @classmethod
    def of(cls, entries: Iterable[tuple[str, FleetProfile]]) -> FleetSummary:
        """The summary of physical hosts ``entries`` (name, profile), in that order."""
        summary = cls()
        for i, (name, profile) in enumerate(entries):
            summary.add(i, (0, i), name, profile, physical=True, rank=False)
        for bench in summary.bench.values():
            bench.rank_all()
        return summary

    def add(
        self,
        member: int,
        order: Order,
        name: str,
        profile: FleetProfile,
        *,
        physical: bool | None = None,
        rank: bool = True,
    ) -> None:
        """Add ``member`` (one not in the summary: remove it first to replace it).
        ``rank=False``: the benchmark results are ranked afterwards, all at once."""
        if physical is None:
            physical = not profile_is_guest(profile)
        entry = SummaryMember(order, name, profile, physical, {}, {})
        self.members[member] = entry
        self.with_benchmarks += bool(profile.benchmarks)
        if not physical:
            return
        self.physical += 1
        entry.drift = {key: profile.drift[key] for key in DRIFT_KEYS if key in profile.drift}
        self._add_drift(member, entry)
        entry.bench = _bench_rows(name, profile)
        self._add_bench(member, entry, rank=rank)

    def _add_drift(self, member: int, entry: SummaryMember) -> None:
        """Count the drift values of ``member`` (a physical host) in their groups."""
        for key, cited in entry.drift.items():
            groups = self.drift.setdefault(key, {})
            value = str(cited.value)
            group = groups.get(value)
            if group is None:
                group = groups[value] = _Group()
            group.add(entry.order, member, (entry.name, cited))

    def _add_bench(self, member: int, entry: SummaryMember, *, rank: bool) -> None:
        """Add the benchmark results of ``member`` (a physical host) to their benchmarks' rankings."""
        for (bench_key, _tested), (row, place) in entry.bench.items():
            if bench_key not in self.bench:
                self.bench[bench_key] = _Bench(bench_key[2])
            self.bench[bench_key].add(entry.order, member, row, place, rank=rank)

    def remove(self, member: int) -> None:
        entry = self.members.pop(member)
        self.with_benchmarks -= bool(entry.profile.benchmarks)
        if not entry.physical:
            return
        self.physical -= 1
        self._remove_drift(member, entry)
        self._remove_bench(member, entry)

    def _remove_drift(self, member: int, entry: SummaryMember) -> None:
        """Take the drift values of ``member`` out of their groups (an empty group, an empty key go)."""
        for key, cited in entry.drift.items():
            groups = self.drift[key]
            value = str(cited.value)
            groups[value].remove(entry.order, member)
            if not groups[value]:
                del groups[value]
            if not groups:
                del self.drift[key]

    def _remove_bench(self, member: int, entry: SummaryMember) -> None:
        """Take the benchmark results of ``member`` out of their rankings (a benchmark nobody ran goes)."""
        for (bench_key, tested), _row in entry.bench.items():
            bench = self.bench[bench_key]
            bench.remove(entry.order, member, tested)
            if not bench.tested:
                del self.bench[bench_key]

    def names(self) -> list[str]:
        """The members' host names, in host order."""
        return [
            entry.name for _member, entry in sorted(self.members.items(), key=lambda m: (m[1].order, m[0]))
        ]

    def canonical(self) -> dict[str, Any]:
        """Everything the rules can read, in host order (what a summary kept up
        to date must equal: the summary of the same members built anew)."""
        return {
            "physical": self.physical,
            "with_benchmarks": self.with_benchmarks,
            "drift": {
                key: {value: group.ordered() for value, group in sorted(groups.items())}
                for key, groups in sorted(self.drift.items())
            },
            "bench": {
                key: [(ranked[0], bench.row(ranked)) for ranked in bench.ranked]
                for key, bench in sorted(self.bench.items())
            },
        }


class FleetView:
    """The hosts analysed in full (``front``: their summary, first in host
    order) and the other members (``rest``) as one: what the fleet rules
    read. A tested host's result from the front hides the rest's."""

    def __init__(self, front: FleetSummary, rest: FleetSummary | None = None) -> None:
        self.parts = [front] if rest is None else [front, rest]

    def drift_counts(self, key: str) -> dict[str, int]:
        """str(value) -> how many hosts have it."""
        counts: dict[str, int] = {}
        for part in self.parts:
            for value, group in part.drift.get(key, {}).items():
                counts[value] = counts.get(value, 0) + len(group)
        return counts

    def drift_rows(self, key: str, value: str) -> list[tuple[str, Cited]]:
        """(host name, cited value) of the hosts with ``value``, in host order."""
        rows: list[tuple[str, Cited]] = []
        for part in self.parts:
            group = part.drift.get(key, {}).get(value)
            if group:
                rows.extend(group.ordered())
        return rows

    def drift_first(self, key: str, value: str) -> tuple[str, Cited] | None:
        for part in self.parts:
            group = part.drift.get(key, {}).get(value)
            first = group.first() if group else None
            if first is not None:
                row: tuple[str, Cited] = first[1]
                return row
        return None

    def bench_keys(self) -> list[BenchKey]:
        return sorted({key for part in self.parts for key in part.bench})

    def _benches(self, key: BenchKey) -> tuple[list[tuple[_Bench, set[str]]], int]:
        """Each part's results of ``key`` with the tested hosts it hides
        (counted in an earlier part), and how many results count."""
        out: list[tuple[_Bench, set[str]]] = []
        seen: set[str] = set()
        count = 0
        for part in self.parts:
            bench = part.bench.get(key)
            if bench is None:
                continue
            hidden = bench.tested.keys() & seen
            count += len(bench.tested) - len(hidden)
            seen.update(bench.tested)
            out.append((bench, hidden))
        return out, count

    def bench_count(self, key: BenchKey) -> int:
        """How many tested hosts have a result of ``key``."""
        return self._benches(key)[1]

    def bench_best(self, key: BenchKey) -> BenchRow | None:
        """The best result (the first host in order among equals)."""
        firsts = [
            (ranked, bench)
            for bench, hidden in self._benches(key)[0]
            if (ranked := _best_shown(bench, hidden)) is not None
        ]
        best = min(firsts, key=operator.itemgetter(0), default=None)  # (the first of equals)
        return None if best is None else best[1].row(best[0])

    def bench_from_worst(self, key: BenchKey) -> Iterator[BenchRow]:
        """The results, worst first (read as many as needed)."""
        streams = [_worst_first(bench, hidden) for bench, hidden in self._benches(key)[0]]
        for _ranked, row in heapq.merge(*streams, key=lambda item: item[0], reverse=True):
            yield row


def _best_shown(bench: _Bench, hidden: set[str]) -> _Ranked | None:
    """The best-ranked result of ``bench`` whose tested host is not ``hidden`` (None: none)."""
    return next((r for r in bench.ranked if r[3] not in hidden), None)


def _worst_first(bench: _Bench, hidden: set[str]) -> Iterator[tuple[_Ranked, BenchRow]]:
    for ranked in reversed(bench.ranked):
        if ranked[3] not in hidden:
            yield ranked, bench.row(ranked)
