"""The severities of a finding, most serious first: the one order rules,
reports, the wizard and the API sort by."""

from __future__ import annotations

SEVERITIES = ("critical", "warning", "info")


def severity_rank(severity: str) -> int:
    """0 for the most serious; unknown severities after every known one.

    >>> sorted(["info", "bogus", "critical", "warning"], key=severity_rank)
    ['critical', 'warning', 'info', 'bogus']
    """
    return SEVERITIES.index(severity) if severity in SEVERITIES else len(SEVERITIES)
