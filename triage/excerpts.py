"""Excerpts: the raw lines around every line a finding cites, read back from
the stored uploads when an analysis is written, so that the report shows them
without re-opening archives.
"""

from __future__ import annotations

import logging
import os

from django.conf import settings
from django.core.files.storage import default_storage

from collectors import archive
from collectors.decoding import decode_bytes
from engine.rules import artifact_file
from triage.models import Snapshot, SnapshotArtifact
from triage.storage import stored_name

log = logging.getLogger(__name__)


EXCERPT_CONTEXT = 2  # lines shown before and after the cited line


EXCERPT_LINE_CHARS = 300


def cited_excerpts(
    findings, snapshots_by_label: dict[str, Snapshot], hosts: dict | None = None
) -> dict[tuple[str, str, int], list[dict]]:
    """The raw lines around every cited (artifact, line), read back from the
    stored uploads, so the report can show them without re-opening archives.
    ``hosts`` (label -> HostFacts) tells which file of a snapshot with added
    evidence an artifact was read from. Best effort: an unreadable source just
    has no excerpt."""
    wanted: dict[str, set[tuple[str, int]]] = {}
    for f in findings:
        for e in f.evidence:
            label = e.host or f.host or ""
            if e.artifact and isinstance(e.line, int) and e.line > 0 and label in snapshots_by_label:
                wanted.setdefault(label, set()).add((e.artifact, e.line))
    out: dict[tuple[str, str, int], list[dict]] = {}
    for label, items in wanted.items():
        try:
            texts = _cited_lines(snapshots_by_label[label], items, (hosts or {}).get(label))
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


def _cited_lines(snapshot: Snapshot, items: set[tuple[str, int]], host) -> dict[tuple[str, int], list[str]]:
    """(artifact, line) -> the lines of the file it cites: the upload, or the
    added artifact it was read from."""
    added = {os.path.basename(stored_name(a.file)): a for a in snapshot.added_artifacts.all()}
    in_added: dict[tuple[str, int], SnapshotArtifact] = {}
    if added and host is not None:
        for artifact, line in items:
            source = _source_file(host, artifact, line)
            if source in added:
                in_added[(artifact, line)] = added[source]
    main = _artifact_lines(snapshot, {a for (a, n) in items if (a, n) not in in_added})
    out = {(a, n): main[a] for (a, n) in items if (a, n) not in in_added and a in main}
    limit = settings.CASEBOOK_LIMITS["artifact_bytes"]
    for key, added_artifact in in_added.items():
        with default_storage.open(stored_name(added_artifact.file), "rb") as fh:
            data = fh.read(limit + 1)
        if len(data) <= limit:
            out[key] = decode_bytes(data).text.split("\n")
    return out


def _artifact_lines(snapshot: Snapshot, names: set[str]) -> dict[str, list[str]]:
    """Lines of the named artifacts of one stored upload (``collectors.archive.artifact_lines``)."""
    with default_storage.open(stored_name(snapshot.file), "rb") as fh:
        return archive.artifact_lines(fh, names)
