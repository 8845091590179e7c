"""Numbers as sysstat and top print them: an optional minus, up to 15 digits
and up to 6 decimals after a point or (in some locales) a comma.

    >>> decimal("12,50"), decimal(" -3 "), decimal("1e5")
    (12.5, -3.0, None)
"""

from __future__ import annotations

import re

DECIMAL = re.compile(r"^-?\d{1,15}(?:[.,]\d{1,6})?$")


def decimal(token: str) -> float | None:
    """``token`` (surrounding blanks ignored) as a number; None when it is not one."""
    token = token.strip()
    return float(token.replace(",", ".")) if DECIMAL.match(token) else None
