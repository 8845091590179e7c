"""Issue 27, acceptance 2: every registered rule is the signature rule of at
least one published case, or kb/data/rules_without_case.yaml says why none
exists. The cases are loaded as ``manage.py loadcases`` loads them (founding
cases and library, signatures computed by the real engine from their
``before/`` fixtures)."""

from __future__ import annotations

import pytest
import yaml

from engine.rules import load_all as registered_rules
from kb import services
from kb.models import Case

TABLE = services.DATA_DIR / "rules_without_case.yaml"


def _table() -> dict[str, dict]:
    entries = yaml.safe_load(TABLE.read_text(encoding="utf-8")) or []
    return {entry["rule"]: entry for entry in entries}


def test_the_table_names_registered_rules_once_with_a_reason_in_both_languages():
    entries = yaml.safe_load(TABLE.read_text(encoding="utf-8")) or []
    rules = [entry["rule"] for entry in entries]
    assert len(rules) == len(set(rules)), "a rule is listed twice"
    registry = registered_rules()
    for entry in entries:
        assert entry["rule"] in registry, f"{entry['rule']}: no such rule"
        assert len(entry["reason_en"].split()) >= 8, entry["rule"]
        assert any("\u4e00" <= ch <= "\u9fff" for ch in entry["reason_zh"]), entry["rule"]


@pytest.mark.django_db
def test_every_rule_is_the_signature_rule_of_a_published_case_or_says_why_not():
    services.load_all(library=True)
    covered: dict[str, set[str]] = {}
    for case in Case.objects.filter(state=Case.State.PUBLISHED):
        for rule_id in case.signature_rules:
            covered.setdefault(rule_id, set()).add(case.slug)
    table = _table()
    registry = registered_rules()
    missing = sorted(r for r in registry if r not in covered and r not in table)
    assert not missing, f"rules with neither a published case nor a reason in {TABLE.name}: {missing}"
    stale = sorted(r for r in table if r in covered)
    assert not stale, f"listed in {TABLE.name} but now the signature rule of a case: " + ", ".join(
        f"{r} ({', '.join(sorted(covered[r]))})" for r in stale
    )
