"""Case review (draft -> in review -> published, a second person approves or
returns with comments; both language versions), revision history with diffs,
and "this case helped" reuse counts."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from accounts.services import add_member, create_team
from kb import history, services
from kb.models import Case, CaseReuse, CaseRevision

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(django_user_model):
    team = create_team(name="DB")
    support_team = create_team(name="Support")
    out = {}
    for name, t, role in (
        ("alice", team, "engineer"),
        ("bob", team, "engineer"),
        ("sam", support_team, "support"),
    ):
        out[name] = django_user_model.objects.create_user(name, password=f"{name}-pw-12345")
        add_member(team=t, user=out[name], role=role)
    return out


@pytest.fixture
def draft(people):
    """A promoted-like draft: English written, Chinese pre-filled."""
    versions = {}
    for language, pending in (("en", False), ("zh", True)):
        case = Case(
            slug="session-9-slow-index",
            language=language,
            title="Slow CREATE INDEX on guest db-7",
            symptom="CREATE INDEX takes 120 s",
            cause="vCPUs float across host nodes",
            state=Case.State.DRAFT,
            author=people["alice"],
            translation_pending=pending,
        )
        services.save_case(case, steps=[], metrics=[])
        services.record_revision(case=case, user=people["alice"], action=CaseRevision.Action.CREATED)
        versions[language] = case
    return versions


def test_submit_needs_both_languages_translated(draft, people):
    problems = services.submission_problems(draft)
    assert len(problems) == 1 and "Chinese" in problems[0]
    with pytest.raises(services.ReviewError):
        services.submit_for_review(slug="session-9-slow-index", user=people["alice"])
    # bob (same team, not the author) may not touch alice's draft
    with pytest.raises(PermissionDenied):
        services.edit_case(case=draft["zh"], user=people["bob"], changes={"title": "x"})
    services.edit_case(case=draft["zh"], user=people["alice"], changes={"title": "db-7 上 CREATE INDEX 很慢"})
    assert services.submission_problems(services.case_group("session-9-slow-index")) == []
    services.submit_for_review(slug="session-9-slow-index", user=people["alice"], comment="please check")
    states = set(Case.objects.filter(slug="session-9-slow-index").values_list("state", flat=True))
    assert states == {Case.State.IN_REVIEW}
    # in review: no longer editable by the author, still not public
    with pytest.raises(PermissionDenied):
        services.edit_case(
            case=Case.objects.get(pk=draft["en"].pk), user=people["alice"], changes={"title": "y"}
        )
    from kb.access import readable_cases

    assert not readable_cases(people["bob"]).filter(slug="session-9-slow-index").exists()


def _submitted(draft, people):
    services.edit_case(case=draft["zh"], user=people["alice"], changes={"title": "db-7 上 CREATE INDEX 很慢"})
    services.submit_for_review(slug="session-9-slow-index", user=people["alice"])


def test_reviewer_returns_with_comments_then_approves(draft, people):
    _submitted(draft, people)
    slug = "session-9-slow-index"
    for who in ("alice", "bob"):  # the author, and an engineer: neither reviews
        with pytest.raises(PermissionDenied):
            services.review_case(slug=slug, user=people[who], approve=True)
    with pytest.raises(services.ReviewError):
        services.review_case(slug=slug, user=people["sam"], approve=False, comment="  ")
    services.review_case(slug=slug, user=people["sam"], approve=False, comment="Name the host model.")
    en = Case.objects.get(slug=slug, language="en")
    assert en.state == Case.State.DRAFT
    assert [r.comment for r in history.review_comments(en)] == ["Name the host model."]
    services.edit_case(
        case=en, user=people["alice"], changes={"cause": "vCPUs float across both nodes of a 2-socket host"}
    )
    services.submit_for_review(slug=slug, user=people["alice"])
    services.review_case(slug=slug, user=people["sam"], approve=True)
    for case in Case.objects.filter(slug=slug):
        assert case.state == Case.State.PUBLISHED and case.reviewer == people["sam"] and case.published_at
    # bob now reads it, and search finds it
    from kb.access import readable_cases

    assert readable_cases(people["bob"]).filter(slug=slug).count() == 2
    actions = list(en.revisions.order_by("number").values_list("action", flat=True))
    assert actions == ["created", "submitted", "returned", "edited", "submitted", "approved"]


def test_history_shows_line_diffs(draft, people):
    services.edit_case(
        case=draft["en"], user=people["alice"], changes={"cause": "vCPUs float across host nodes; no vNUMA"}
    )
    entries = history.history(draft["en"])
    newest = entries[0]
    assert newest["revision"].action == "edited"
    (change,) = newest["changes"]
    assert change["field"] == "cause"
    assert ("-", "vCPUs float across host nodes") in change["rows"]
    assert ("+", "vCPUs float across host nodes; no vNUMA") in change["rows"]
    # the first revision lists every non-empty field as added
    assert {c["field"] for c in entries[-1]["changes"]} == {"title", "symptom", "cause"}


def test_review_pages_second_user(draft, people, client):
    _submitted(draft, people)
    en_url = reverse("kb:case_detail_lang", args=["session-9-slow-index", "en"])
    review = reverse("kb:case_review", args=["session-9-slow-index"])
    client.force_login(people["alice"])
    page = client.get(en_url).content.decode()
    assert 'id="waiting-review"' in page and 'id="approve"' not in page
    client.force_login(people["sam"])
    page = client.get(en_url).content.decode()
    assert 'id="approve"' in page
    response = client.post(review, {"action": "return", "comment": ""})
    assert response.status_code == 302
    assert Case.objects.get(pk=draft["en"].pk).state == Case.State.IN_REVIEW  # a comment is required
    client.post(review, {"action": "return", "comment": "<script>alert(1)</script> add the metric"})
    page = client.get(en_url).content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt; add the metric" in page
    history_page = client.get(reverse("kb:case_history", args=["session-9-slow-index", "zh"]))
    assert history_page.status_code == 200
    assert 'class="diff-add">+ db-7 上 CREATE INDEX 很慢' in history_page.content.decode()
    # an engineer of another team never sees the draft nor its history
    client.force_login(people["bob"])
    assert client.get(en_url).status_code == 404
    assert client.get(reverse("kb:case_history", args=["session-9-slow-index", "en"])).status_code == 404
    assert client.post(review, {"action": "approve"}).status_code == 404


def test_case_helped_from_search_counts_once(people, client):
    services.load_all(use_real_engine=False)
    slug = "zstack-mariadb-v2v"
    case_url = reverse("kb:case_detail_lang", args=[slug, "en"])
    client.force_login(people["bob"])
    assert 'id="helped"' not in client.get(case_url).content.decode()  # not reached from search
    page = client.get(case_url, HTTP_REFERER="http://testserver/cases/?q=vcpupin").content.decode()
    assert 'id="helped"' in page and 'data-count="0"' in page
    for _ in range(2):
        client.post(reverse("kb:case_helped", args=[slug]), {"next": "https://evil.example/"})
    assert CaseReuse.objects.filter(slug=slug).count() == 1
    page = client.get(case_url, HTTP_REFERER="http://testserver/cases/").content.decode()
    assert 'id="reuse-count" data-count="1"' in page and 'id="helped"' not in page
    # the count shows in search results, on the page and in the API
    results = client.get("/cases/", {"q": "vcpupin"}).content.decode()
    assert 'class="kb-reuse" data-count="1"' in results
    api = client.get("/api/v1/cases/", {"q": "vcpupin"}).json()
    counts = {hit["slug"]: hit["reuse_count"] for hit in api["results"]}
    assert counts[slug] == 1 and all(n == 0 for s, n in counts.items() if s != slug)
    assert client.get(f"/api/v1/cases/{slug}/").json()["reuse_count"] == 1
    # unknown and draft cases are refused
    assert client.post(reverse("kb:case_helped", args=["no-such-case"])).status_code == 404
