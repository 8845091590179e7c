"""Helpers for the rule tests: analyse real-format host transcripts.

``analyze_texts(text, ...)`` writes each text as one host file and runs the
whole engine over them as one snapshot, so a rule test exercises the real
parsers and the assembler too; every finding's explanation must be its rule's
declared template filled with the finding's values. ``seed_text(slug, state, name, replace=...)``
reads a rebuilt founding snapshot file, optionally edited to flip one fact.
"""

from __future__ import annotations

import pytest

from collectors.archive import load_snapshot
from engine.rules import REGISTRY
from engine.run import analyze
from tests.conftest import FIXTURES


def _seed_text(slug: str, state: str, name: str, replace: dict[str, str] | None = None) -> str:
    text = (FIXTURES / "seeds" / slug / state / name).read_text(encoding="utf-8")
    for old, new in (replace or {}).items():
        assert old in text, f"{old!r} not in {slug}/{state}/{name}"
        text = text.replace(old, new)
    return text


@pytest.fixture
def seed_text():
    return _seed_text


@pytest.fixture
def analyze_texts(tmp_path):
    counter = iter(range(1000))

    def run(*texts: str, names: list[str] | None = None):
        folder = tmp_path / f"snap{next(counter)}"
        folder.mkdir()
        paths = []
        for i, text in enumerate(texts):
            name = names[i] if names else f"host{i}.txt"
            path = folder / name
            path.write_text(text, encoding="utf-8")
            paths.append(path)
        snapshot = load_snapshot(paths)
        result = analyze(snapshot)
        errors = [s for s in result.skipped if s[1].startswith("error")]
        assert not errors, errors
        for f in result.findings:  # the prose is the rule's declared templates, filled
            assert REGISTRY[f.rule].explain(f.template, f.values) == (f.explanation, f.explanation_zh)
        return result

    return run
