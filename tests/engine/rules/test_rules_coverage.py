"""Every registered rule has a test that fires it and one that does not."""

from __future__ import annotations

import re
from pathlib import Path

from engine.rules import load_all

HERE = Path(__file__).resolve().parent


def test_every_rule_is_tested_firing_and_quiet():
    sources = "\n".join(p.read_text(encoding="utf-8") for p in HERE.glob("test_rules_*.py"))
    # `assert "<id>" in ...rule_ids` / `ids`, or a finding picked by `f.rule == "<id>"`
    fires = set(re.findall(r'"([a-z]+\.[a-z_]+)"\s+in ', sources))
    fires |= set(re.findall(r'f\.rule == "([a-z]+\.[a-z_]+)"', sources))
    quiet = set(re.findall(r'"([a-z]+\.[a-z_]+)"\s+not in ', sources))
    # `assert not ids & {"<id>", ...}`
    for group in re.findall(r"assert not ids & \{([^}]*)\}", sources):
        quiet |= set(re.findall(r'"([a-z]+\.[a-z_]+)"', group))
    registry = set(load_all())
    assert registry - fires == set(), "rules without a firing test"
    assert registry - quiet == set(), "rules without a quiet test"
