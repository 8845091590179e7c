"""Similar-case ranking. Acceptance 1: each founding snapshot, rebuilt from
its fixtures and analysed by the real engine, ranks its own case first."""

from __future__ import annotations

import pytest

from collectors.archive import load_snapshot
from collectors.derived.features import prose_only, snapshot_features
from collectors.facts import CpuTopology, HostFacts, SnapshotFacts
from engine.rules import Finding
from engine.run import analyze
from kb import rule_index, services, similarity
from kb.models import Case
from tests.conftest import FIXTURES, ROOT, service_unavailable

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
        return {r["slug"]: r["score"] for r in similarity.rank(rules, snapshot_features(snap), limit=10)}

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
    groups, df = rule_index.current().frequencies()
    assert groups == 8
    assert df == {"numa.high_remote_distance": 8, "mysql.large_pages_off": 1, "net.netem_delay": 1}
    assert similarity.idf(df["mysql.large_pages_off"], groups) > similarity.idf(
        df["numa.high_remote_distance"], groups
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
    # Sharing only an info context rule (and the environment) never qualifies a case (issue 17).
    _case("context-only", ["kvm.no_cpu_isolation", "disk.latency_high"], ["arch:aarch64", "role:physical"])
    weak = similarity.similarity_report(["memory.hugepages_absent", "kvm.no_cpu_isolation"], snapshot)
    assert weak["possibly_new_problem"] is True and weak["similar_cases"] == []
    # One shared warning/critical finding does: the case documents that problem's fix.
    one = similarity.similarity_report(["net.netem_delay", "memory.hugepages_absent"], snapshot)
    assert [(c["slug"], c["shared_rules"]) for c in one["similar_cases"]] == [("known", ["net.netem_delay"])]
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


# --- issue 17: a similar case only when it explains a real problem ------------------------

EVALUATION = ROOT / "tests" / "evaluation"


def _eval_snapshot(name: str):
    from triage.evaluation import snapshot_inputs

    return load_snapshot(snapshot_inputs(EVALUATION / name))


def test_healthy_percona_host_with_only_the_distance_context_gets_no_case(founding):
    """The Percona seed host with its problem removed (large pages, dump/load on),
    whose only finding is the info context numa.high_remote_distance."""
    snapshot = load_snapshot(
        [str(FIXTURES / "seeds" / "percona-numa-interleave-startup" / "after" / "db-3301.txt")]
    )
    serious = [f for f in analyze(snapshot).findings if f.severity in ("critical", "warning")]
    assert serious == []
    context = [
        Finding(rule="numa.high_remote_distance", severity="info", host="db-3301", title="", explanation="")
    ]
    features = snapshot_features(snapshot)
    assert {"db:percona", "numa:multi-node"} <= set(features)
    # Context and environment alone still rank a case (what issue 17 saw) ...
    assert similarity.rank(["numa.high_remote_distance"], features, threshold=0.3)
    # ... but never qualify one.
    assert similarity.similar_cases_for(context, snapshot) == []
    assert similarity.similarity_report(context, snapshot)["no_known_problem"] is True


def test_healthy_epyc_host_gets_no_case(founding):
    """A 2 x EPYC 9375F Proxmox host (public numactl -H, distance 32): info context only."""
    snapshot = _eval_snapshot("08-proxmox-epyc-9375f")
    result = analyze(snapshot)
    assert {f.severity for f in result.findings} <= {"info"}
    assert similarity.similar_cases_for(result.findings, snapshot) == []


def test_two_socket_xeon_e5410_gets_no_case(founding):
    """A 2-socket Xeon E5410 (front-side bus, uniform memory: one node is right)."""
    snapshot = _eval_snapshot("09-xeon-e5410-fsb")
    assert similarity.similar_cases_for(analyze(snapshot).findings, snapshot) == []


def test_xeon_e5410_environment_alone_qualifies_no_case(founding):
    snapshot = _eval_snapshot("09-xeon-e5410-fsb")
    features = snapshot_features(snapshot)
    assert "sockets:multiple" in features
    info_only = [f for f in analyze(snapshot).findings if f.rule != "numa.single_node_multi_socket"]
    assert similarity.similar_cases_for(info_only, snapshot) == []


def test_every_offered_case_shares_a_serious_finding_on_the_evaluation_set(founding):
    """Healthy snapshots without a warning get no case; any case offered shares a warning/critical rule."""
    from triage.evaluation import load_expectation, snapshot_dirs

    for directory in snapshot_dirs(EVALUATION):
        snapshot = _eval_snapshot(directory.name)
        findings = analyze(snapshot).findings
        serious = {f.rule for f in findings if f.severity in ("critical", "warning")}
        cases = similarity.similar_cases_for(findings, snapshot)
        if not serious:
            assert cases == [], directory.name
        for case in cases:
            assert set(case["shared_rules"]) & serious, (directory.name, case)
        if load_expectation(directory / "expected.json").healthy and not serious:
            assert cases == []


def test_score_is_explained_by_its_contributions(founding):
    snapshot = load_snapshot([str(p) for p in _before("zstack-mariadb-v2v")])
    ranked = similarity.similar_cases_for(analyze(snapshot).findings, snapshot)
    best = ranked[0]
    points = sum(c["points"] for c in best["contributions"])
    assert points == pytest.approx(best["score"], abs=0.01 * len(best["contributions"]))
    rules = [c for c in best["contributions"] if c["kind"] == "rule"]
    assert [c["name"] for c in rules] and {c["name"] for c in rules} == set(best["shared_rules"])
    assert best["why"].startswith("Shares the findings ")
    assert f"Score {similarity.format_score(best['score'])} of 1." in best["why"]
    assert "相似度" in similarity.explain(best, "zh-hans")


def test_prose_only_symptom_qualifies_a_case_by_its_distinctive_terms(founding):
    """OceanBase issue 818 (prose only, Chinese): cpu_quota_concurrency names the case."""
    text = (EVALUATION / "36-oceanbase-cpu-quota-prose-zh" / "question.txt").read_text(encoding="utf-8")
    ranked = similarity.similar_cases_for([], None, symptom=text)
    assert [c["slug"] for c in ranked] == ["oceanbase-bmsql-tuning"]
    assert "cpuquotaconcurrency" in ranked[0]["contributions"][0]["name"]
    # Common words shared with every case qualify nothing.
    assert similarity.similar_cases_for([], None, symptom="the server is slow and the CPU is busy") == []


def test_format_score_is_the_api_scale():
    assert similarity.format_score(0.4) == "0.40"
    assert similarity.format_score(None) == "—"


def test_prose_only_needs_every_host_read_as_prose():
    from collectors.facts import ReadArtifact, Reading

    prose = HostFacts(label="ticket", reading=Reading(lines=3, prose_lines=3))
    read = HostFacts(
        label="h",
        reading=Reading(
            lines=3,
            read_lines=3,
            artifacts=[ReadArtifact(kind="lscpu", start_line=1, end_line=3, parsed=True)],
        ),
    )
    assert prose_only(SnapshotFacts(hosts=[prose])) is True
    assert prose_only(SnapshotFacts(hosts=[prose, read])) is False
    assert prose_only(SnapshotFacts(hosts=[HostFacts(label="empty")])) is False
