"""Sizes written with a binary unit (``16GB``, ``1024KiB``, ``3.9G``, ``kB``), as
the kernel and its tools (and MySQL's variables) mean them: powers of 1024,
whatever the spelling. The one place a size with a unit is read.

    >>> kib(16, "GB"), mb(1024, "KiB"), mb(512, None)
    (16777216, 1.0, 512.0)
    >>> size_bytes("432G"), size_bytes("128.000000M"), size_bytes("4 GiB"), size_bytes("lots")
    (463856467968, 134217728, 4294967296, None)
"""

from __future__ import annotations

import re
from typing import Any

# bytes per unit, by the unit's first letter (none or B, K/k, M, G, T, P)
BYTES_PER_UNIT = {"": 1, "B": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5}
# KiB per unit, by the unit's first letter (B, K/k, M, G, T, P)
KIB_PER_UNIT: dict[str, float] = {
    unit: size // 1024 if size >= 1024 else size / 1024 for unit, size in BYTES_PER_UNIT.items() if unit
}

_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([KMGTP]?)(?:I?B)?\s*", re.I)


def size_bytes(value: Any) -> int | None:
    """A size as MySQL variables, its error log and ``free -h`` write it
    (``432G``, ``128.0M``, ``8388608m``, ``4GiB``, ``134217728``) in bytes;
    None when it is not one."""
    m = _SIZE.fullmatch(str(value))  # (None is "None": no size)
    if not m:
        return None
    return round(float(m.group(1)) * BYTES_PER_UNIT[m.group(2).upper()])


def kib(value: float, unit: str | None, *, default: str = "K") -> float:
    """``value`` in ``unit`` (no unit: ``default``) as KiB."""
    return value * KIB_PER_UNIT[(unit or default)[0].upper()]


def mb(value: float, unit: str | None, *, default: str = "M") -> float:
    """``value`` in ``unit`` (no unit: ``default``) as MiB, which the facts call MB."""
    return kib(value, unit, default=default) / 1024
