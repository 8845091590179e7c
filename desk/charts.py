"""The findings of a host over time, as an inline SVG (no script, no library)."""

from __future__ import annotations

from django.utils.html import escape
from django.utils.translation import gettext as _

from desk.hosts import HostSnapshot

COLOURS = {"critical": "#d93025", "warning": "#e37400", "info": "#1a73e8"}
BAR_W, GAP, HEIGHT, TOP = 22, 10, 120, 10


def findings_over_time(rows: list[HostSnapshot]) -> str:
    """One stacked bar per analysed snapshot (critical, warning, info), oldest left."""
    if not rows:
        return ""
    peak = max(sum(r.counts.values()) for r in rows) or 1
    body = []
    for i, row in enumerate(rows):
        x = GAP + i * (BAR_W + GAP)
        y = float(TOP + HEIGHT)
        label = escape(f"#{row.snapshot.pk} {row.snapshot.created_at:%Y-%m-%d}")
        for severity in ("info", "warning", "critical"):
            n = row.counts.get(severity, 0)
            if not n:
                continue
            h = HEIGHT * n / peak
            y -= h
            body.append(
                f'<rect x="{x}" y="{y:.1f}" width="{BAR_W}" height="{h:.1f}" fill="{COLOURS[severity]}" '
                f'data-snapshot="{row.snapshot.pk}" data-severity="{severity}" data-count="{n}">'
                f"<title>{label}: {n} {escape(severity)}</title></rect>"
            )
    width = GAP + len(rows) * (BAR_W + GAP)
    height = HEIGHT + TOP + 4
    title = escape(_("Findings per snapshot"))
    return (
        f'<svg class="chart-host-history" role="img" aria-label="{title}" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">'
        f"<title>{title}</title>{''.join(body)}</svg>"
    )
