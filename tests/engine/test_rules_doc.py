"""docs/rules.md is generated from the registry and must not be stale."""

from __future__ import annotations

from django.core.management import call_command

from engine.rules import load_all
from engine.rules_doc import RULES_DOC, render_rules_doc


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


def test_rules_doc_justifies_every_threshold_and_says_how_to_get_each_fact():
    text = render_rules_doc()
    for spec in load_all().values():
        section = text.split(f"### `{spec.id}`", 1)[1].split("###", 1)[0]
        assert spec.rationale and spec.rationale in section, spec.id
        assert spec.rationale_zh and spec.rationale_zh in section, spec.id
    assert "impact = weight(severity) x min(past" in text
    assert "`sudo dmidecode -t memory`" in text and "`grep -i huge /proc/meminfo`" in text
    assert "`virsh -c qemu:///system dumpxml <domain>" in text
    assert "Debian/Ubuntu: `apt-get install -y numactl`" in text
