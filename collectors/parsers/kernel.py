"""Kernel release and distribution -> :class:`KernelVersion`.

Any of these (alone or several in one text)::

    Linux db01 4.18.0-305.el8.x86_64 #1 SMP Thu Apr 29 08:54:30 EDT 2021 x86_64 x86_64 x86_64 GNU/Linux
    4.18.0-305.el8.x86_64
    Linux version 5.10.0-21-amd64 (debian-kernel@lists.debian.org) (gcc-10 ...) #1 SMP Debian
    [    0.000000] Linux version 5.1.7-1.el7.elrepo.x86_64 (mockbuild@Build64R7) ...
    PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
    CentOS Linux release 7.9.2009 (Core)
    Operating System: CentOS Linux 7 (Core)        (hostnamectl)
          Kernel: Linux 3.10.0-1160.el7.x86_64

``uname -a`` gives the third word, ``uname -r`` the whole line, /proc/version
(or the first dmesg line) the word after ``Linux version``, pt-summary's
``summary`` its ``kernel`` and ``release`` rows (its report's header: ``Kernel |``,
``Release |``); ``/etc/os-release`` gives ``PRETTY_NAME``
(else ``NAME`` + ``VERSION``), ``*-release`` files their one line.
``lines`` keys: ``release``, ``os_release``.
"""

from __future__ import annotations

import re

from collectors.facts import KernelVersion, ParseError
from collectors.parsers import register

_RELEASE = re.compile(r"^\d{1,3}\.\d{1,3}[\w.\-+~]{0,100}$")
_UNAME_A = re.compile(r"^\s*Linux\s+\S+\s+(\d{1,3}\.\d{1,3}[\w.\-+~]{0,100})(\s|$)")
# /proc/version, also as dmesg's first line ("[    0.000000] Linux version ...")
_PROC_VERSION = re.compile(
    r"^\s*(?:\[\s*\d{1,9}\.\d{1,9}\]\s*)?Linux version\s+(\d{1,3}\.\d{1,3}[\w.\-+~]{0,100})"
)
# pt-summary's "summary" file: "kernel    5.1.7-1.el7.x86_64" / "release    CentOS Linux release 7.9"
_PT_KERNEL = re.compile(r"^kernel\s+(\d{1,3}\.\d{1,3}[\w.\-+~]{0,100})\s*$")
_PT_RELEASE = re.compile(r"^release\s+(\S.{1,100})$")
# the header of pt-summary's report: "     Kernel | 2.6.18-274.el5", "    Release | CentOS ..."
_PT_REPORT_KERNEL = re.compile(r"^\s{0,12}Kernel \| (\d{1,3}\.\d{1,3}[\w.\-+~]{0,100})\s*$")
_PT_REPORT_RELEASE = re.compile(r"^\s{0,12}Release \| (\S.{1,100})$")
_PT_REPORT_HEADER = re.compile(
    r"^\s{0,12}Platform \| \w[^\n]{0,40}\n(?:[^\n]{0,200}\n){0,4}?\s{0,12}Kernel \| \d", re.M
)
# hostnamectl: "Operating System: CentOS Linux 7 (Core)", "Kernel: Linux 3.10.0-1160.el7.x86_64"
_HOSTNAMECTL_OS = re.compile(r"^Operating System:\s*(\S.{0,100})$")
_HOSTNAMECTL_KERNEL = re.compile(r"^Kernel:\s*Linux\s+(\d{1,3}\.\d{1,3}[\w.\-+~]{0,100})$")
_OS_KV = re.compile(r"^\s*(PRETTY_NAME|NAME|VERSION)=(.*)$")
_DISTRO = re.compile(r"^(\S.{1,60}? release \d[\w.]{0,40}(?: \(.{1,40}\))?)$")


def _detect(head: str) -> bool:
    return (
        ("PRETTY_NAME=" in head and re.search(r"^PRETTY_NAME=", head, re.M) is not None)
        or _UNAME_A.match(head.strip().splitlines()[0] if head.strip() else "") is not None
        or ("Kernel |" in head and _PT_REPORT_HEADER.search(head) is not None)
    )


