"""Cluster comparison: the hosts of one cluster side by side.

Seed 001: 18 "identical" Kunpeng servers, STREAM 15000 vs 6000 MB/s, and the
customer refused to let us check the machines one by one. The page built from
this module answers "which hosts differ, and in what" from the snapshots
already uploaded.

:func:`compare` is pure (``HostFacts`` in, :class:`Matrix` out) and decides
which cells differ from the rest of their column; :func:`load_cluster` picks
the hosts a user may see and re-runs the fleet rules over their stored facts.
Nothing here writes to the database.
"""

from __future__ import annotations

import contextlib
import gc
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet
from django.utils.translation import gettext_lazy as _

from collectors.derived.fleet import FleetProfile, fleet_profile, profile_from_json, profile_host
from collectors.facts import HostFacts, SnapshotFacts
from engine import run as engine_run
from engine.rules import Finding, load_all
from engine.rules.fleet import BENCHMARK_SPREAD_RATIO, majority, spread
from triage.models import Snapshot
from triage.selectors import MAX_CLUSTER_HOSTS, host_key, hostname_expression, unique_labels

# A numeric cell differs when it is this many times above or below the
# column's median: memory per node (a NUMA-off host shows both sockets'
# memory as one node, 2x) ...
MEMORY_RATIO = 1.25
# ... benchmarks, with the fleet rule's own threshold ...
BENCHMARK_RATIO = BENCHMARK_SPREAD_RATIO
# ... and page cache share, in percentage points (seed 001: 96 % vs 45 %).
PAGE_CACHE_POINTS = 25.0


@dataclass(frozen=True)
class Column:
    key: str
    label: Any  # a lazy translation
    # "setting": compared with the most common value (mode);
    # "measure": a number compared with the column's median and a tolerance
    kind: str = "setting"
    unit: str = ""


@dataclass
class Cell:
    shown: str  # "—" when unknown
    value: Any = None  # what is compared: a string (setting) or a float (measure)
    differs: bool = False
    # the column's majority (setting) or median (measure), as shown
    reference: str = ""
    by_median: bool = False


@dataclass
class Row:
    label: str
    hostname: str | None
    role: str | None
    cells: list[Cell] = field(default_factory=list)

    @property
    def differs(self) -> bool:
        return any(c.differs for c in self.cells)


@dataclass
class Matrix:
    columns: list[Column]
    rows: list[Row]
    # column key -> reference value as shown ("" when there is none)
    references: dict[str, str] = field(default_factory=dict)

    def differing_hosts(self) -> list[str]:
        return [r.label for r in self.rows if r.differs]

    def column(self, key: str) -> list[Cell]:
        index = next(i for i, c in enumerate(self.columns) if c.key == key)
        return [r.cells[index] for r in self.rows]


# ------------------------------------------------------------------ reading facts


def _setting(value: Any) -> tuple[str, str | None]:
    if value is None or value == "":
        return "—", None
    text = str(value).strip()
    return text, text


# Setting columns: compared with the most common value; the values are those
# of the hosts' fleet profiles (``collectors.derived.fleet``).
SETTINGS: list[Column] = [
    Column("numa_nodes", _("NUMA nodes")),
    Column("zone_reclaim_mode", "vm.zone_reclaim_mode"),
    Column("numa_balancing", "kernel.numa_balancing"),
    Column("thp", _("THP")),
    Column("hugepages", _("Static huge pages")),
    Column("kernel", _("Kernel")),
    Column("cpu_model", _("CPU model")),
]
MEASURES: list[tuple[Column, Callable]] = [
    (
        Column("memory_per_node", _("Memory per node"), kind="measure", unit="GiB"),
        lambda v, ref: spread(v, ref) >= MEMORY_RATIO if min(v, ref) > 0 else v != ref,
    ),
    (
        Column("page_cache_share", _("Page cache share"), kind="measure", unit="%"),
        lambda v, ref: abs(v - ref) >= PAGE_CACHE_POINTS,
    ),
]
# Column order on the page: topology and memory first, then settings, then benchmarks.
ORDER = (
    "numa_nodes",
    "memory_per_node",
    "page_cache_share",
    "zone_reclaim_mode",
    "numa_balancing",
    "thp",
    "hugepages",
    "kernel",
    "cpu_model",
)


def _benchmarks(profile: FleetProfile) -> dict[tuple[str, str, str], float]:
    """(kind, name, unit) -> the host's first result (as the fleet rule counts it)."""
    out: dict[tuple[str, str, str], float] = {}
    for b in profile.benchmarks:
        out.setdefault((b.kind.lower(), b.name, b.unit), b.value)
    return out


