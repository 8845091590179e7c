"""``analyze --json`` of every fixture snapshot is what it was before the one
model of a host (issue 14) was built: findings, similar cases, what was
checked. See ``golden_inputs.py`` for the inputs and how to regenerate."""

from __future__ import annotations

import json

import pytest

from tests.triage.golden_inputs import GOLDEN, analyze_json, snapshots

EXPECTED = json.loads(GOLDEN.read_text())
INPUTS = snapshots()


def test_the_golden_file_covers_every_fixture_snapshot():
    assert sorted(INPUTS) == sorted(EXPECTED)
    assert len(INPUTS) >= 80


@pytest.mark.django_db
def test_analyze_json_is_unchanged():
    # One test for all snapshots: the founding cases are loaded once. Compared
    # through JSON so tuples and lists compare as stored.
    changed = {}
    for name in sorted(INPUTS):
        got = json.loads(json.dumps(analyze_json(INPUTS[name]), ensure_ascii=False, sort_keys=True))
        if got != EXPECTED[name]:
            changed[name] = got
    for name, got in changed.items():
        for key in got:
            assert got[key] == EXPECTED[name][key], (name, key)
    assert not changed
