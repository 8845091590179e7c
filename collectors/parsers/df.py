"""``df`` / ``df -k`` / ``df -h`` (and ``df -P``) -> :class:`DiskFree`.

Sample input::

    Filesystem           1K-blocks      Used  Available Use% Mounted on
    /dev/sda3             51343996  33182756   15523416  69% /
    /dev/mapper/vg0-data 7497910272 478950752 7018959520  7% /data/0

``-h`` sizes (``1.2T``, ``588G``, ``368M``) are converted to KiB (powers of
1024, rounded). A filesystem name too long for its column makes df wrap the
row: the numbers on the next line are joined back. Rows whose size field is
not a size are skipped. pt-summary's ``mounted_fs`` (the df row followed by
``on <mountpoint> type <fs> (<options>)``) parses as well. ``lines`` keys:
the mount points.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from collectors.facts import DiskFree, Filesystem, ParseError
from collectors.parsers import register

_SIZE = re.compile(r"^(\d{1,20}(?:[.,]\d{1,4})?)([KMGTPE]i?)?B?$")
_PCT = re.compile(r"^(\d{1,3})%$")
_POWER = {None: 0, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}


def _kb(token: str, human: bool) -> int | None:
    m = _SIZE.match(token)
    if not m:
        return None
    number = float(m.group(1).replace(",", "."))
    suffix = (m.group(2) or "")[:1] or None
    if suffix is None:
        return _plain_kb(number, human)
    unit: float = 1024 ** (_POWER[suffix] - 1)
    return round(number * unit)


def _plain_kb(number: float, human: bool) -> int:
    """The KiB of a size without a unit: 1K blocks (df, df -k) or, under -h, bytes."""
    return round(number / 1024) if human and number else int(number)


def _detect(head: str) -> bool:
    if "Filesystem" not in head and "文件系统" not in head:
        return False
    return (
        re.search(r"^Filesystem\s+(Type\s+)?(1K-blocks|1024-blocks|Size)\s+Used\s+Avail", head, re.M)
        is not None
        or re.search(r"^文件系统\s+(类型\s+)?(1K的块|大小)\s+已用\s+可用", head, re.M) is not None
    )


@register(
    "df",
    commands=(r"^df(\s|$)",),
    # sos: sos_commands/filesys/df_-al_-x_autofs; its "df -ali" sibling counts inodes, not space
    paths=(r"(^|/)(?!df\S*_-[a-z]*i[a-z]*(_|$))df(_-?\w+)*(\.txt)?$", r"(^|/)mounted_fs$"),
    detect=_detect,
    priority=5,
)
def parse_df(text: str) -> DiskFree:
    """Parse ``df`` / ``df -h`` / ``df -k`` / ``df -T`` output.

    Sample input::

        Filesystem           1K-blocks       Used  Available Use% Mounted on
        /dev/mapper/vg1-data 7497910272 4947433384 2550476888  66% /data/1
    """
    out = DiskFree()
    human, typed = _header_form(text)
    width = 7 if typed else 6
    for idx, tokens in _rows(text):
        if len(tokens) < width:
            continue
        filesystem = _filesystem([tokens[0], *tokens[2:]] if typed else tokens, human)
        if filesystem is not None:
            out.filesystems.append(filesystem)
            out.lines.setdefault(filesystem.mounted_on, idx)
    if not out.filesystems:
        raise ParseError("no df rows found")
    return out


def _header_form(text: str) -> tuple[bool, bool]:
    """(human, typed) of the header: sizes human-readable (``-h``), a Type column
    after the filesystem (``-T``); ParseError for ``df -i``, which counts inodes.
    coreutils' zh_CN headers: 文件系统 (Filesystem), 类型 (Type), 大小 (Size)."""
    if re.search(r"^(Filesystem|文件系统)\s+((Type|类型)\s+)?Inodes\s", text, re.M):
        raise ParseError("df -i reports inodes, not space")
    human = re.search(r"^(Filesystem|文件系统)\s+((Type|类型)\s+)?(Size|大小)\s", text, re.M) is not None
    typed = re.search(r"^(Filesystem|文件系统)\s+(Type|类型)\s", text, re.M) is not None
    return human, typed


def _rows(text: str) -> Iterator[tuple[int, list[str]]]:
    """(line number, cells) of each row below a header, a wrapped row joined back:
    a filesystem name alone on its line starts the row of the next line."""
    carry: str | None = None
    for idx, line in enumerate(text.splitlines(), start=1):
        tokens = line.split()
        if not tokens or tokens[0] in ("Filesystem", "文件系统"):
            carry = None
            continue
        if carry is not None:
            tokens = [carry, *tokens]
            carry = None
        if _name_alone(tokens):
            carry = tokens[0]
            continue
        yield idx, tokens


def _name_alone(tokens: list[str]) -> bool:
    """Whether a line is a filesystem name alone (a device path, a ``host:/export``),
    its row wrapped onto the next line."""
    return len(tokens) == 1 and ("/" in tokens[0] or ":" in tokens[0])


def _mount_point(rest: list[str]) -> str:
    """The mount point of a row's last cells: a mount point may hold spaces;
    pt-summary appends "on <dir> type <fs> (...)" to it."""
    return rest[0] if len(rest) > 1 and rest[1] == "on" else " ".join(rest)


def _filesystem(tokens: list[str], human: bool) -> Filesystem | None:
    """One row (without its Type cell); None when its size or use% is not one."""
    pct = _PCT.match(tokens[4])
    size = _kb(tokens[1], human)
    if size is None or not (pct or tokens[4] == "-"):
        return None
    return Filesystem(
        filesystem=tokens[0],
        mounted_on=_mount_point(tokens[5:]),
        size_kb=size,
        used_kb=_kb(tokens[2], human),
        available_kb=_kb(tokens[3], human),
        use_pct=float(pct.group(1)) if pct else None,
    )
