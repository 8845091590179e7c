"""Known issues by version: a case may state the kernel, database and
hypervisor versions it applies to (``Case.applies_to``), and a snapshot whose
versions fall in those ranges is told so (``kb.similarity.known_issues_for``).

A range is a comma-separated list of constraints on a version, each an
operator and a version (``>=3.5, <3.10``; ``>=2.6.32-303, <2.6.32-642``); a
bare version matches itself and every version it prefixes (``10.4`` matches
``10.4.14-MariaDB``). Versions compare by their numbers in order, so a
distribution suffix does not get in the way (``2.6.32-358.el6`` is
2.6.32.358.6).
"""

from __future__ import annotations

import re
from typing import Any

KINDS = ("kernel", "database", "hypervisor")
_CONSTRAINT = re.compile(r"^\s*(>=|<=|==|=|>|<)?\s*([0-9][^\s,]*)\s*$")


def version_key(text: str) -> tuple[int, ...]:
    """The numbers of a version, in order.

    >>> version_key("2.6.32-358.el6.x86_64")
    (2, 6, 32, 358, 6, 86, 64)
    >>> version_key("10.4.14-MariaDB-log")
    (10, 4, 14)
    """
    return tuple(int(n) for n in re.findall(r"\d+", text or ""))


def _compare(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    width = max(len(a), len(b))
    a, b = a + (0,) * (width - len(a)), b + (0,) * (width - len(b))
    return (a > b) - (a < b)


def valid_range(spec: str) -> bool:
    """Whether ``spec`` is a range this module reads (empty is not)."""
    parts = [p for p in (spec or "").split(",") if p.strip()]
    return bool(parts) and all(_CONSTRAINT.match(p) for p in parts)


def in_range(version: str, spec: str) -> bool:
    """Whether ``version`` satisfies every constraint of ``spec``.

    >>> in_range("2.6.32-358.el6.x86_64", ">=2.6.32-303, <2.6.32-642")
    True
    >>> in_range("3.10.0-1160.el7", ">=3.5, <3.10")
    False
    >>> in_range("10.4.14-MariaDB", "10.4")
    True
    """
    have = version_key(version)
    if not have or not valid_range(spec):
        return False
    for part in (p for p in spec.split(",") if p.strip()):
        match = _CONSTRAINT.match(part)
        assert match is not None  # valid_range checked it
        op, bound = match.group(1) or "", version_key(match.group(2))
        if op in ("", "=", "=="):
            if have[: len(bound)] != bound:
                return False
            continue
        order = _compare(have, bound)
        if (op == ">=" and order < 0) or (op == ">" and order <= 0):
            return False
        if (op == "<=" and order > 0) or (op == "<" and order >= 0):
            return False
    return True


def snapshot_versions(facts: Any) -> dict[str, list[str]]:
    """Kernel releases, database and hypervisor versions a SnapshotFacts holds."""
    found: dict[str, list[str]] = {kind: [] for kind in KINDS}
    for host in getattr(facts, "hosts", None) or []:
        kernel = getattr(host, "kernel", None)
        if kernel is not None and kernel.release:
            found["kernel"].append(kernel.release)
        database = getattr(host, "database", None)
        if database is not None and getattr(database, "version", None):
            found["database"].append(database.version)
        virsh = getattr(host, "virsh_version", None)
        if virsh is not None and virsh.hypervisor_version:
            found["hypervisor"].append(virsh.hypervisor_version)
    return {kind: sorted(set(values)) for kind, values in found.items() if values}


def version_matches(applies_to: dict, versions: dict[str, list[str]]) -> list[dict]:
    """The version facts that put a snapshot in a case's ranges: one
    ``{"kind", "version", "range"}`` per range the snapshot has a version for.
    Empty when a range is contradicted (the snapshot's version is known and
    outside it) or when the snapshot shows none of the versions the case
    names."""
    matches = []
    for kind in KINDS:
        spec = (applies_to or {}).get(kind)
        if not spec or kind not in versions:
            continue
        inside = [v for v in versions[kind] if in_range(v, spec)]
        if not inside:
            return []
        matches.append({"kind": kind, "version": inside[0], "range": spec})
    return matches
