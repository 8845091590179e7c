"""``/proc/cmdline`` -> :class:`KernelCmdline`.

Sample input::

    BOOT_IMAGE=/vmlinuz-4.18.0 root=/dev/mapper/rhel-root ro isolcpus=managed_irq,domain,2-15
    nohz_full=2-15 default_hugepagesz=1G hugepages=64 quiet

(one line in the file; wrapped here).

Parameters are split on whitespace (double-quoted values may hold spaces);
``key=value`` becomes ``params[key] = value``, a bare flag ``params[flag] = None``.
Everything after a lone ``--`` is for init and is not a kernel parameter.
A repeated parameter keeps its last value (the kernel's own rule for most
of them). ``lines`` keys: ``raw`` (the line the command line was read from).
"""

from __future__ import annotations

import re

from collectors.facts import KernelCmdline, ParseError
from collectors.parsers import register

_TOKEN = re.compile(r'(?:[^\s"]+|"[^"]*")+')
_KEY = re.compile(r"^[A-Za-z0-9_][\w.\-]{0,100}$")


_KNOWN = re.compile(
    r"(?:^|\s)(BOOT_IMAGE|root|console|ro|rw|quiet|panic|isolcpus|nohz_full|crashkernel|rhgb|mitigations"
    r"|hugepages|hugepagesz|default_hugepagesz|transparent_hugepage|intel_iommu|iommu|numa_balancing|init)(?==|\s|$)"
)


def _detect(head: str) -> bool:
    lines = head.strip().splitlines()
    if len(lines) != 1:
        return False
    return len(set(_KNOWN.findall(lines[0]))) >= 2


def _params(raw: str) -> dict[str, str | None]:
    """``key=value`` (quotes dropped) and bare ``key`` parameters, up to ``--``
    (what follows is init's)."""
    params: dict[str, str | None] = {}
    for token in _TOKEN.findall(raw):
        if token == "--":  # noqa: S105 - the end-of-options marker, not a secret
            break
        key, sep, value = token.partition("=")
        if _KEY.match(key):
            params[key] = value.strip('"') if sep else None
    return params


@register(
    "cmdline",
    commands=(r"cat\s+/proc/cmdline",),
    paths=(r"proc/cmdline$",),
    detect=_detect,
    priority=5,
)
def parse_cmdline(text: str) -> KernelCmdline:
    """Parse a kernel command line.

    Sample input::

        BOOT_IMAGE=/vmlinuz-4.18.0 root=/dev/sda1 ro isolcpus=2-15 nohz_full=2-15 quiet
    """
    lines = [(i, ln.strip()) for i, ln in enumerate(text.splitlines(), start=1) if ln.strip()]
    if not lines:
        raise ParseError("empty kernel command line")
    if len(lines) > 3:
        # /proc/cmdline is one line (a pasted block may add a prompt line)
        raise ParseError(f"a kernel command line is one line, got {len(lines)} lines")
    # a pasted transcript may keep the prompt line; the command line is the longest line
    idx, raw = max(lines, key=lambda item: len(item[1].split()))
    out = KernelCmdline(raw=raw, params=_params(raw))
    out.lines["raw"] = idx
    if not any(value is not None for value in out.params.values()):
        # every real command line carries root=, BOOT_IMAGE= or some key=value
        raise ParseError("no key=value kernel parameters found")
    return out
