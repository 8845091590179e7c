"""Which registered parser a command, a path or a text names, as the parser
tests ask it: the registrations are what these look up (the loader itself
asks ``collectors.transcript.kind_for_command`` / ``kind_for_path`` /
``detect_kind``, which cache their answers)."""

from __future__ import annotations

import re

from collectors.parsers import REGISTRY, ParserSpec, load_all


def for_command(command: str) -> ParserSpec | None:
    load_all()
    command = command.strip()
    for spec in REGISTRY.values():
        if any(re.search(p, command) for p in spec.commands):
            return spec
    return None


def for_path(path: str) -> ParserSpec | None:
    load_all()
    for spec in REGISTRY.values():
        if any(re.search(p, path) for p in spec.paths):
            return spec
    return None


def detect(text: str) -> ParserSpec | None:
    load_all()
    head = text[:8192]
    matches = [s for s in REGISTRY.values() if s.detect and s.detect(head)]
    return max(matches, key=lambda s: s.priority) if matches else None
