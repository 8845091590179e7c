"""``sysctl -a`` output and sysctl.conf / sysctl.d files -> :class:`Sysctl`.

Sample input::

    # /etc/sysctl.d/99-numa.conf
    vm.zone_reclaim_mode = 0
    kernel.numa_balancing=1
    ; a comment in the older style
    -net.ipv4.conf.all.rp_filter = 1
    sysctl: permission denied on key 'fs.protected_regular'

Comments (``#``, ``;``), blank lines, ``sysctl:`` error lines and any line
without ``=`` are skipped. A leading ``-`` (systemd's "ignore errors") is
dropped from the key. Values are kept as raw strings with inner whitespace
(``kernel.printk = 4\\t4\\t1\\t7``); a key that appears twice keeps the last
value, as sysctl itself would. ``lines`` keys: the sysctl names.
"""

from __future__ import annotations

import re

from collectors.facts import ParseError, Sysctl
from collectors.parsers import register

# the value is trimmed in code: a lazy group before "\s*$" backtracks quadratically on long blank runs
# (the key is greedy: its characters are neither spaces nor "=", so it ends where a lazy one would)
_LINE = re.compile(r"^\s*-?([A-Za-z0-9_][\w.\-/*:]{0,200})\s*=(.*)$")


_SETTING = re.compile(r"^\s*(kernel|vm|net|fs|dev|user|abi|debug|crypto|sunrpc)\.\S+\s*=")


# sysctl's own complaints among its settings (``sysctl -a`` run as a user)
_COMPLAINT = re.compile(
    r"^\s*sysctl: (?:reading key|permission denied on key|cannot stat|error reading key|setting key)\b"
)


def _detect(head: str) -> bool:
    """Three settings (sysctl's own complaints about keys it could not read
    counted with them), or a short file (a /etc/sysctl.d/ drop-in such as
    ``vm.zone_reclaim_mode = 1``) made only of settings and comments.

    >>> _detect('sysctl: reading key "net.ipv6.conf.all.stable_secret"\\nvm.overcommit_ratio = 50\\nx')
    False
    >>> _detect('sysctl: reading key "net.ipv6.conf.all.stable_secret"\\n'
    ...         'sysctl: reading key "net.ipv6.conf.lo.stable_secret"\\nvm.overcommit_ratio = 50\\nx')
    True
    """
    if "=" not in head:
        return False  # no setting
    lines = [line for line in head.splitlines() if line.strip()]
    hits = sum(1 for line in lines if _SETTING.match(line))
    if hits and hits + sum(1 for line in lines if _COMPLAINT.match(line)) >= 3:
        return True
    return hits >= 1 and all(_setting_or_comment(line) for line in lines)


def _setting_or_comment(line: str) -> bool:
    """Whether a line is a sysctl setting or a comment (``#``, ``;``)."""
    return bool(_SETTING.match(line)) or line.lstrip().startswith(("#", ";"))


def _may_set(stripped: str) -> bool:
    """Not blank, a comment or sysctl's own complaint, and holding an ``=``."""
    return (
        bool(stripped) and stripped[0] not in "#;" and not stripped.startswith("sysctl:") and "=" in stripped
    )


def _value(raw: str) -> str:
    """A setting's value: what follows its ``=``, trailing space trimmed and the
    one separating space dropped ("key = value": more is data)."""
    value = raw.rstrip()
    return value[1:] if value.startswith(" ") else value


@register(
    "sysctl",
    commands=(r"^sysctl\s+(-a|--all|-A)", r"cat\s+\S*sysctl(\.conf|\.d/\S+)"),
    paths=(
        r"sos_commands/kernel/sysctl_-a",
        r"sysctl\.conf$",
        r"sysctl\.d/.*\.conf$",
        r"(^|/)sysctl(_-a)?(\.txt)?$",
    ),
    detect=_detect,
    priority=5,
)
def parse_sysctl(text: str) -> Sysctl:
    """Parse ``sysctl -a`` output or a sysctl.conf file.

    Sample input::

        vm.zone_reclaim_mode = 0
        kernel.numa_balancing=1
        # comments and "sysctl: permission denied ..." lines are skipped
    """
    out = Sysctl()
    for idx, line in enumerate(text.splitlines(), start=1):
        m = _LINE.match(line) if _may_set(line.strip()) else None
        if not m:
            continue
        out.values[m.group(1)] = _value(m.group(2))
        out.setting_count += 1
        out.lines[m.group(1)] = idx
    if not any("." in key for key in out.values):
        # sysctl names are dotted paths; "Units = sectors of 1 * 512" is not one
        raise ParseError("no 'dotted.key = value' sysctl settings found")
    return out
