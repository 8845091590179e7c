"""docs/rules.md is generated from the registry and must not be stale."""

from __future__ import annotations

from django.core.management import call_command

from triage.docs_gen import RULES_DOC, render_rules_doc
from triage.rules import load_all


def test_rules_doc_is_up_to_date():
    assert RULES_DOC.read_text(encoding="utf-8") == render_rules_doc(), (
        "docs/rules.md is stale: run `python manage.py rulesdoc`"
    )


def test_rules_doc_lists_every_rule_with_thresholds_and_cases():
    text = render_rules_doc()
    for spec in load_all().values():
        assert f"`{spec.id}`" in text
        for seed in spec.seeds:
            assert f"`{seed}`" in text
    assert "`remote_local_ratio` = `2.5`" in text


def test_rulesdoc_check_command(capsys):
    call_command("rulesdoc", "--check")
    assert "up to date" in capsys.readouterr().out
