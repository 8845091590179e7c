"""Values as configuration files and tools print them: booleans and integers
(sizes such as ``"432G"`` are :func:`collectors.sizes.size_bytes`). One parser
for each, shared by rules and remedies."""

from __future__ import annotations

from typing import Any


def as_bool(value: Any) -> bool | None:
    """MySQL/sysctl style booleans; ``None`` when unknown or not boolean."""
    if value is None:
        return None
    text = str(value).strip().strip("'\"").upper()
    if text in ("ON", "1", "YES", "TRUE", "ENABLED"):
        return True
    if text in ("OFF", "0", "NO", "FALSE", "DISABLED"):
        return False
    return None


def as_int(value: Any) -> int | None:
    if value is None:
        return None
    try:
        return int(str(value).strip().split()[0])
    except (ValueError, IndexError):
        return None
