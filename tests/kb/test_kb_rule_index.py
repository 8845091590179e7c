"""The in-memory rule index behind similar-case candidates (kb.rule_index):
exact against a brute-force Dice, right where the SQL pre-selection it
replaced was wrong (many groups tying on the rare rules), and fresh after
writes made by another process."""

from __future__ import annotations

import random

import pytest

from engine.rules import load_all
from kb import rule_index, services
from kb.models import Case, RuleIndexChange, RuleIndexState

# The ZStack founding snapshot's rules (tests/fixtures/seeds/zstack-mariadb-v2v/before).
ZSTACK = [
    "kvm.emulator_unpinned",
    "kvm.guest_numa_missing",
    "kvm.host_contention",
    "kvm.iothread_unpinned",
    "kvm.memory_not_bound",
    "kvm.vcpu_hotplug_enabled",
    "kvm.vcpus_unpinned",
    "memory.hugepages_absent",
    "mysql.numa_interleave_unavailable",
    "numa.node_memory_imbalance",
]


def _benchmark_like(n: int, seed: int) -> dict[str, set[str]]:
    """``n`` case groups with 2-8 rules each, Zipf-distributed over the rule
    catalogue as in bench/search.py: every rule is common."""
    rng = random.Random(seed)
    rules = sorted(load_all())
    rng.shuffle(rules)
    weights = [1 / rank**0.9 for rank in range(1, len(rules) + 1)]
    return {f"gen-{g:06d}": set(rng.choices(rules, weights=weights, k=rng.randint(2, 8))) for g in range(n)}


def _brute_force(groups: dict[str, set[str]], rules: set[str], limit: int) -> list[tuple[str, float]]:
    df: dict[str, int] = {}
    for held in groups.values():
        for r in held:
            df[r] = df.get(r, 0) + 1
    n = len(groups)
    w = {r: rule_index.idf(df.get(r, 0), n) for r in set(df) | rules}
    snapshot = sum(w[r] for r in rules)
    scored = [
        (-round(2 * sum(w[r] for r in held & rules) / (snapshot + sum(w[r] for r in held)), 12), slug)
        for slug, held in groups.items()
        if held & rules
    ]
    return [(slug, -d) for d, slug in sorted(scored)[:limit]]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_best_is_the_brute_force_ranking(seed):
    groups = _benchmark_like(3000, seed)
    index = rule_index.RuleIndex()
    for slug, rules in groups.items():
        index.put(slug, rules)
    snapshot = set(random.Random(seed).sample(sorted(load_all()), 6))
    got = index.best(snapshot, limit=50)
    want = _brute_force(groups, snapshot, 50)
    assert [slug for slug, _ in got] == [slug for slug, _ in want]
    assert [d for _, d in got] == pytest.approx([d for _, d in want])
    assert index.frequencies()[0] == len(groups)


def test_the_group_holding_every_rule_wins_among_thousands_of_ties():
    """What the SQL pre-selection got wrong at 300k cases: the cases holding
    the rarest rules tie by the thousand, and the ZStack case was cut."""
    groups = _benchmark_like(20_000, 7)
    index = rule_index.RuleIndex()
    for slug, rules in groups.items():
        index.put(slug, rules)
    index.put("zstack-mariadb-v2v", ZSTACK)
    best = index.best(ZSTACK, limit=150)
    assert best[0] == ("zstack-mariadb-v2v", pytest.approx(1.0))
    assert len(best) == 150
    assert index.best(ZSTACK, limit=5, exclude="zstack-mariadb-v2v")[0][0] != "zstack-mariadb-v2v"


def test_qualifying_rules_and_removal():
    index = rule_index.RuleIndex()
    index.put("context-only", ["numa.high_remote_distance"])
    index.put("serious", ["numa.high_remote_distance", "kvm.vcpus_unpinned"])
    rules = ["numa.high_remote_distance", "kvm.vcpus_unpinned"]
    assert [s for s, _ in index.best(rules, limit=5)] == ["serious", "context-only"]
    assert [s for s, _ in index.best(rules, limit=5, qualifying=["kvm.vcpus_unpinned"])] == ["serious"]
    index.put("serious", [])
    assert [s for s, _ in index.best(rules, limit=5)] == ["context-only"]
    assert index.frequencies() == (1, {"numa.high_remote_distance": 1})
    assert index.best(["net.netem_delay"], limit=5) == []


def _case(slug, rules, state="published", language="en"):
    case = Case(slug=slug, language=language, title=slug, symptom=f"{slug} symptom", state=state)
    case.signature = {"rules": list(rules), "features": []}
    return services.save_case(case)


@pytest.mark.django_db
def test_writes_reach_a_process_index_through_the_change_log():
    a = _case("case-a", ["kvm.vcpus_unpinned"])
    _case("case-a", ["kvm.vcpus_unpinned"], language="zh")
    index = rule_index.current()
    assert index.frequencies() == (1, {"kvm.vcpus_unpinned": 1})
    generation = index.generation

    # Written through kb.services, as another process would: the same index
    # object catches up with the changed groups only.
    _case("case-b", ["kvm.vcpus_unpinned", "kvm.memory_not_bound"])
    a.signature = {"rules": ["kvm.memory_not_bound"], "features": []}
    services.save_case(a)  # the zh version still holds kvm.vcpus_unpinned
    assert rule_index.current() is index
    assert index.generation == generation + 2
    assert index.frequencies() == (2, {"kvm.memory_not_bound": 2, "kvm.vcpus_unpinned": 2})

    # Unpublished and deleted versions leave the index.
    b = Case.objects.get(slug="case-b")
    b.state = Case.State.DRAFT
    services.save_case(b)
    for version in Case.objects.filter(slug="case-a"):
        services.delete_case(version)
    assert rule_index.current() is index
    assert index.frequencies() == (0, {})
    # A save that changes no rule row writes no generation.
    before = RuleIndexState.objects.get(pk=1).generation
    services.save_case(Case.objects.get(slug="case-b"))
    assert RuleIndexState.objects.get(pk=1).generation == before


@pytest.mark.django_db
def test_a_process_too_far_behind_or_on_another_epoch_reads_everything(monkeypatch):
    _case("case-a", ["kvm.vcpus_unpinned"])
    index = rule_index.current()
    monkeypatch.setattr(services, "RULE_CHANGES_KEPT", 2)
    for n in range(4):
        _case(f"case-{n}", ["kvm.memory_not_bound"])
    assert RuleIndexChange.objects.count() == 2  # the log is pruned as it is written
    fresh = rule_index.current()
    assert fresh is not index
    assert fresh.frequencies() == (5, {"kvm.memory_not_bound": 4, "kvm.vcpus_unpinned": 1})

    # The state row emptied and written again (a flushed database): a new epoch.
    RuleIndexState.objects.all().delete()
    _case("case-z", ["net.netem_delay"])
    again = rule_index.current()
    assert again is not fresh and again.epoch != fresh.epoch
    assert again.frequencies()[1]["net.netem_delay"] == 1
