"""Result types shared by every remedy generator.

A generator returns either a :class:`Remedy` (what to apply, and how to undo
it) or a :class:`NoRemedy` (why nothing can be generated from these facts).
Generators never raise for "cannot help here": a finding page shows the reason
instead of an error.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


def require_names(pattern: re.Pattern[str], names: Iterable[str], what: str) -> None:
    """Raise ValueError (``what: 'name'``) for the first of ``names`` that
    ``pattern`` does not match: a name goes into a shell command, a file path or
    an SQL statement only when it is one.

    >>> require_names(re.compile(r"^eth\\d$"), ["eth0", "eth0; rm"], "not a device")
    Traceback (most recent call last):
    ValueError: not a device: 'eth0; rm'
    """
    for name in names:
        if not pattern.match(name):
            raise ValueError(f"{what}: {name!r}")


@dataclass(frozen=True)
class Remedy:
    """One concrete change.

    ``text`` is what to apply (a file's content, SQL, or shell commands),
    ``path`` where it goes when it is a file, ``rollback`` how to undo it.

    >>> r = Remedy(key="sysctl", title="t", text="vm.zone_reclaim_mode = 1\\n", rollback="rm f")
    >>> r.ok, r.rollback
    (True, 'rm f')
    """

    key: str
    title: str
    text: str
    rollback: str
    path: str | None = None
    measures: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    disruption: str = "online"
    notes: tuple[str, ...] = ()
    # libvirt domains: a unified diff and the equivalent virsh commands
    diff: str = ""
    commands: tuple[str, ...] = ()
    original: str = ""
    patched: str = ""
    # libvirt domains: per measure slug, the part of the patch that measure
    # makes (XML fragment and its virsh commands), so a plan step can show one
    # measure at a time from the same placement; and the placement itself
    fragments: tuple[tuple[str, str], ...] = ()
    placement: Any = None

    def fragment(self, slug: str) -> str:
        """The part of this remedy that measure ``slug`` makes ("" if none)."""
        return dict(self.fragments).get(slug, "")

    # The generator's plan as values (settings, device, masks, unit ...), for
    # renderings that need more than the text: the Ansible playbook
    # (engine.remedies.playbook). Never shown as is.
    data: dict = field(default_factory=dict, compare=False)

    ok = True


@dataclass(frozen=True)
class NoRemedy:
    """Nothing can be generated; ``reason`` says why, for a human.

    >>> NoRemedy(key="libvirt:db01", reason="domain type is qemu, not kvm").ok
    False
    """

    key: str
    reason: str
    notes: tuple[str, ...] = field(default_factory=tuple)

    ok = False


RemedyResult = Remedy | NoRemedy
