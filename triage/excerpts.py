"""Excerpts: the raw lines around every line a finding cites, kept with the
analysis when it is written, so that the report shows them without re-opening
archives.

The upload the analysis read gives its lines from that one read
(:class:`collectors.archive.LoadedUpload`); another host of the cluster whose
findings cite its own upload is read back from storage, before the analysis
takes any lock.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

from django.core.files.storage import default_storage

from collectors import archive
from collectors.archive import LoadedUpload
from engine.rules import artifact_file
from triage.models import Snapshot
from triage.storage import stored_name

log = logging.getLogger(__name__)


EXCERPT_CONTEXT = 2  # lines shown before and after the cited line


EXCERPT_LINE_CHARS = 300

# (artifact, line) wanted -> the lines of the file each cites
CitedLines = Callable[[set[tuple[str, int]]], dict[tuple[str, int], list[str]]]


def cited_excerpts(findings, sources: dict[str, CitedLines]) -> dict[tuple[str, str, int], list[dict]]:
    """The raw lines around every cited (artifact, line) of the hosts in
    ``sources`` (label -> where its lines come from: :func:`reading_lines` or
    :func:`stored_lines`). Best effort: an unreadable source just has no
    excerpt."""
    wanted: dict[str, set[tuple[str, int]]] = {}
    for f in findings:
        for e in f.evidence:
            label = e.host or f.host or ""
            if e.artifact and isinstance(e.line, int) and e.line > 0 and label in sources:
                wanted.setdefault(label, set()).add((e.artifact, e.line))
    out: dict[tuple[str, str, int], list[dict]] = {}
    for label, items in wanted.items():
        try:
            texts = sources[label](items)
        except Exception:
            log.warning("could not read excerpts of %s", label, exc_info=True)
            continue
        for artifact, line in items:
            lines = texts.get((artifact, line))
            if not lines or line > len(lines):
                continue
            first, last = max(1, line - EXCERPT_CONTEXT), min(len(lines), line + EXCERPT_CONTEXT)
            out[(label, artifact, line)] = [
                {"line": n, "text": lines[n - 1][:EXCERPT_LINE_CHARS], "hit": n == line}
                for n in range(first, last + 1)
            ]
    return out


def _source_file(host, artifact: str, line: int) -> str | None:
    """The file (base name) the cited artifact of ``host`` was read from."""
    for item in getattr(host, "artifacts", None) or []:
        if not isinstance(item, dict) or artifact not in (item.get("source"), item.get("name")):
            continue
        start, count = item.get("start_line"), item.get("lines")
        if isinstance(start, int) and isinstance(count, int) and not start <= line <= start + count:
            continue
        return artifact_file(item)
    return None


def reading_lines(reading: LoadedUpload, host) -> CitedLines:
    """The cited lines of ``host`` from the read that produced it: the upload,
    or the added artifact (a file read with it) an artifact was read from."""
    added = {os.path.basename(file.name) for file in reading.files[1:]}

    def lines(items: set[tuple[str, int]]) -> dict[tuple[str, int], list[str]]:
        in_added: dict[tuple[str, int], str] = {}
        if added:
            for artifact, line in items:
                source = _source_file(host, artifact, line)
                if source in added:
                    in_added[(artifact, line)] = source
        main = reading.artifact_lines({a for (a, n) in items if (a, n) not in in_added})
        out = {(a, n): main[a] for (a, n) in items if (a, n) not in in_added and a in main}
        for key, source in in_added.items():
            text = reading.file_lines(source)
            if text is not None:
                out[key] = text
        return out

    return lines


def stored_lines(snapshot: Snapshot) -> CitedLines:
    """The cited lines of another host of the cluster, read back from its
    stored upload (``collectors.archive.artifact_lines``)."""

    def lines(items: set[tuple[str, int]]) -> dict[tuple[str, int], list[str]]:
        with default_storage.open(stored_name(snapshot.file), "rb") as fh:
            found = archive.artifact_lines(fh, {a for a, _n in items})
        return {(a, n): found[a] for (a, n) in items if a in found}

    return lines
