"""What worked across closed sessions: the relative improvement of the metric
over each applied step, with its interval, and the ranking the plan uses."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable

from troubleshoot.apply import applied_steps
from troubleshoot.models import PlannedMeasure, Session
from troubleshoot.stats import mean_interval
from troubleshoot.verify import improvement, verification

# A measure's effectiveness reorders plans only once this many closed
# sessions have measured it: one session is an anecdote.
MIN_SESSIONS = 3


def _measured_steps(session: Session) -> list[tuple[tuple[str, ...], float | None]]:
    """``(measures, relative improvement)`` per step of a closed session, the
    improvement measured against the value before the step. Steps applied
    without a metric are measured with the next step that has one (the metric
    after it covers both), so every measure is credited once."""
    out: list[tuple[tuple[str, ...], float | None]] = []
    previous = session.metric_baseline
    pending: list[str] = []
    for step in applied_steps(session, list(session.measures.all())):
        pending += step["slugs"]
        value = step["metric_after"]
        if value is None:
            continue
        out.append((tuple(sorted(pending)), improvement(session, value, reference=previous)))
        previous, pending = value, []
    if pending:
        out.append((tuple(sorted(pending)), None))
    return out


def effectiveness(slugs: Iterable[str] | None = None, *, with_clears: bool = False) -> dict[str, dict]:
    """Per step across closed sessions, keyed by its measures ("a + b" for
    measures applied together): the relative improvement of the metric over
    the step (against the value before it, in the metric's good direction),
    its mean with a 95 % t interval (``troubleshoot.stats``), ``n`` sessions
    that measured it, how many sessions applied it, how many of those ended
    resolved, and in how many the verify step really cleared a rule of its
    measures (``cleared``; ``not_rechecked``: only could not re-check it;
    both 0 unless ``with_clears``, which reads each session's verify step).
    ``slugs``: only the sessions that applied one of these measures are read
    (a plan asks about its candidates); the entry of every step with one of
    them is the same as without ``slugs``."""
    closed = Session.objects.filter(state=Session.State.CLOSED)
    if slugs is None:
        closed = closed.filter(measures__status=PlannedMeasure.Status.APPLIED)
    else:
        wanted = sorted(set(slugs))
        if not wanted:
            return {}
        # one filter(): the same applied measure is one of ``slugs``
        closed = closed.filter(
            measures__status=PlannedMeasure.Status.APPLIED, measures__measure__slug__in=wanted
        )
    closed = closed.distinct().prefetch_related("measures__measure")
    gains: dict[tuple[str, ...], list[float]] = defaultdict(list)
    sessions: dict[tuple[str, ...], int] = defaultdict(int)
    resolved: dict[tuple[str, ...], int] = defaultdict(int)
    cleared: dict[tuple[str, ...], int] = defaultdict(int)
    not_rechecked: dict[tuple[str, ...], int] = defaultdict(int)
    for session in closed:
        # what the step's measures should clear, against what the verify step
        # really cleared (checked again, quiet) or could not re-check
        targets = {pm.measure.slug: set(pm.measure.rules or []) for pm in session.measures.all()}
        really: set[str] = set()
        unsure: set[str] = set()
        if with_clears:  # the verify step of each session: a few queries each
            found = verification(session)
            really = {f.rule for f in found["cleared"]}
            unsure = {item["rule"] for item in found["unverified"]}
        for slugs, gain in _measured_steps(session):
            sessions[slugs] += 1
            resolved[slugs] += int(session.outcome == Session.Outcome.RESOLVED)
            aimed = set().union(*(targets.get(slug, set()) for slug in slugs))
            cleared[slugs] += int(bool(aimed & really))
            not_rechecked[slugs] += int(bool(aimed & unsure) and not aimed & really)
            if gain is not None:
                gains[slugs].append(gain)
    out = {}
    for slugs, count in sessions.items():
        values = gains[slugs]
        mean, low, high = mean_interval(values) if values else (None, None, None)
        key = " + ".join(slugs)
        out[key] = {
            "key": key,
            "slugs": list(slugs),
            "together": len(slugs) > 1,
            "sessions": count,
            "resolved": resolved[slugs],
            "resolved_rate": resolved[slugs] / count,
            # sessions whose after-snapshot checked a rule of the step and found it
            # gone; and those where it could not be re-checked (never counted as cleared)
            "cleared": cleared[slugs],
            "not_rechecked": not_rechecked[slugs],
            "n": len(values),
            "mean_improvement": mean,
            "ci_low": low,
            "ci_high": high,
            "median_improvement": statistics.median(values) if values else None,
            "ranks": len(values) >= MIN_SESSIONS,
        }
    return out


def effectiveness_ranking() -> list[dict]:
    """Every step, those measured in enough sessions to rank first, best mean first."""
    stats = list(effectiveness(with_clears=True).values())
    stats.sort(
        key=lambda s: (
            not s["ranks"],
            -(s["mean_improvement"] if s["mean_improvement"] is not None else -1e9),
            s["key"],
        )
    )
    return stats
