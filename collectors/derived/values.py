"""Values as configuration files and tools print them: booleans, integers and
sizes (``"432G"``). One parser for each, shared by rules and remedies."""

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


_SIZE_UNITS = {"": 1, "B": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


def size_bytes(value: Any) -> int | None:
    """``"432G"``, ``"463856467968"``, ``"8M"`` -> bytes."""
    if value is None:
        return None
    text = str(value).strip().upper().rstrip("B").replace("I", "")
    if not text:
        return None
    unit = text[-1] if text[-1] in _SIZE_UNITS else ""
    number = text[:-1] if unit else text
    try:
        return int(float(number) * _SIZE_UNITS[unit])
    except ValueError:
        return None
