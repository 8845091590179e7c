"""Where a fact was read: the host's display name, the artifact and line of
a parsed fact, and the transcript block holding a line (for evidence)."""

from __future__ import annotations

from typing import Any

from collectors.facts import HostFacts, Source


def host_name(host: HostFacts) -> str:
    name = host.label or host.hostname
    if name:
        return name
    # a transcript without hostnames in its prompts: name it after its file
    for entry in host.artifacts:
        name = _entry_name(entry).rsplit("/", 1)[-1].split(":", 1)[0]
        if name:
            return name.rsplit(".", 1)[0]  # (the name itself when it has no ".")
    return "host"


def line_of(parsed: Any, *keys: str) -> int | None:
    """The line a fact was read from: the first of ``keys`` found in
    ``parsed.lines``, else the artifact's own line."""
    if parsed is None:
        return None
    lines: dict[str, int] = getattr(parsed, "lines", None) or {}
    for key in keys:
        if key in lines:
            return lines[key]
    source: Source | None = getattr(parsed, "source", None)
    return source.line if source is not None else None


def covering_artifact(host: HostFacts, artifact: str, line: int | None) -> str:
    """Facts merged from several blocks of one transcript (database variables
    and error log, say) keep the first block as their source; the block that
    holds ``line`` is the precise artifact."""
    if not line or not artifact.startswith("transcript:"):
        return artifact
    # A host read from several files (an upload and evidence added later):
    # line numbers are those of the file the cited block came from.
    files = _files_of(host, artifact)
    for entry in host.artifacts:
        if files and artifact_file(entry) not in files:
            continue
        if _holds_line(entry, line):
            return str(entry["source"])
    return artifact


def _files_of(host: HostFacts, artifact: str) -> set[str]:
    """The files the host's blocks named ``artifact`` were read from."""
    return {artifact_file(e) for e in host.artifacts if e.get("source") == artifact}


def _holds_line(entry: dict[str, Any], line: int) -> bool:
    """Whether an artifact read from a block of lines (and named) holds ``line``."""
    start, count = entry.get("start_line"), entry.get("lines")
    return bool(start and count and start <= line < start + count and entry.get("source"))


def artifact_file(entry: dict[str, Any]) -> str:
    """The file of a transcript block named ``<file>:<first line>``."""
    name = _entry_name(entry)
    head, sep, tail = name.rpartition(":")
    return head if sep and tail.isdigit() else name


def _entry_name(entry: dict[str, Any]) -> str:
    """An artifact entry's name as text ("" without one)."""
    return str(entry.get("name") or "")


def cited_artifact(host: HostFacts, parsed: Any, line: int | None) -> str:
    """The artifact to cite for ``parsed`` read at ``line``."""
    source = getattr(parsed, "source", None)
    return covering_artifact(host, source.artifact if source is not None else "", line)


def first_artifact_of_kind(host: HostFacts, kind: str) -> str:
    """The first artifact of ``kind`` the host was built from (facts that only
    carry a line, such as benchmark results)."""
    return next((a.get("source") or a.get("name", "") for a in host.artifacts if a.get("kind") == kind), "")
