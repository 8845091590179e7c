""" "Cases that sound like this": text no rule matched (a pasted write-up, a
customer ticket, a session's symptom) compared with the published cases by
its words, each result explained by the terms it shares. The tickets are in
tests/fixtures/tickets/ (written for these tests, describing the founding
ZStack incident as a customer would, and an unrelated request)."""

from __future__ import annotations

import pytest

from kb import services, similarity
from kb.models import Case
from tests.conftest import FIXTURES

TICKETS = FIXTURES / "tickets"


@pytest.fixture
def founding(db):
    services.load_all()
    similarity.invalidate()


def test_a_customer_ticket_sounds_like_its_case(founding):
    text = (TICKETS / "v2v-mariadb-slow.txt").read_text()
    # No identifier, no rule: the qualified similarity has nothing to offer.
    assert similarity.similar_cases_for([], None, symptom=text) == []
    cases = similarity.sounds_like(text)
    assert [c["slug"] for c in cases] == ["zstack-mariadb-v2v"]
    best = cases[0]
    assert similarity.SOUNDS_LIKE_THRESHOLD <= best["score"] <= 1
    from kb.search.tokenizer import tokenize

    # Shared terms are words as the ticket wrote them, not index stems ("migrat").
    assert {"mariadb", "index"} <= set(best["shared_terms"])
    assert {"migration", "migrated"} & set(best["shared_terms"]) and "migrat" not in best["shared_terms"]
    # Every shared term is in the ticket and in the case's index.
    case_tokens = set()
    for case in Case.objects.filter(slug="zstack-mariadb-v2v"):
        case_tokens |= set(case.search_text.split()) | set(case.search_title.split())
    for term in best["shared_terms"]:
        assert term.lower() in text.lower() and set(tokenize(term)) & case_tokens, term
    # Explained in words through the one explanation of similarity.
    assert best["why"].startswith("symptom text: ") and "mariadb" in best["why"]
    assert best["url"] == "/cases/zstack-mariadb-v2v/en/"
    assert best["shared_rules"] == [] and best["matched_features"] == []


def test_the_case_comes_in_the_readers_language(founding):
    text = (TICKETS / "v2v-mariadb-slow.txt").read_text()
    best = similarity.sounds_like(text, language="zh")[0]
    assert best["language"] == "zh"
    assert best["title"] == Case.objects.get(slug="zstack-mariadb-v2v", language="zh").title


def test_a_chinese_write_up_sounds_like_the_kunpeng_case(founding):
    text = (
        "客户反馈：鲲鹏服务器上 STREAM 内存带宽测试结果从 15000 降到 6000 MB/s，"
        "之前做过磁盘测试，页缓存很大。"
    )
    cases = similarity.sounds_like(text, language="zh")
    assert cases and cases[0]["slug"] == "kunpeng-stream-zone-reclaim"
    assert "鲲鹏" in cases[0]["shared_terms"]


def test_an_unrelated_ticket_sounds_like_nothing(founding):
    # It shares a few common words ("has", "same", "cannot") with some cases:
    # words no case holds weigh most, so those few are far from enough.
    assert similarity.sounds_like((TICKETS / "password-reset.txt").read_text()) == []
    assert similarity.sounds_like("the weather is nice today and lunch was good") == []
    assert similarity.sounds_like("") == []
    assert similarity.sounds_like("1 2 3 4 5") == []


def test_excluded_case_groups_are_left_out(founding):
    text = (TICKETS / "v2v-mariadb-slow.txt").read_text()
    assert similarity.sounds_like(text, exclude=["zstack-mariadb-v2v"]) == []


def test_case_digest_names_the_fix_and_its_effect(founding):
    digest = similarity.case_digest("zstack-mariadb-v2v", "en")
    assert digest["case"].language == "en" and digest["case"].cause
    fixed = [s["measure"].slug for s in digest["fixed"]]
    # The applied steps in order; recommended and rejected ones are not "what fixed it".
    assert fixed[:2] == ["disable-cpu-hotplug", "pin-vcpus"] and "pin-iothreads" not in fixed
    (metric,) = digest["metrics"]
    assert (metric["before"], metric["after"], metric["unit"], metric["change"]) == (120, 58, "s", -52)
    assert similarity.case_digest("zstack-mariadb-v2v", "zh-hans")["case"].language == "zh"
    assert similarity.case_digest("no-such-case") is None
