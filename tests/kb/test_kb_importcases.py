"""manage.py importcases and exportcases: Markdown case files in, the same
format out."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from kb import authoring, services
from kb.models import Case
from tests.conftest import FIXTURES

pytestmark = pytest.mark.django_db

CASE_FILES = FIXTURES / "case_files"


def _fields(path) -> dict:
    doc = authoring.parse_markdown(path.read_text(encoding="utf-8"))
    return vars(doc)


def test_three_markdown_files_round_trip_through_import_and_export(tmp_path, capsys):
    services.load_catalogue()
    files = sorted(CASE_FILES.glob("*.md"))
    assert len(files) == 3
    call_command("importcases", *map(str, files))
    assert "imported 2 cases from 3 files" in capsys.readouterr().out
    # Every imported case is a draft; the Chinese version missing from the
    # unpinned-guest case is pre-filled for the author to translate.
    assert set(Case.objects.values_list("state", flat=True)) == {Case.State.DRAFT}
    pending = Case.objects.get(slug="kvm-guest-unpinned", language="zh")
    assert pending.translation_pending and pending.title == "Batch job 30 % slower in an unpinned guest"

    out = tmp_path / "export"
    call_command("exportcases", "--slug", "redis-thp-latency", "--slug", "kvm-guest-unpinned", str(out))
    written = sorted(p.name for p in out.iterdir())
    assert written == [
        "kvm-guest-unpinned.en.md",
        "kvm-guest-unpinned.zh.md",
        "redis-thp-latency.en.md",
        "redis-thp-latency.zh.md",
    ]
    for original in files:
        assert _fields(out / original.name) == _fields(original), original.name


def test_an_exported_case_imports_again_under_a_new_slug_only_when_asked(tmp_path):
    services.load_catalogue()
    call_command("importcases", str(CASE_FILES / "kvm-guest-unpinned.en.md"))
    with pytest.raises(CommandError, match="exists already"):
        call_command("importcases", str(CASE_FILES / "kvm-guest-unpinned.en.md"))


def test_an_unknown_measure_stops_the_whole_import(tmp_path):
    services.load_catalogue()
    bad = tmp_path / "bad.en.md"
    bad.write_text(
        (CASE_FILES / "kvm-guest-unpinned.en.md").read_text().replace("pin-vcpus", "pin-everything"),
        encoding="utf-8",
    )
    with pytest.raises(CommandError, match="pin-everything"):
        call_command("importcases", str(CASE_FILES / "redis-thp-latency.en.md"), str(bad))
    assert not Case.objects.exists()


def test_a_founding_case_file_imports_as_a_draft_in_both_languages(capsys):
    services.load_catalogue()
    source = services.CASES_DIR / "zstack-mariadb-v2v.yaml"
    call_command("importcases", str(source))
    versions = {c.language: c for c in Case.objects.filter(slug="zstack-mariadb-v2v")}
    assert set(versions) == {"en", "zh"}
    assert all(c.state == Case.State.DRAFT and not c.translation_pending for c in versions.values())
    assert [s.measure.slug for s in versions["zh"].steps.all()][:2] == ["disable-cpu-hotplug", "pin-vcpus"]
    assert versions["zh"].metrics.get().name == "CREATE INDEX Form_Remarks_Timestamp_IX 执行时间"


def test_exportcases_names_a_missing_slug(tmp_path):
    with pytest.raises(CommandError, match="no-such-case"):
        call_command("exportcases", "--slug", "no-such-case", str(tmp_path))
