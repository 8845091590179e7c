"""Sizes written with a binary unit (``16GB``, ``1024KiB``, ``3.9G``, ``kB``), as
the kernel and its tools mean them: powers of 1024, whatever the spelling.

    >>> kib(16, "GB"), mb(1024, "KiB"), mb(512, None)
    (16777216, 1.0, 512.0)
"""

from __future__ import annotations

# KiB per unit, by the unit's first letter (B, K/k, M, G, T, P)
KIB_PER_UNIT = {"B": 1 / 1024, "K": 1, "M": 1024, "G": 1024**2, "T": 1024**3, "P": 1024**4}


def kib(value: float, unit: str | None, *, default: str = "K") -> float:
    """``value`` in ``unit`` (no unit: ``default``) as KiB."""
    return value * KIB_PER_UNIT[(unit or default)[0].upper()]


def mb(value: float, unit: str | None, *, default: str = "M") -> float:
    """``value`` in ``unit`` (no unit: ``default``) as MiB, which the facts call MB."""
    return kib(value, unit, default=default) / 1024
