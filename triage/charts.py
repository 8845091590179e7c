"""Server-side SVG charts (no JavaScript, nothing from a CDN).

Each function takes a host's facts (``HostFacts``, as
``Snapshot.host_facts()`` reads them back) or plain numbers and returns an SVG
string, or "" when the facts lack what the chart needs. Every label is escaped; each chart has a
``<title>`` so screen readers and tests can find it.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from collectors.facts import CpuUtil, HostFacts

MEMORY_PARTS = (
    # (label, colour, how to read it from a node's meminfo in kB)
    ("anon", "#d93025", lambda m: m.get("AnonPages", 0)),
    ("page cache", "#f9ab00", lambda m: m.get("FilePages", 0)),
    ("huge pages", "#9334e6", lambda m: m.get("HugePages_Total", 0) * m.get("_hugepagesize_kb", 2048)),
    ("free", "#1e8e3e", lambda m: m.get("MemFree", 0)),
)


def _svg(width: int, height: int, title: str, body: list[str], css_class: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart {css_class}" role="img" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}">'
        f"<title>{escape(title)}</title>" + "".join(body) + "</svg>"
    )


def _gib(kb: float) -> str:
    return f"{kb / 1024 / 1024:.1f} GiB"


def numa_memory_bars(
    host: HostFacts, *, title: str = "Memory per NUMA node", labels: dict | None = None
) -> str:
    """One stacked bar per node: anon, page cache, huge pages, free (from node
    meminfo; numactl -H size/free when that is all there is)."""
    nodes = host.numa.nodes if host.numa else {}
    hp_kb = (host.hugepages.hugepagesize_kb if host.hugepages else None) or 2048
    rows = []
    for node_id in sorted(nodes):
        numa_node = nodes[node_id]
        meminfo = dict(numa_node.meminfo)
        if not meminfo and numa_node.size_mb is not None:
            meminfo = {"MemTotal": numa_node.size_mb * 1024, "MemFree": (numa_node.free_mb or 0) * 1024}
        total = meminfo.get("MemTotal")
        if not total:
            continue
        meminfo["_hugepagesize_kb"] = hp_kb
        parts = [(label, colour, max(0, get(meminfo))) for label, colour, get in MEMORY_PARTS]
        known = sum(v for _l, _c, v in parts)
        parts.append(("other", "#bdc1c6", max(0, total - known)))
        rows.append((node_id, total, parts))
    if not rows:
        return ""
    labels = labels or {}
    width, bar_w, left, row_h = 640, 460, 70, 34
    height = 30 + row_h * len(rows) + 26
    body = []
    for n, (node, total, parts) in enumerate(rows):
        y = 10 + n * row_h
        body.append(f'<text x="0" y="{y + 17}" font-size="13">node {node}</text>')
        x = left
        for label, colour, kb in parts:
            w = bar_w * kb / total if total else 0
            if w <= 0:
                continue
            shown = escape(labels.get(label, label))
            body.append(
                f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="24" fill="{colour}" '
                f'data-part="{escape(label)}"><title>node {node} {shown}: {_gib(kb)}</title></rect>'
            )
            x += w
        body.append(f'<text x="{left + bar_w + 8}" y="{y + 17}" font-size="12">{_gib(total)}</text>')
    y = 16 + row_h * len(rows)
    x = left
    for label, colour, _get in (*MEMORY_PARTS, ("other", "#bdc1c6", None)):
        body.append(f'<rect x="{x}" y="{y}" width="12" height="12" fill="{colour}"/>')
        shown = labels.get(label, label)
        body.append(f'<text x="{x + 16}" y="{y + 11}" font-size="12">{escape(shown)}</text>')
        # CJK glyphs are about twice as wide as Latin ones at this size.
        x += 16 + sum(13 if ord(ch) > 0x2E80 else 7 for ch in shown) + 18
    return _svg(width, height, title, body, "chart-numa-memory")


def _heat(value: float) -> str:
    """White (0 %) to deep red (100 %)."""
    v = max(0.0, min(1.0, value / 100.0))
    g = int(245 - 200 * v)
    return f"rgb(245,{g},{int(240 - 215 * v)})"


def _busy(c: CpuUtil) -> float:
    return 100.0 - (c.id if c.id is not None else 100.0)


def _softirq(c: CpuUtil) -> float:
    return c.si or 0.0


def cpu_heat_strip(
    host: HostFacts, *, title: str = "Per-CPU utilisation", busy: str = "busy %", softirq: str = "softirq %"
) -> str:
    """Two strips, one cell per CPU: busy % (100 - idle) and softirq %, so a
    softirq hot spot on a few CPUs stands out."""
    cpus = [c for c in (host.cpu_usage.per_cpu if host.cpu_usage else []) if str(c.cpu) != "all"]
    if not cpus:
        return ""
    n = len(cpus)
    left, width = 70, 640
    cell = max(2.0, (width - left - 10) / n)
    width = int(left + cell * n + 10)
    body = []
    for row, (key, label, get) in enumerate((("busy", busy, _busy), ("softirq", softirq, _softirq))):
        y = 8 + row * 30
        body.append(f'<text x="0" y="{y + 16}" font-size="12">{escape(label)}</text>')
        for i, c in enumerate(cpus):
            value = float(get(c))
            cpu = escape(str(c.cpu))
            body.append(
                f'<rect x="{left + i * cell:.1f}" y="{y}" width="{cell:.1f}" height="22" '
                f'fill="{_heat(value)}" data-cpu="{cpu}" data-{key}="{value:.1f}">'
                f"<title>CPU {cpu} {escape(label)}: {value:.1f}</title></rect>"
            )
    body.append(f'<text x="{left}" y="80" font-size="11">CPU 0</text>')
    last = escape(str(cpus[-1].cpu))
    body.append(f'<text x="{width - 10}" y="80" font-size="11" text-anchor="end">CPU {last}</text>')
    return _svg(width, 88, title, body, "chart-cpu-heat")


def numa_distance_matrix(host: HostFacts, *, title: str = "NUMA distances") -> str:
    ids, matrix = (host.numa.distance_nodes, host.numa.distances) if host.numa else ([], [])
    if not ids or not matrix:
        return ""
    n = len(ids)
    cell = 34 if n <= 8 else max(14, 300 // n)
    left = top = 40
    size = left + cell * n + 10
    flat = [v for row in matrix for v in row]
    lo, hi = min(flat), max(flat)
    body = []
    for i, node in enumerate(ids):
        row_y, col_x = top + i * cell + cell * 0.65, left + i * cell + cell / 2
        body.append(f'<text x="{left - 6}" y="{row_y:.0f}" font-size="11" text-anchor="end">{node}</text>')
        body.append(f'<text x="{col_x:.0f}" y="{top - 8}" font-size="11" text-anchor="middle">{node}</text>')
    for i, row in enumerate(matrix):
        for j, value in enumerate(row):
            share = (value - lo) / (hi - lo) if hi > lo else 0.0
            x, y = left + j * cell, top + i * cell
            body.append(
                f'<rect x="{x}" y="{y}" width="{cell - 1}" height="{cell - 1}" fill="{_heat(share * 100)}" '
                f'data-distance="{value}"><title>{ids[i]} -> {ids[j]}: {value}</title></rect>'
            )
            if cell >= 24:
                body.append(
                    f'<text x="{left + j * cell + cell / 2:.0f}" y="{top + i * cell + cell * 0.62:.0f}" '
                    f'font-size="11" text-anchor="middle">{value}</text>'
                )
    return _svg(size, size, title, body, "chart-numa-distance")


@dataclass(frozen=True)
class _Bars:
    """Geometry of a horizontal bar chart: label column, bar length, row pitch."""

    left: int
    bar_w: int
    row_h: int
    bar_h: int
    text_dy: int  # text baseline below the bar's top
    label_chars: int
    value_font: int

    def row(self, i: int, label: str, value: float, top_value: float, *, unit: str, colour: str, data: dict):
        """The label, the bar (with ``data-*`` attributes, in order) and the value of row ``i``."""
        y = 6 + i * self.row_h
        w = self.bar_w * abs(value) / top_value
        shown = f"{value:g} {unit}".strip()
        base = y + self.text_dy
        return [
            f'<text x="{self.left - 8}" y="{base}" font-size="12" text-anchor="end">'
            f"{escape(label[: self.label_chars])}</text>",
            f'<rect x="{self.left}" y="{y}" width="{w:.1f}" height="{self.bar_h}" fill="{colour}" '
            + " ".join(f'data-{k}="{escape(str(v))}"' for k, v in data.items())
            + f"><title>{escape(label)}: {escape(shown)}</title></rect>",
            f'<text x="{self.left + w + 6:.1f}" y="{base}" font-size="{self.value_font}">'
            f"{escape(shown)}</text>",
        ]


_METRIC_BARS = _Bars(left=220, bar_w=330, row_h=28, bar_h=20, text_dy=15, label_chars=32, value_font=12)
_HOST_BARS = _Bars(left=170, bar_w=380, row_h=22, bar_h=16, text_dy=13, label_chars=24, value_font=11)


def metric_bars(
    points: list[tuple[str, float]], *, unit: str = "", title: str = "Metric before and after"
) -> str:
    """One horizontal bar per measurement: the baseline, then after each measure."""
    if not points:
        return ""
    top_value = max(abs(v) for _l, v in points) or 1.0
    g = _METRIC_BARS
    body = []
    for i, (label, value) in enumerate(points):
        colour = "#5f6368" if i == 0 else "#1a73e8"
        body += g.row(i, label, value, top_value, unit=unit, colour=colour, data={"value": f"{value:g}"})
    return _svg(g.left + g.bar_w + 90, 10 + g.row_h * len(points), title, body, "chart-metric")


def host_bars(
    points: list[tuple[str, float, bool]],
    *,
    unit: str = "",
    title: str = "Benchmark per host",
    reference: float | None = None,
) -> str:
    """One horizontal bar per host of a cluster: ``(host, value, outlier)``.
    Outliers are drawn red (and marked ``data-outlier="1"``), the others blue;
    ``reference`` (the cluster's best result) is a dashed line across the bars."""
    if not points:
        return ""
    top_value = max([abs(v) for _l, v, _o in points] + [abs(reference or 0)]) or 1.0
    g = _HOST_BARS
    height = 12 + g.row_h * len(points)
    body = []
    for i, (label, value, outlier) in enumerate(points):
        data = {"host": label, "value": f"{value:g}", "outlier": 1 if outlier else 0}
        colour = "#d93025" if outlier else "#1a73e8"
        body += g.row(i, label, value, top_value, unit=unit, colour=colour, data=data)
    if reference:
        x = g.left + g.bar_w * abs(reference) / top_value
        body.append(
            f'<line x1="{x:.1f}" y1="2" x2="{x:.1f}" y2="{height - 2}" stroke="#202124" '
            f'stroke-dasharray="4 3" data-reference="{reference:g}"/>'
        )
    return _svg(g.left + g.bar_w + 110, height, title, body, "chart-host-bars")