@register(
    "kernel",
    commands=(
        r"^uname(\s|$)",
        r"^hostnamectl(\s|$)",
        r"cat\s+/etc/(os|redhat|centos|system)-release",
        r"cat\s+/proc/version",
        r'^pt-summary section "Percona Toolkit System Summary Report"',
    ),
    paths=(
        r"(^|/)uname(_-a)?(\.txt)?$",
        r"etc/os-release$",
        r"etc/(redhat|centos|system)-release$",
        r"proc/version$",
    ),
    detect=_detect,
    priority=1,
)
def parse_kernel(text: str) -> KernelVersion:
    """Parse uname / os-release / hostnamectl style text.

    Sample input::

        Linux db01 4.18.0-305.el8.x86_64 #1 SMP Thu Apr 29 08:54:30 EDT 2021 x86_64 GNU/Linux
        PRETTY_NAME="Red Hat Enterprise Linux 8.4 (Ootpa)"
    """
    out = KernelVersion()
    os_kv: dict[str, tuple[str, int]] = {}  # os-release's KEY=value lines: (value, line)
    for idx, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not (out.release is None and _read_release(out, line, stripped, idx)):
            _read_os(out, os_kv, line, stripped, idx)
    _read_os_release_file(out, os_kv)
    if out.release is None and out.os_release is None:
        raise ParseError("no kernel release or OS release found")
    return out


def _read_release(out: KernelVersion, line: str, stripped: str, idx: int) -> bool:
    """Whether line ``idx`` names the kernel release (read into ``out``)."""
    release = _release_named(line, stripped)
    if release is None:
        return False
    out.release = release
    out.lines["release"] = idx
    return True


def _release_named(line: str, stripped: str) -> str | None:
    """The kernel release a line names (uname -a, /proc/version, pt-summary,
    hostnamectl, or a release alone); None when it names none."""
    m = (
        _UNAME_A.match(line)
        or _PROC_VERSION.match(line)
        or _PT_KERNEL.match(line)
        or _PT_REPORT_KERNEL.match(line)
        or _HOSTNAMECTL_KERNEL.match(stripped)
    )
    if m:
        return m.group(1)
    return stripped if _RELEASE.match(stripped) else None


def _read_os(
    out: KernelVersion, os_kv: dict[str, tuple[str, int]], line: str, stripped: str, idx: int
) -> None:
    """An os-release ``KEY=value`` line (kept in ``os_kv``), or a line naming the OS release."""
    m = _OS_KV.match(line)
    if m:
        os_kv.setdefault(m.group(1), (m.group(2).strip().strip("\"'").strip(), idx))
        return
    if out.os_release is not None or "=" in stripped:
        return
    m = _os_release_match(line, stripped)
    if m:
        out.os_release = m.group(1)
        out.lines["os_release"] = idx


def _os_release_match(line: str, stripped: str) -> re.Match[str] | None:
    """The match of a line naming the OS release (pt-summary, hostnamectl, a
    ``/etc/*-release`` line), its group 1 the release; None for another line."""
    m = _PT_RELEASE.match(stripped) or _HOSTNAMECTL_OS.match(stripped) or _PT_REPORT_RELEASE.match(line)
    return m or (_DISTRO.match(stripped) if len(stripped) <= 200 else None)


def _read_os_release_file(out: KernelVersion, os_kv: dict[str, tuple[str, int]]) -> None:
    """The OS release of os-release's lines: PRETTY_NAME, else NAME VERSION."""
    if "PRETTY_NAME" in os_kv:
        out.os_release, out.lines["os_release"] = os_kv["PRETTY_NAME"]
    elif "NAME" in os_kv and out.os_release is None:
        name, idx = os_kv["NAME"]
        version = os_kv.get("VERSION", ("", idx))[0]
        out.os_release = f"{name} {version}".strip()
        out.lines["os_release"] = idx