def _ratio_differs(value: float, ref: float) -> bool:
    if value <= 0 or ref <= 0:
        return value != ref
    return spread(value, ref) >= BENCHMARK_RATIO


# --------------------------------------------------------------------- comparing


def _mark_settings(cells: list[Cell]) -> str:
    """Highlight the cells that differ from the column's strict majority;
    without one (a tie) nothing is highlighted: no host is the odd one out."""
    top = majority(Counter(c.value for c in cells if c.value is not None))
    if top is None:
        return ""
    for c in cells:
        if c.value is not None and c.value != top:
            c.differs, c.reference = True, top
    return top


def _mark_measures(cells: list[Cell], differs: Callable[[float, float], bool], unit: str) -> str:
    values = [c.value for c in cells if c.value is not None]
    if not values:
        return ""
    median = statistics.median(values)
    reference = f"{median:g} {unit}".strip() if unit != "%" else f"{median:.0f}%"
    if len(values) < 2:
        return reference
    odd = [c for c in cells if c.value is not None and differs(c.value, median)]
    if len(odd) * 2 > len(values):
        # Most hosts are far from the median: the cluster is split in groups
        # (e.g. two hosts at 45% page cache, two at 96%) and the median is no
        # usual value, so, as with a tie of settings, no host is the odd one out.
        return reference
    for c in odd:
        c.differs, c.reference, c.by_median = True, reference, True
    return reference


def compare(hosts: list[HostFacts], profiles: list[FleetProfile] | None = None) -> Matrix:
    """The comparison matrix of ``hosts`` (rows in the order given): one column
    per key fact and per benchmark any host reports. ``profiles`` are the
    hosts' stored fleet profiles (derived from ``hosts`` when not given)."""
    if profiles is None:
        profiles = [fleet_profile(h) for h in hosts]
    columns: dict[str, Column] = {}
    cells: dict[str, list[Cell]] = {}
    for column in SETTINGS:
        columns[column.key] = column
        cells[column.key] = [Cell(*_setting(p.settings.get(column.key))) for p in profiles]
    for column, _differs in MEASURES:
        columns[column.key] = column
        cells[column.key] = [Cell(*(p.measures.get(column.key) or ("—", None))) for p in profiles]
    per_host = [_benchmarks(p) for p in profiles]
    # in the order the tools print them (STREAM: Copy, Scale, Add, Triad)
    bench_keys = list(dict.fromkeys(k for b in per_host for k in b))
    for kind, name, unit in bench_keys:
        key = f"bench:{kind}:{name}:{unit}"
        label = f"{'STREAM' if kind == 'stream' else kind} {name} ({unit})"
        columns[key] = Column(key, label, kind="measure", unit=unit)
        cells[key] = [
            Cell(f"{v:g}", v) if (v := b.get((kind, name, unit))) is not None else Cell("—") for b in per_host
        ]

    references: dict[str, str] = {}
    for key, column in columns.items():
        if column.kind == "setting":
            references[key] = _mark_settings(cells[key])
        else:
            measure = next((d for c, d in MEASURES if c.key == key), _ratio_differs)
            references[key] = _mark_measures(cells[key], measure, column.unit)

    order = [k for k in ORDER if k in columns] + [k for k in columns if k not in ORDER]
    rows = [
        Row(
            label=h.label or h.hostname or f"host {i + 1}",
            hostname=h.hostname,
            role=h.role,
            cells=[cells[k][i] for k in order],
        )
        for i, h in enumerate(hosts)
    ]
    return Matrix(columns=[columns[k] for k in order], rows=rows, references=references)


def benchmark_series(matrix: Matrix) -> list[tuple[Column, list[tuple[str, float, bool]], float | None]]:
    """Per benchmark kind, the column to chart (STREAM: Triad, the figure seed
    001 quotes; otherwise the first) with (host, value, differs) per host and
    the median."""
    chosen: dict[str, Column] = {}
    for column in matrix.columns:
        if not column.key.startswith("bench:"):
            continue
        _prefix, kind, name, _unit = column.key.split(":", 3)
        if kind not in chosen or name.lower() == "triad":
            chosen[kind] = column
    out = []
    for column in chosen.values():
        cells = matrix.column(column.key)
        points = [(r.label, c.value, c.differs) for r, c in zip(matrix.rows, cells, strict=True) if c.value]
        values = [v for _l, v, _d in points]
        out.append((column, points, statistics.median(values) if values else None))
    return out


# ------------------------------------------------------------------ the cluster


