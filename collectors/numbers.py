"""Numbers read from command output.

``decimal``: as sysstat and top print them, an optional minus, up to 15 digits
and up to 6 decimals after a point or (in some locales) a comma.

    >>> decimal("12,50"), decimal(" -3 "), decimal("1e5")
    (12.5, -3.0, None)

``finite``: a number a parser's pattern has already matched (ping's round
trips, a benchmark's rate), which must still be finite:

    >>> finite("0.042", line=3)
    0.042

``ascii_digits``: a token of ASCII digits only (``str.isdigit`` alone also
accepts superscripts and other scripts' digits, which ``int`` rejects):

    >>> ascii_digits("042"), ascii_digits("²"), ascii_digits("")
    (True, False, False)

``whole``: an ``int`` that is no ``bool`` (a line number, a JSON exit code:
``True`` is an ``int`` to ``isinstance``):

    >>> whole(3), whole(True), whole(3.0)
    (True, False, False)

``set_means``: samples averaged field by field (mpstat's or sar's rows of a
report without its Average lines).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from collectors.facts import ParseError

DECIMAL = re.compile(r"^-?\d{1,15}(?:[.,]\d{1,6})?$")


def decimal(token: str) -> float | None:
    """``token`` (surrounding blanks ignored) as a number; None when it is not one."""
    token = token.strip()
    return float(token.replace(",", ".")) if DECIMAL.match(token) else None


def ascii_digits(token: str) -> bool:
    """Whether ``token`` is ASCII digits only (and not empty)."""
    return token.isascii() and token.isdigit()


def whole(value: object) -> bool:
    """Whether ``value`` is an ``int`` and not a ``bool``."""
    return isinstance(value, int) and not isinstance(value, bool)


def set_means(target: Any, rows: Sequence[Any], names: Iterable[str]) -> None:
    """Set each field of ``names`` on ``target`` to the mean (to 2 decimals) of
    the rows' values; a field no row has a value of is left as it is."""
    for name in names:
        values = [getattr(row, name) for row in rows if getattr(row, name) is not None]
        if values:
            setattr(target, name, round(sum(values) / len(values), 2))


def finite(text: str, line: int) -> float:
    """``text`` as a float; ParseError (at ``line``) when it is not a finite number."""
    try:
        value = float(text)
    except ValueError:
        raise ParseError(f"bad number {text!r}", line=line) from None
    if not math.isfinite(value):
        raise ParseError(f"number out of range {text[:20]!r}", line=line)
    return value
