"""Similar-case ranking. Acceptance 1: each founding snapshot, rebuilt from
its fixtures and analysed by the real engine, ranks its own case first."""

from __future__ import annotations

import pytest

from collectors.archive import load_snapshot
from collectors.facts import CpuTopology, HostFacts, SnapshotFacts
from kb import services, similarity
from kb.models import Case
from tests.conftest import FIXTURES, service_unavailable
from triage.engine import analyze

SLUGS = [
    "zstack-mariadb-v2v",
    "kunpeng-stream-zone-reclaim",
    "openstack-kvm-crm-cpu",
    "percona-numa-interleave-startup",
    "oceanbase-bmsql-tuning",
]


def _before(slug: str):
    folder = FIXTURES / "seeds" / slug / "before"
    if not folder.is_dir():
        service_unavailable(f"founding snapshot fixtures missing: {folder}")
    return services.snapshot_paths(folder)


@pytest.fixture
def founding(db):
    services.load_all()
    similarity.invalidate()
    missing = [c.slug for c in Case.objects.filter(language="en") if not c.signature.get("rules")]
    assert not missing, f"no engine signature for {missing}"


@pytest.mark.parametrize("slug", SLUGS)
def test_founding_snapshot_ranks_its_own_case_first(slug, founding):
    snapshot = load_snapshot([str(p) for p in _before(slug)])
    result = analyze(snapshot)
    ranked = similarity.similar_cases_for(result.findings, snapshot, limit=5)
    assert ranked, "no similar case above the threshold"
    best = ranked[0]
    assert best["slug"] == slug, ranked
    assert similarity.NEW_PROBLEM_THRESHOLD <= best["score"] <= 1
    assert best["shared_rules"] and set(best["shared_rules"]) <= {f.rule for f in result.findings}
    assert best["matched_features"]
    assert best["title"] == Case.objects.get(slug=slug, language="en").title
    # Clearly ahead of the runner-up.
    if len(ranked) > 1:
        assert best["score"] > ranked[1]["score"]
    # One entry per case group.
    assert len({r["slug"] for r in ranked}) == len(ranked)


@pytest.mark.parametrize("slug", SLUGS)
def test_after_fix_snapshot_matches_less(slug, founding):
    """The fixed system shares fewer findings with its case than the broken one."""
    after = FIXTURES / "seeds" / slug / "after"
    if not after.is_dir():
        pytest.skip("no after snapshot for this case")
    before_snap = load_snapshot([str(p) for p in _before(slug)])
    after_snap = load_snapshot([str(p) for p in services.snapshot_paths(after)])

    def scores(snap):
        rules = [f.rule for f in analyze(snap).findings]
        return {
            r["slug"]: r["score"]
            for r in similarity.rank(rules, similarity.snapshot_features(snap), limit=10)
        }

    before, after_scores = scores(before_snap), scores(after_snap)
    assert after_scores.get(slug, 0) < before[slug]


def _case(slug, rules, features=(), state="published", language="en"):
    case = Case(
        slug=slug, language=language, title=f"{slug} {language}", symptom=f"{slug} symptom", state=state
    )
    case.signature = {"rules": list(rules), "features": list(features)}
    return services.save_case(case)


@pytest.mark.django_db
def test_rare_rules_weigh_more_and_reasons_are_listed():
    for n in range(6):
        _case(f"common-{n}", ["numa.high_remote_distance"], ["arch:x86_64"])
    _case("rare-a", ["numa.high_remote_distance", "mysql.large_pages_off"], ["arch:x86_64", "db:percona"])
    _case("rare-b", ["numa.high_remote_distance", "net.netem_delay"], ["arch:x86_64"])
    groups, df = similarity.rule_frequencies()
    assert groups == 8
    assert similarity.idf("mysql.large_pages_off", groups, df) > similarity.idf(
        "numa.high_remote_distance", groups, df
    )
    ranked = similarity.rank(
        ["numa.high_remote_distance", "mysql.large_pages_off"], ["arch:x86_64", "db:percona"], limit=3
    )
    assert ranked[0]["slug"] == "rare-a"
    assert ranked[0]["shared_rules"] == ["mysql.large_pages_off", "numa.high_remote_distance"]
    assert ranked[0]["matched_features"] == ["arch:x86_64", "db:percona"]
    assert ranked[0]["score"] > ranked[1]["score"]
    assert ranked[1]["slug"] != "rare-b" or ranked[1]["score"] < ranked[0]["score"]


@pytest.mark.django_db
def test_unknown_problem_is_reported_as_possibly_new():
    _case("known", ["net.netem_delay", "net.softirq_hotspot"], ["db:oceanbase"])
    host = HostFacts(label="x", role="physical", cpu=CpuTopology(architecture="aarch64"))
    snapshot = SnapshotFacts(hosts=[host])
    assert similarity.similar_cases_for([{"rule": "disk.latency_high"}], snapshot) == []
    report = similarity.similarity_report([{"rule": "disk.latency_high"}], snapshot)
    assert report["possibly_new_problem"] is True and report["similar_cases"] == []
    # A weak overlap (one of four rules, nothing else in common) stays below the threshold too.
    weak = similarity.similarity_report(
        ["net.netem_delay", "disk.latency_high", "kvm.no_cpu_isolation", "memory.hugepages_absent"], snapshot
    )
    assert weak["possibly_new_problem"] is True
    strong = similarity.similarity_report(["net.netem_delay", "net.softirq_hotspot"], snapshot)
    assert [c["slug"] for c in strong["similar_cases"]] == ["known"]


@pytest.mark.django_db
def test_published_only_one_version_per_group_in_the_reader_language():
    _case("pair", ["net.netem_delay"], language="en")
    _case("pair", ["net.netem_delay"], language="zh")
    _case("draft", ["net.netem_delay"], state="draft")
    _case("archived", ["net.netem_delay"], state="archived")
    ranked = similarity.rank(["net.netem_delay"], [], language="zh", limit=10)
    assert [(r["slug"], r["language"]) for r in ranked] == [("pair", "zh")]
    assert similarity.rank(["net.netem_delay"], [], language="en")[0]["language"] == "en"


@pytest.mark.django_db
def test_symptom_text_breaks_ties():
    _case("slow-start", ["mysql.large_pages_off"])
    _case("other", ["mysql.large_pages_off"])
    Case.objects.filter(slug="slow-start").update(symptom="buffer pool makes mysqld start slowly")
    services.save_case(Case.objects.get(slug="slow-start"))
    ranked = similarity.rank(
        ["mysql.large_pages_off"], [], symptom="mysqld starts slowly, buffer pool", limit=2
    )
    assert ranked[0]["slug"] == "slow-start" and ranked[0]["score"] > ranked[1]["score"]


@pytest.mark.django_db
def test_related_cases_exclude_the_case_itself():
    a = _case("a", ["net.netem_delay", "net.softirq_hotspot"])
    _case("b", ["net.netem_delay", "net.softirq_hotspot", "disk.latency_high"])
    related = similarity.related_cases(a)
    assert [r["slug"] for r in related] == ["b"]
    assert related[0]["shared_rules"] == ["net.netem_delay", "net.softirq_hotspot"]