@dataclass
class ClusterView:
    name: str
    snapshots: list[Snapshot]  # compared: the newest analysed snapshot of each host, matrix order
    pending: list[Snapshot]  # of the cluster but not compared: queued, analysing or failed
    superseded: int  # older analysed snapshots of hosts that have a newer one
    hosts: list[HostFacts]
    matrix: Matrix
    fleet_findings: list[Finding]


def fleet_findings(hosts: list[HostFacts], profiles: list[FleetProfile] | None = None) -> list[Finding]:
    """The fleet rules over ``hosts`` (the other rules are per host and are on
    each snapshot's own report); ``profiles``: their stored fleet profiles."""
    fleet = {rule_id: spec for rule_id, spec in load_all().items() if engine_run.is_fleet_rule(rule_id)}
    stored = {h.label: p for h, p in zip(hosts, profiles, strict=True)} if profiles is not None else {}
    return engine_run.analyze(SnapshotFacts(hosts=hosts, fleet_profiles=stored), rules=fleet).findings


@contextlib.contextmanager
def no_gc_pauses():
    """Building the matrix of thousands of hosts allocates hundreds of
    thousands of small objects that all live until the page is rendered; the
    cyclic collector would walk the whole process heap again and again (about
    a third of the page's time at 2,000 hosts). Reference counting still frees
    everything; the collector runs again afterwards."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def load_cluster(visible: QuerySet[Snapshot], name: str) -> ClusterView | None:
    """The comparison of cluster ``name`` among the ``visible`` snapshots (see
    ``_load_cluster``)."""
    with no_gc_pauses():
        return _load_cluster(visible, name)


def _load_cluster(visible: QuerySet[Snapshot], name: str) -> ClusterView | None:
    """The comparison of cluster ``name`` among the ``visible`` snapshots
    (``selectors.visible_snapshots(user)``: a team never sees another team's
    hosts), or None when the user sees no snapshot of it.

    Fleet findings are computed here rather than read back. The analysis does
    store them (a cluster run writes them on every host, see
    ``triage.analysis._attribute``), but each stored set describes the hosts the
    *uploader's* owner/team scope held when that run finished, under the engine
    of that day. Re-running the two fleet rules over the stored facts of exactly
    the hosts in the matrix keeps findings and matrix about the same machines,
    never names a host this user cannot open, and follows the current engine.
    It is cheap: each host is rebuilt from its stored fleet summary
    (``Snapshot.fleet_host``; no upload is parsed again) and only the fleet
    rules run, so a cluster of thousands of hosts renders in about a second.
    """
    # Only the hostname of every member is read here; the full facts only of
    # the snapshots compared (a cluster keeps every before/after snapshot).
    members = list(
        visible.filter(cluster=name)
        .only("pk", "label", "original_filename", "status", "cluster", "created_at", "owner", "team")
        .annotate(facts_hostname=hostname_expression())
        .order_by("-created_at", "-pk")
    )
    if not members:
        return None
    newest: dict[str, Snapshot] = {}
    pending: list[Snapshot] = []
    superseded = 0
    for snap in members:
        if snap.status != Snapshot.Status.DONE:
            pending.append(snap)
        elif host_key(snap) in newest:
            superseded += 1
        elif len(newest) < MAX_CLUSTER_HOSTS:  # the cluster analysis's limit too
            newest[host_key(snap)] = snap
    compared = sorted(newest.values(), key=lambda s: (s.host_label, s.pk))
    profiles = {
        pk: profile_from_json(data)
        for pk, data in Snapshot.objects.filter(pk__in=[s.pk for s in compared])
        .exclude(fleet_facts={})
        .values_list("pk", "fleet_facts")
    }
    # analysed before fleet profiles were stored: derived from their stored facts
    for row in Snapshot.objects.filter(pk__in=[s.pk for s in compared if s.pk not in profiles]).only(
        "pk", "label", "original_filename", "cluster", "facts"
    ):
        profiles[row.pk] = row.fleet_profile()
    labels = unique_labels(compared)
    hosts, ordered = [], []
    for compared_snap in compared:
        profile = profiles.get(compared_snap.pk) or FleetProfile()
        profile.label = labels[compared_snap.pk]
        host = profile_host(profile)
        host.cluster = name
        hosts.append(host)
        ordered.append(profile)
    return ClusterView(
        name=name,
        snapshots=compared,
        pending=pending,
        superseded=superseded,
        hosts=hosts,
        matrix=compare(hosts, ordered),
        fleet_findings=fleet_findings(hosts, ordered),
    )
