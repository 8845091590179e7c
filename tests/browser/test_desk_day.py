"""Acceptance (issue 28): a support desk's day in Debian's Chromium. alice
pastes a ticket whose first line holds its key (the ZStack seed's write-up
with its outputs) -> the key is on the snapshot and on the session she starts
from it; she assigns the session to bob -> it is in bob's inbox; she sends her
draft case to review -> it is in sam's review queue and inbox; sam returns it
with a comment -> alice's inbox has the comment. Screenshots go to
test-output/desk-day/."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES
from tests.troubleshoot.wizard_browser import Shots, chromium_page, login, unhashed_static  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SLUG = "session-7-mariadb-v2v"
TITLES = {"en": "MariaDB in a migrated guest is slow", "zh": "迁移后的虚拟机中 MariaDB 变慢"}
PASTE = "ZSTACK-48375 MariaDB in a v2v-migrated guest is 2x slower\n\n" + (
    FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before" / "zstack-9.txt"
).read_text(encoding="utf-8")


@pytest.fixture
def desk(django_user_model, unhashed_static):  # noqa: F811
    from accounts.services import add_member, create_team
    from kb import services
    from kb.models import Case

    team = create_team(name="DB")
    users = {}
    for name, role, t in (("alice", "engineer", team), ("bob", "engineer", team)):
        users[name] = django_user_model.objects.create_user(name, password=f"{name}-pw-12345")
        add_member(team=t, user=users[name], role=role)
    users["sam"] = django_user_model.objects.create_user("sam", password="sam-pw-123456")
    add_member(team=create_team(name="Support"), user=users["sam"], role="support")
    for language in ("en", "zh"):
        case = Case(
            slug=SLUG, language=language,
            title=TITLES[language],
            symptom="CREATE INDEX takes 120 s", cause="vCPUs float across both host nodes",
            state=Case.State.DRAFT, author=users["alice"],
        )  # fmt: skip
        services.save_case(case, steps=[], metrics=[])
        services.record_revision(case=case, user=users["alice"], action="created")
    return users


def test_a_day_at_the_desk(desk, live_server):
    shot = Shots("desk-day")
    base = live_server.url
    with chromium_page() as alice:
        login(alice, base, "alice", "alice-pw-12345")
        alice.goto(f"{base}/snapshots/new/")
        alice.fill("#id_transcript", PASTE)
        alice.click("#upload-form button[type=submit]")
        alice.wait_for_selector("#snapshot-status[data-status='done']", timeout=60_000)
        assert "ZSTACK-48375" in alice.content()
        shot(alice, "report-with-ticket")

        alice.click("#start-session")
        alice.fill("#id_title", "MariaDB slow after v2v")
        alice.click("#problem-form button[type=submit]")
        alice.wait_for_selector("#people")
        assert "ZSTACK-48375" in alice.locator("#people").inner_text()
        alice.select_option("#people select[name=assignee]", label="bob")
        alice.click("#people form.inline-form button[type=submit] >> nth=0")
        alice.wait_for_selector("#session-assignee:has-text('bob')")
        shot(alice, "session-assigned")

        bob = alice.context.browser.new_context().new_page()
        login(bob, base, "bob", "bob-pw-12345")
        bob.goto(f"{base}/inbox/")
        assert bob.locator("[data-kind='session_assigned']").count() == 1
        assert "MariaDB slow after v2v" in bob.locator("[data-kind='session_assigned']").inner_text()
        assert bob.locator(".nav-count").inner_text() == "1"
        shot(bob, "assignee-inbox")

        alice.goto(f"{base}/cases/{SLUG}/en/")
        alice.fill("#id_submit_comment", "Ready for review")
        alice.click("#submit-review")
        alice.wait_for_selector("#review[data-state='review']")

        sam = alice.context.browser.new_context().new_page()
        login(sam, base, "sam", "sam-pw-123456")
        sam.goto(f"{base}/inbox/")
        assert sam.locator(f"#review-queue [data-review='{SLUG}']").count() == 1
        assert sam.locator("[data-kind='review_requested']").count() == 1
        shot(sam, "reviewer-queue")
        sam.goto(f"{base}/cases/{SLUG}/en/")
        sam.fill("#id_review_comment", "Add the host's numactl -H to the environment.")
        sam.click("#return")
        sam.wait_for_selector("#review[data-state='draft']")

        alice.goto(f"{base}/inbox/")
        returned = alice.locator("[data-kind='case_returned']")
        assert returned.count() == 1
        assert "Add the host's numactl -H" in returned.inner_text()
        shot(alice, "author-inbox")
