"""Acceptance: a promoted draft goes through review to publication with a
second person, in Debian's Chromium. The author translates the pre-filled
Chinese version and submits; a support engineer returns it with a comment;
the author answers and submits again; the support engineer approves and both
language versions are published. Screenshots go to test-output/case-review/."""

from __future__ import annotations

import pytest

from tests.troubleshoot.wizard_browser import Shots, chromium_page, login, unhashed_static  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SLUG = "session-3-slow-create-index"


@pytest.fixture
def draft(django_user_model, unhashed_static):  # noqa: F811
    from accounts.services import add_member, create_team
    from kb import services
    from kb.models import Case

    alice = django_user_model.objects.create_user("alice", password="alice-pw-12345")
    add_member(team=create_team(name="DB"), user=alice)
    sam = django_user_model.objects.create_user("sam", password="sam-pw-123456")
    add_member(team=create_team(name="Support"), user=sam, role="support")
    for language, pending in (("en", False), ("zh", True)):
        case = Case(
            slug=SLUG, language=language, title="Slow CREATE INDEX in a migrated guest",
            symptom="CREATE INDEX takes 120 s", cause="vCPUs float across both host nodes",
            state=Case.State.DRAFT, author=alice, translation_pending=pending,
        )  # fmt: skip
        services.save_case(case, steps=[], metrics=[])
        services.record_revision(case=case, user=alice, action="created")


def _submit(page):
    page.click("#submit-review")
    page.wait_for_selector("#review[data-state='review']")


def test_review_then_publish_with_a_second_user(draft, live_server, monkeypatch):
    shot = Shots("case-review")
    base = live_server.url
    case_url = f"{base}/cases/{SLUG}/en/"
    with chromium_page() as author:
        login(author, base, "alice", "alice-pw-12345")
        author.goto(case_url)
        assert author.locator("#submit-review").is_disabled()  # the Chinese version is not translated yet
        assert "Chinese" in author.locator("#submission-problems").inner_text()
        author.click("#edit-zh")
        author.fill("#id_title", "迁移后的虚拟机中 CREATE INDEX 很慢")
        author.fill("#id_cause", "vCPU 在宿主机两个节点间漂移")
        author.click("#save-case")
        author.wait_for_selector("#submit-review:not([disabled])")
        author.fill("#id_submit_comment", "Both versions ready")
        _submit(author)
        assert author.locator("#waiting-review").is_visible()
        shot(author, "submitted")

        reviewer = author.context.browser.new_context().new_page()
        login(reviewer, base, "sam", "sam-pw-123456")
        reviewer.goto(case_url)
        reviewer.fill("#id_review_comment", "Add the host CPU model to the environment.")
        reviewer.click("#return")
        reviewer.wait_for_selector("#review[data-state='draft']")
        shot(reviewer, "returned")

        author.goto(case_url)
        assert "Add the host CPU model" in author.locator("#review-comments").inner_text()
        author.click("#edit-en")
        author.fill("#id_environment_notes", "Host: 2 x Xeon Gold 6230, 2 NUMA nodes")
        author.click("#save-case")
        author.wait_for_selector("#submit-review:not([disabled])")
        _submit(author)

        reviewer.goto(case_url)
        reviewer.click("#approve")
        reviewer.wait_for_selector(".badge:has-text('published')")
        assert reviewer.locator("#review").count() == 0
        shot(reviewer, "published")
        reviewer.goto(f"{base}/cases/{SLUG}/en/history/")
        assert reviewer.locator(".kb-revision[data-action='approved']").count() == 1
        assert (
            "Xeon Gold 6230"
            in reviewer.locator(".kb-revision[data-action='edited'] pre.diff").first.inner_text()
        )
        shot(reviewer, "history")

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from kb.models import Case

    versions = Case.objects.filter(slug=SLUG)
    assert {(c.language, c.state, c.reviewer.username) for c in versions} == {
        ("en", "published", "sam"),
        ("zh", "published", "sam"),
    }
