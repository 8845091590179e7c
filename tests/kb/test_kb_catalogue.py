"""The measures catalogue against the rule registry and DESIGN.md."""

from __future__ import annotations

import re

import pytest
import yaml

from engine.rules import load_all
from kb import services
from kb.models import Disruption
from tests.conftest import SHARED, service_unavailable


def _catalogue() -> dict[str, dict]:
    return {m["slug"]: m for m in yaml.safe_load(services.MEASURES_PATH.read_text(encoding="utf-8"))}


def _design_rule_ids() -> set[str]:
    design = SHARED / "DESIGN.md"
    if not design.exists():
        service_unavailable(f"DESIGN.md missing at {design}")
    return set(re.findall(r"^\| `([a-z]+\.[a-z0-9_]+)` \|", design.read_text(encoding="utf-8"), re.MULTILINE))


def test_every_measure_a_rule_names_is_catalogued():
    catalogue = _catalogue()
    missing = {
        (spec.id, slug) for spec in load_all().values() for slug in spec.measures if slug not in catalogue
    }
    assert not missing, f"rules name measures missing from kb/data/measures.yaml: {sorted(missing)}"


def test_every_rule_a_measure_clears_is_a_design_rule():
    design = _design_rule_ids()
    assert len(design) >= 30, "the DESIGN.md rule table was not parsed"
    unknown = {(slug, r) for slug, m in _catalogue().items() for r in m["rules"] if r not in design}
    assert not unknown, f"measures name rules that DESIGN.md does not define: {sorted(unknown)}"
    assert all(_catalogue()[slug]["rules"] for slug in _catalogue()), "each measure clears at least one rule"


def test_measures_are_complete_and_bilingual():
    for slug, m in _catalogue().items():
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", slug)
        assert m["disruption"] in Disruption.values, slug
        for key in (
            "title_en",
            "title_zh",
            "what_why_en",
            "what_why_zh",
            "commands",
            "rollback",
            "remeasure",
        ):
            assert str(m.get(key) or "").strip(), f"{slug}: {key} is empty"
        assert re.search(r"[\u4e00-\u9fff]", m["title_zh"]), slug


def test_case_steps_use_catalogued_measures():
    catalogue = _catalogue()
    for path in sorted(services.CASES_DIR.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for step in data["resolution"]:
            assert step["measure"] in catalogue, (path.name, step["measure"])


@pytest.mark.django_db
def test_catalogue_load_is_idempotent():
    first = services.load_catalogue()
    assert first["created"] == first["total"] == len(_catalogue())
    again = services.load_catalogue()
    assert again == {"created": 0, "updated": 0, "total": first["total"]}
