"""TuneD's profile: ``tuned-adm active``, ``tuned-adm list`` and
``/etc/tuned/active_profile`` -> :class:`TunedProfile`.

Sample input (``tuned-adm list`` on CentOS 7, NewHsu/CentOS-7)::

    Available profiles:
    - balanced                    - General non-specialized tuned profile
    - virtual-guest               - Optimize for running inside a virtual guest
    - virtual-host                - Optimize for running KVM guests
    Current active profile: virtual-guest

When the daemon is not running tuned-adm prints the preset instead
("It seems that tuned daemon is not running, preset profile is not
activated." then "Preset profile: virtual-guest"): the profile is then not
applied. ``/etc/tuned/active_profile`` is one line of profile names (TuneD
merges several, e.g. ``virtual-guest powersave``). sosreport keeps the
commands as ``sos_commands/tuned/tuned-adm_active`` and ``tuned-adm_list``
and copies ``/etc/tuned``. ``lines`` keys: ``profiles``.
"""

from __future__ import annotations

import re

from collectors.facts import ParseError, TunedProfile
from collectors.parsers import register

_NAME = re.compile(r"^[A-Za-z0-9][\w.+-]{0,80}$")
_ACTIVE = re.compile(r"^Current active profile:\s*(?P<names>.*)$")
_PRESET = re.compile(r"^Preset profile:\s*(?P<names>.*)$")
_NONE = re.compile(r"^No current active profile\.?$")
_LISTED = re.compile(r"^-\s+(?P<name>\S+)")


def _names(text: str) -> list[str]:
    names = text.split()
    if not names or not all(_NAME.match(n) for n in names):
        raise ParseError(f"not TuneD profile names: {text[:80]!r}")
    return names


def _detect(head: str) -> bool:
    lines = [ln.strip() for ln in head.splitlines() if ln.strip()]
    return any(_ACTIVE.match(ln) or _PRESET.match(ln) for ln in lines[:80]) or (
        bool(lines) and lines[0] == "Available profiles:"
    )


@register(
    "tuned_adm",
    commands=(r"^(?:sudo\s+)?tuned-adm\s+(?:active|list)\b",),
    paths=(r"sos_commands/tuned/tuned-adm_(?:active|list)$",),
    detect=_detect,
    needles=("Current active profile:", "Preset profile:", "Available profiles:"),
    priority=5,
    prose_lines=(
        r"Available profiles:",
        # a profile and its summary ("- balanced   - General non-specialized tuned profile")
        r"- [a-z0-9][\w.+-]{0,80} {2,}- \S.*",
        r"Current active profile:.*",
        r"Current post-loaded profile:.*",
        r"Preset profile:.*",
        r"No current active profile\.?",
        r"It seems that tuned daemon is not running.*",
    ),
)
def parse_tuned_adm(text: str) -> TunedProfile:
    """Parse ``tuned-adm active`` or ``tuned-adm list`` (a list cut before its
    status line gives the available profiles only: ``applied`` stays None).

    Sample input::

        Current active profile: oracle
    """
    out = TunedProfile()
    said = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        listed = _LISTED.match(line)
        if listed:
            out.available.append(listed.group("name"))
        elif _read_status(out, line, said=said):
            said = True
            out.lines["profiles"] = number
    if not said and not out.available:
        raise ParseError("no profile list and no 'Current active profile' or 'Preset profile' line")
    return out


def _read_status(out: TunedProfile, line: str, *, said: bool) -> bool:
    """Whether ``line`` says the profiles (active; preset, unless a status was
    already said) or that none is active; what it says goes to ``out``."""
    if m := _ACTIVE.match(line):
        out.profiles, out.applied = _names(m.group("names")), True
    elif (m := _PRESET.match(line)) and not said:
        out.profiles, out.applied = _names(m.group("names")), False
    elif _NONE.match(line):
        out.applied = False
    else:
        return False
    return True


@register(
    "tuned_active_profile",
    commands=(r"cat\s+/etc/tuned/active_profile\b",),
    paths=(r"etc/tuned/active_profile$",),
)
def parse_active_profile(text: str) -> TunedProfile:
    """Parse ``/etc/tuned/active_profile``: the profiles TuneD was last told to
    use (applied only if the daemon runs).

    Sample input::

        virtual-guest
    """
    lines = [(i, ln.strip()) for i, ln in enumerate(text.splitlines(), start=1) if ln.strip()]
    if len(lines) != 1:
        raise ParseError(f"active_profile is one line, got {len(lines)}")
    number, line = lines[0]
    out = TunedProfile(profiles=_names(line))
    out.lines["profiles"] = number
    return out
