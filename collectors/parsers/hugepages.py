"""Huge page settings -> :class:`HugePages`.

Several one-line sysfs/procfs files map here, so besides the generic
``hugepages`` kind (which takes an optional ``name=`` hint) three kinds are
registered by path, one per file:

* ``thp_enabled``: ``/sys/kernel/mm/transparent_hugepage/enabled``
  (also RHEL 6's ``redhat_transparent_hugepage``)::

      always [madvise] never

* ``thp_defrag``: ``/sys/kernel/mm/transparent_hugepage/defrag``::

      always defer defer+madvise [madvise] never

* ``nr_hugepages``: ``/proc/sys/vm/nr_hugepages`` (the default page size's
  count; per-size and per-node sysfs files are left to ``/proc/meminfo``)::

      64

``hugepages`` without a hint also reads a combined dump such as
``grep -r . /sys/kernel/mm/transparent_hugepage/`` (``path:value`` lines).
The bracketed word is the active setting. ``lines`` keys: the field names.
"""

from __future__ import annotations

import re

from collectors.facts import HugePages, ParseError
from collectors.parsers import register

_CHOICE = re.compile(r"\[([a-z+_]{1,32})\]")
_NR_LINE = re.compile(r"^(?:vm\.nr_hugepages\s*=\s*)?(\d{1,12})$")
_THP_LINE = re.compile(
    r"(\[?(always|madvise|never|defer|defer\+madvise|within_size|advise|deny|force)\]?\s*){2,8}"
)
_SIZE_IN_PATH = re.compile(r"hugepages-(\d{1,9})kB")


def _selected(line: str) -> str | None:
    m = _CHOICE.search(line)
    return m.group(1) if m else None


def _one_line_file(text: str) -> tuple[int, str]:
    lines = [(idx, line.strip()) for idx, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if not lines:
        raise ParseError("empty huge page setting file")
    if len(lines) > 2:
        # these sysfs/procfs files hold one line (a pasted block may add a prompt)
        raise ParseError(f"expected a one-line setting file, got {len(lines)} lines")
    return lines[-1]


def _apply(out: HugePages, target: str, value: str, idx: int) -> None:
    if target in ("thp_enabled", "thp_defrag"):
        if _THP_LINE.fullmatch(value.strip()):
            chosen = _selected(value)
            if chosen and getattr(out, target) is None:
                setattr(out, target, chosen)
                out.lines[target] = idx
    elif target == "nr_hugepages":
        m = _NR_LINE.match(value.strip())
        if m and out.nr_hugepages is None:
            out.nr_hugepages = int(m.group(1))
            out.lines["nr_hugepages"] = idx


def _parse(text: str, name: str | None) -> HugePages:
    out = HugePages()
    if name is not None:
        idx, line = _one_line_file(text)
        _apply(out, name, line, idx)
    elif not _read_dump(out, text):
        # a lone file without a hint: tell it by its content
        idx, line = _one_line_file(text)
        if _CHOICE.search(line):
            _apply(out, "thp_defrag" if "defer" in line else "thp_enabled", line, idx)
        else:
            _apply(out, "nr_hugepages", line, idx)
    if out.thp_enabled is None and out.thp_defrag is None and out.nr_hugepages is None:
        raise ParseError("no huge page setting found")
    return out


def _read_dump(out: HugePages, text: str) -> int:
    """The "path:value" lines of a combined dump (``grep -r . /sys/kernel/mm/...``),
    each path naming its file; how many there were."""
    dump_lines = 0
    for idx, line in enumerate(text.splitlines(), start=1):
        path, sep, value = line.partition(":")
        if not sep or "/" not in path:
            continue
        dump_lines += 1
        if path.endswith("transparent_hugepage/enabled"):
            _apply(out, "thp_enabled", value, idx)
        elif path.endswith("transparent_hugepage/defrag"):
            _apply(out, "thp_defrag", value, idx)
        elif path.endswith("/nr_hugepages"):
            _read_nr_hugepages(out, path, value, idx)
    return dump_lines


def _read_nr_hugepages(out: HugePages, path: str, value: str, idx: int) -> None:
    """A ``.../hugepages-<size>kB/nr_hugepages`` line: the count, and the page size
    its path names."""
    before = out.nr_hugepages
    _apply(out, "nr_hugepages", value, idx)
    size = _SIZE_IN_PATH.search(path)
    if size and before is None and out.nr_hugepages is not None:
        out.hugepagesize_kb = int(size.group(1))
        out.lines["hugepagesize_kb"] = idx


def _detect(head: str) -> bool:
    return (
        re.fullmatch(r"\s*(always|madvise|never|\[always\]|\[madvise\]|\[never\])( [\w\[\]+]+){1,5}\s*", head)
        is not None
    )


@register("hugepages", paths=(r"transparent_hugepage/?$",), detect=_detect)
def parse_hugepages(text: str, *, name: str | None = None) -> HugePages:
    """Parse huge page settings; ``name`` is ``thp_enabled``, ``thp_defrag`` or
    ``nr_hugepages`` when the caller knows which file the text came from."""
    if name not in (None, "thp_enabled", "thp_defrag", "nr_hugepages"):
        raise ParseError(f"unknown huge page file hint {name!r}")
    return _parse(text, name)


@register(
    "thp_enabled",
    commands=(r"cat\s+/sys/kernel/mm/(redhat_)?transparent_hugepage/enabled",),
    paths=(r"(redhat_)?transparent_hugepage/enabled$",),
)
def parse_thp_enabled(text: str) -> HugePages:
    """``/sys/kernel/mm/transparent_hugepage/enabled``: ``always [madvise] never``."""
    return _parse(text, "thp_enabled")


@register(
    "thp_defrag",
    commands=(r"cat\s+/sys/kernel/mm/(redhat_)?transparent_hugepage/defrag",),
    paths=(r"(redhat_)?transparent_hugepage/defrag$",),
)
def parse_thp_defrag(text: str) -> HugePages:
    """``/sys/kernel/mm/transparent_hugepage/defrag``: ``always defer [madvise] never``."""
    return _parse(text, "thp_defrag")


@register(
    "nr_hugepages",
    commands=(r"cat\s+/proc/sys/vm/nr_hugepages\b", r"sysctl\s+(-n\s+)?vm\.nr_hugepages\b"),
    # Only the default-size count: the per-size (hugepages-1048576kB/...) and
    # per-node files count other page sizes or one node, not the host total.
    paths=(r"(^|/)proc/sys/vm/nr_hugepages$", r"^nr_hugepages$"),
)
def parse_nr_hugepages(text: str) -> HugePages:
    """``/proc/sys/vm/nr_hugepages``: a page count such as ``64``."""
    return _parse(text, "nr_hugepages")
