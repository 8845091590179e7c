"""``detect_kind`` asks the detectors by priority and stops at the first that
fires: the same kind as asking every detector and keeping the highest
priority, the first in registry order among equals. Checked on the heads of
real outputs (the shared corpus, the seeds' transcripts), every few lines."""

from __future__ import annotations

import pytest

from collectors import parsers
from collectors.parsers import ParserSpec
from collectors.transcript import detect_kind
from tests.conftest import CORPUS, FIXTURES


def every_detector(text: str) -> str | None:
    """``detect_kind`` as it was: every detector asked, the best kept."""
    head = text[:8192]
    best: tuple[int, int, str] | None = None
    for order, spec in enumerate(list(parsers.REGISTRY.values())):
        if spec.detect is None:
            continue
        try:
            hit = spec.detect(head)
        except Exception:  # noqa: S112 - as detect_kind: a detector that raises is passed over
            continue
        if hit and (best is None or spec.priority > best[0]):
            best = (spec.priority, -order, spec.kind)
    return best[2] if best else None


def _heads() -> list[str]:
    texts = [p.read_text(errors="replace") for p in sorted(CORPUS.glob("*/*")) if p.is_file()]
    texts += [p.read_text(errors="replace") for p in sorted(FIXTURES.glob("seeds/*/*/*.txt"))]
    heads = []
    for text in texts:
        lines = text.split("\n")
        for start in range(0, min(len(lines), 400), 7):
            heads.append("\n".join(lines[start : start + 40]))
    return heads


def test_the_first_detector_by_priority_is_the_best_one():
    parsers.load_all()
    heads = _heads()
    assert len(heads) > 1000
    found = [detect_kind(head) for head in heads]
    assert found == [every_detector(head) for head in heads]
    assert len(set(found)) > 20  # many kinds, and heads of none


def test_a_new_parser_in_the_registry_is_asked(monkeypatch):
    parsers.load_all()
    head = (CORPUS / "numactl" / "percona-toolkit_pt-summary_007_numactl.txt").read_text()
    assert detect_kind(head) == "numactl_hardware"
    for priority, expected in ((0, "numactl_hardware"), (99, "test_everything")):
        spec = ParserSpec(kind="test_everything", func=str, detect=bool, priority=priority)
        monkeypatch.setitem(parsers.REGISTRY, "test_everything", spec)
        assert detect_kind(head) == every_detector(head) == expected
    monkeypatch.delitem(parsers.REGISTRY, "test_everything")
    assert detect_kind(head) == "numactl_hardware"


@pytest.mark.parametrize("priority", [0, 10, 99])
def test_a_detector_that_raises_is_passed_over(monkeypatch, priority):
    parsers.load_all()

    def hostile(head: str) -> bool:
        raise ValueError("a detector bug")

    monkeypatch.setitem(
        parsers.REGISTRY,
        "test_raises",
        ParserSpec(kind="test_raises", func=str, detect=hostile, priority=priority),
    )
    head = (CORPUS / "numactl" / "percona-toolkit_pt-summary_007_numactl.txt").read_text()
    assert detect_kind(head) == "numactl_hardware"
