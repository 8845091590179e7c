"""``/proc/meminfo``, whole or any subset of its lines -> :class:`Meminfo`.

Sample input::

    MemTotal:        8009912 kB
    MemFree:          538760 kB
    HugePages_Total:       0
    HugePages_Free:        0
    Hugepagesize:       2048 kB

Values are kB, except ``HugePages_*`` which are page counts, keys as printed.
Anything else in the text is skipped, so pt-summary's ``memory`` file (``free -b``
output followed by /proc/meminfo) parses too.

A grep of the file is still the file: ``grep -i huge /proc/meminfo`` prints a few
lines and no ``MemTotal``; they parse with ``origin="subset"`` (the whole file,
``origin="proc"``, has ``MemTotal`` and at least :data:`FULL_MIN_KEYS` keys). The
file-name prefix of ``grep KEY /proc/meminfo /other/file`` (``/proc/meminfo:MemTotal: ...``)
is dropped. Content detection needs a line whose key is one the kernel prints
(:data:`MEMINFO_KEYS`), so ``Key: 12 kB`` lines of other tools are not taken for
meminfo. ``lines`` keys: the meminfo keys.
"""

from __future__ import annotations

import re

from collectors.facts import ArtifactError, Meminfo, ParseError
from collectors.parsers import register

_LINE = re.compile(r"^(?:\S{0,200}meminfo:)?([A-Za-z][\w()]{0,40}):\s*(\d{1,20})(?:\s*kB)?\s*$")

# keys printed by /proc/meminfo (Linux 2.6 .. 6.x; fs/proc/meminfo.c and arch hooks)
MEMINFO_KEYS = frozenset(
    (
        "MemTotal",
        "MemFree",
        "MemAvailable",
        "Buffers",
        "Cached",
        "SwapCached",
        "Active",
        "Inactive",
        "Active(anon)",
        "Inactive(anon)",
        "Active(file)",
        "Inactive(file)",
        "Unevictable",
        "Mlocked",
        "HighTotal",
        "HighFree",
        "LowTotal",
        "LowFree",
        "MmapCopy",
        "SwapTotal",
        "SwapFree",
        "Zswap",
        "Zswapped",
        "Dirty",
        "Writeback",
        "AnonPages",
        "Mapped",
        "Shmem",
        "KReclaimable",
        "Slab",
        "SReclaimable",
        "SUnreclaim",
        "KernelStack",
        "ShadowCallStack",
        "PageTables",
        "SecPageTables",
        "Quicklists",
        "NFS_Unstable",
        "Bounce",
        "WritebackTmp",
        "CommitLimit",
        "Committed_AS",
        "VmallocTotal",
        "VmallocUsed",
        "VmallocChunk",
        "Percpu",
        "HardwareCorrupted",
        "AnonHugePages",
        "ShmemHugePages",
        "ShmemPmdMapped",
        "FileHugePages",
        "FilePmdMapped",
        "CmaTotal",
        "CmaFree",
        "Unaccepted",
        "Balloon",
        "HugePages_Total",
        "HugePages_Free",
        "HugePages_Rsvd",
        "HugePages_Surp",
        "Hugepagesize",
        "Hugetlb",
        "DirectMap4k",
        "DirectMap2M",
        "DirectMap1G",
        "DirectMap4M",
        "DirectMap64k",
        "DirectMap32M",
    )
)
FULL_MIN_KEYS = 15
_KEY_LINE = (
    r"[ \t]*(?:/proc/meminfo:)?(?:"
    + "|".join(re.escape(k) for k in sorted(MEMINFO_KEYS, key=len, reverse=True))
    + r"):[ \t]+\d{1,20}(?:[ \t]*kB)?[ \t]*$"
)
# the first line, or a newline and a line (searched for at C speed, where "^"
# would be tried at every character)
_DETECT_FIRST = re.compile(_KEY_LINE, re.M)
_DETECT_NEXT = re.compile(r"\n" + _KEY_LINE, re.M)


def _detect(head: str) -> bool:
    return _DETECT_FIRST.match(head) is not None or _DETECT_NEXT.search(head) is not None


def _cut_key(line: str) -> bool:
    """A meminfo key cut short by the paste (``Hugepage``, ``HugePages_Free:``)."""
    word = line.rstrip(":")
    return (
        bool(word) and ":" not in word and " " not in word and any(k.startswith(word) for k in MEMINFO_KEYS)
    )


def _is_new_key(key: str, values: dict[str, int]) -> bool:
    """A key not read yet; an unknown key before any known one is another tool's
    "Key: N" line."""
    if key in values:
        return False
    return key in MEMINFO_KEYS or bool(values) or "MemTotal" in key


@register(
    "meminfo",
    # cat/grep/awk/head ... of /proc/meminfo, piped or not ("cat /proc/meminfo | grep -i huge")
    commands=(r"(^|[\s|;<])/proc/meminfo\b(?!/)",),
    paths=(r"proc/meminfo$",),
    detect=_detect,
    needles=(":",),
    priority=10,
)
def parse_meminfo(text: str) -> Meminfo:
    """Parse ``/proc/meminfo`` or some of its lines.

    Sample input (``grep -i huge /proc/meminfo``)::

        AnonHugePages:    751616 kB
        HugePages_Total:       0
        Hugepagesize:       2048 kB
    """
    out = Meminfo()
    lines = text.splitlines()
    for idx, line in enumerate(lines, start=1):
        m = _LINE.match(line.strip())
        if m and _is_new_key(m.group(1), out.values):
            out.values[m.group(1)] = int(m.group(2))
            out.lines[m.group(1)] = idx
    if not out.values:
        raise ParseError("no /proc/meminfo lines (Key: N kB) found")
    last = lines[-1].strip()
    if not _LINE.match(last) and _cut_key(last):
        # the paste ends inside a key ("Hugepage" of "Hugepagesize:")
        out.errors.append(ArtifactError("", f"meminfo: last line cut: {last!r}", len(lines)))
    if "MemTotal" not in out.values or len(out.values) < FULL_MIN_KEYS:
        out.origin = "subset"
    return out
