"""loadcases: idempotent load of the founding cases, their figures, and
signatures computed by the engine (a fake one here; the real one in
test_kb_similarity)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

from collectors.facts import CpuTopology, HostFacts, SnapshotFacts
from kb import services
from kb.models import Case, CaseMeasure, CaseRule, Measure, Metric, TermStat
from tests.conftest import FIXTURES

SLUGS = [
    "zstack-mariadb-v2v",
    "kunpeng-stream-zone-reclaim",
    "openstack-kvm-crm-cpu",
    "percona-numa-interleave-startup",
    "oceanbase-bmsql-tuning",
]


class FakeEngine:
    """Records the paths it was given and returns fixed rules."""

    def __init__(self, version="fake-1", rules=("numa.high_remote_distance",)):
        self.calls: list[list[Path]] = []
        self.version = version
        self.rules = list(rules)

    def engine(self) -> services.SignatureEngine:
        def run(paths):
            self.calls.append(list(paths))
            host = HostFacts(label="h", role="physical", cpu=CpuTopology(architecture="aarch64", sockets=2))
            return self.rules, SnapshotFacts(hosts=[host])

        return services.SignatureEngine(version=self.version, run=run)


@pytest.fixture
def fake_fixtures(tmp_path) -> Path:
    """A seeds fixture tree with one case that has two host files."""
    before = tmp_path / "kunpeng-stream-zone-reclaim" / "before"
    before.mkdir(parents=True)
    (before / "host-a.txt").write_text("$ numactl -H\navailable: 2 nodes (0-1)\n")
    (before / "host-b.txt").write_text("$ numactl -H\navailable: 2 nodes (0-1)\n")
    return tmp_path


@pytest.mark.django_db
def test_loads_five_cases_in_two_languages_idempotently(fake_fixtures):
    fake = FakeEngine()
    report = services.load_all(engine=fake.engine(), fixtures_root=fake_fixtures)
    assert len(report.created) == 10 and Case.objects.count() == 10
    assert set(Case.objects.values_list("slug", flat=True)) == set(SLUGS)
    assert Measure.objects.count() == report.measures["total"] == 29
    ids = sorted(Case.objects.values_list("id", flat=True))
    counts = (CaseMeasure.objects.count(), Metric.objects.count(), CaseRule.objects.count())

    again = services.load_all(engine=fake.engine(), fixtures_root=fake_fixtures)
    assert again.created == [] and again.updated == [] and len(again.unchanged) == 10
    assert sorted(Case.objects.values_list("id", flat=True)) == ids
    assert (CaseMeasure.objects.count(), Metric.objects.count(), CaseRule.objects.count()) == counts
    # The two language versions are one case group.
    zh = Case.objects.get(slug="zstack-mariadb-v2v", language="zh")
    assert [c.language for c in zh.translations()] == ["en"]
    assert all(c.state == Case.State.PUBLISHED and c.published_at for c in Case.objects.all())


@pytest.mark.django_db
def test_signature_comes_from_the_engine_and_follows_its_version(fake_fixtures):
    fake = FakeEngine(
        version="fake-1", rules=["numa.local_node_pagecache_pressure", "numa.high_remote_distance"]
    )
    report = services.load_all(engine=fake.engine(), fixtures_root=fake_fixtures)
    assert report.signatures["kunpeng-stream-zone-reclaim"] == "computed"
    # Only the case with fixtures ran, once for both languages, one path per host file.
    assert [[p.name for p in call] for call in fake.calls] == [["host-a.txt", "host-b.txt"]]
    for case in Case.objects.filter(slug="kunpeng-stream-zone-reclaim"):
        assert case.signature["rules"] == ["numa.high_remote_distance", "numa.local_node_pagecache_pressure"]
        assert "arch:aarch64" in case.signature["features"]
        assert case.signature_engine_version == "fake-1"
        assert case.signature_source.startswith("tests/fixtures/seeds/kunpeng-stream-zone-reclaim/before@")
        assert set(case.rule_rows.values_list("rule", flat=True)) == set(case.signature["rules"])
    # No fixtures: nothing computed, nothing invented.
    assert Case.objects.get(slug="oceanbase-bmsql-tuning", language="en").signature == {}

    # Same engine version and fixtures: nothing recomputed.
    services.load_cases(engine=fake.engine(), fixtures_root=fake_fixtures)
    assert len(fake.calls) == 1

    # A new engine version recomputes.
    newer = FakeEngine(version="fake-2", rules=["numa.local_node_pagecache_pressure"])
    services.load_cases(engine=newer.engine(), fixtures_root=fake_fixtures)
    assert len(newer.calls) == 1
    case = Case.objects.get(slug="kunpeng-stream-zone-reclaim", language="zh")
    assert case.signature_engine_version == "fake-2"
    assert case.signature["rules"] == ["numa.local_node_pagecache_pressure"]
    assert list(case.rule_rows.values_list("rule", flat=True)) == ["numa.local_node_pagecache_pressure"]

    # Changed fixture files recompute too.
    (fake_fixtures / "kunpeng-stream-zone-reclaim" / "before" / "host-b.txt").write_text("changed\n")
    services.load_cases(engine=newer.engine(), fixtures_root=fake_fixtures)
    assert len(newer.calls) == 2

    # A deployment without the tests folder keeps the stored signature.
    shutil.rmtree(fake_fixtures / "kunpeng-stream-zone-reclaim")
    third = FakeEngine(version="fake-3", rules=[])
    report = services.load_cases(engine=third.engine(), fixtures_root=fake_fixtures)
    assert third.calls == [] and report.signatures["kunpeng-stream-zone-reclaim"] == "kept"
    assert (
        Case.objects.get(slug="kunpeng-stream-zone-reclaim", language="en").signature_engine_version
        == "fake-2"
    )


def _metric(slug: str, language: str, pattern: str) -> Metric:
    return Metric.objects.get(case__slug=slug, case__language=language, name__iregex=pattern)


@pytest.mark.django_db
def test_founding_cases_carry_their_real_figures():
    services.load_all(use_real_engine=False)
    m = _metric("zstack-mariadb-v2v", "en", "create index")
    assert (m.before, m.after, m.unit, m.expected) == (120, 58, "s", "30-60 s")
    m = _metric("kunpeng-stream-zone-reclaim", "en", "^stream")
    assert (m.before, m.after, m.unit) == (6000, 15000, "MB/s")
    assert "1-2 TB" in m.name
    assert _metric("kunpeng-stream-zone-reclaim", "en", "page cache").before == 980
    assert _metric("kunpeng-stream-zone-reclaim", "zh", "本地").before == 10
    assert _metric("kunpeng-stream-zone-reclaim", "zh", "远端").before == 32
    m = _metric("openstack-kvm-crm-cpu", "zh", "CPU 使用率")
    assert (m.before, m.after, m.unit) == (70, 10, "%")
    assert "VMware" in m.expected and "< 10" in m.expected
    assert _metric("percona-numa-interleave-startup", "en", "start-up").before == 440
    assert _metric("percona-numa-interleave-startup", "en", "innodb_buffer_pool_size").before == 432
    m = _metric("oceanbase-bmsql-tuning", "en", "remote plans")
    assert m.before == 47 and "1,286,613 of 2,758,482" in m.note
    assert "1 ms" in _metric("oceanbase-bmsql-tuning", "en", "ping").note
    refs = set(Case.objects.values_list("references__key", flat=True))
    assert {"MDEV-18860", "PS-3967", "ZSTACK-48375"} <= refs


def _windows(text: str, size: int) -> set[str]:
    text = re.sub(r"\s+", "", text)
    return {text[i : i + size] for i in range(0, max(len(text) - size, 0) + 1)}


@pytest.mark.parametrize("slug", SLUGS)
def test_case_text_is_our_own_words(slug, seeds_dir):
    """Less than 15% of the 14-character windows of a case's prose appear in
    its seed (command output and log lines quoted as data are allowed)."""
    number = SLUGS.index(slug)
    seed = next(seeds_dir.glob(f"{number:03d}_*.txt")).read_text(encoding="utf-8")
    seed_windows = _windows(seed, 14)
    data = yaml.safe_load((services.CASES_DIR / f"{slug}.yaml").read_text(encoding="utf-8"))
    for language in ("en", "zh"):
        prose = " ".join(str(data[language].get(k, "")) for k in ("symptom", "cause", "resolution_summary"))
        mine = _windows(prose, 14)
        copied = len(mine & seed_windows) / max(len(mine), 1)
        assert copied < 0.15, f"{slug}[{language}]: {copied:.0%} copied from the seed"


@pytest.mark.django_db
def test_loadcases_command_is_rerunnable(capsys):
    # (its speed is measured by bench/, not asserted here)
    call_command("loadcases")
    call_command("loadcases")
    out = capsys.readouterr().out
    assert "10 unchanged" in out
    assert Case.objects.count() == 10
    if (FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before").is_dir():
        zstack = Case.objects.get(slug="zstack-mariadb-v2v", language="en")
        assert zstack.signature["rules"], "the real engine produced no rule for the ZStack fixtures"
        from engine.run import ENGINE_VERSION

        assert zstack.signature_engine_version == str(ENGINE_VERSION)


@pytest.mark.django_db
def test_dictionary_change_reindexes(monkeypatch):
    services.load_all(use_real_engine=False)
    monkeypatch.setattr(services.search, "dictionary_version", lambda: "d999-g999")
    report = services.load_cases(use_real_engine=False)
    assert len(report.updated) == 10
    assert set(Case.objects.values_list("search_dictionary_version", flat=True)) == {"d999-g999"}


def test_case_files_are_bilingual():
    for path in sorted(services.CASES_DIR.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert data["slug"] == path.stem
        for key in ("title", "symptom", "cause", "resolution_summary"):
            assert re.search(r"[\u4e00-\u9fff]", data["zh"][key]), (path.name, key)
            assert not re.search(r"[\u4e00-\u9fff]", data["en"][key]), (path.name, key)


@pytest.mark.django_db
def test_stale_cases_are_reindexed_a_chunk_at_a_time_with_the_term_statistics_once(monkeypatch):
    """Every case tokenized by another version, not only the founding ones; the
    term statistics after it are those the incremental upkeep had."""
    services.load_all(use_real_engine=False)
    services.save_case(Case(slug="user-case", language="en", title="Slow guest", symptom="vcpus not pinned"))
    stats = dict(TermStat.objects.values_list("term", "ndoc"))
    Case.objects.update(search_dictionary_version="old")
    rebuilt = []
    monkeypatch.setattr(
        services.search,
        "rebuild_term_stats",
        lambda r=services.search.rebuild_term_stats: rebuilt.append(r()),
    )
    assert services.reindex_stale() == 11
    assert len(rebuilt) == 1
    assert set(Case.objects.values_list("search_dictionary_version", flat=True)) == {
        services.search.dictionary_version()
    }
    assert dict(TermStat.objects.values_list("term", "ndoc")) == stats
