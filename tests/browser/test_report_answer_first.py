"""Issue 13 in headless Chromium (Debian's, through Playwright): the report
leads with the answer (best matching case, its fix and measured effect, why
it matched, the session button) within the first screen; starting a
troubleshooting session from it brings the host and its cluster sibling; the
snapshot list and the dashboard show 250 snapshots newest first, page by
page; a pasted customer ticket that no rule matches shows the cases that
sound like it. Screenshots go to test-output/."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.utils import timezone

from tests.browser.test_report_page import OUTPUT, open_page
from tests.browser.test_report_page import browser as browser
from tests.browser.test_report_page import zstack as zstack
from tests.conftest import FIXTURES
from tests.triage.test_list_newest_first import add_snapshots
from triage import analysis, uploads

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TICKET = FIXTURES / "tickets" / "v2v-mariadb-slow.txt"
VIEWPORT_HEIGHT = 900


@pytest.fixture
def zstack_case(zstack):
    """What the header must show, read before the browser starts (no ORM
    calls in Playwright's thread)."""
    from kb.models import Case

    case = Case.objects.get(slug="zstack-mariadb-v2v", language="en")
    fixed = [s.measure.title_en for s in case.steps.filter(status="applied").select_related("measure")]
    return {**zstack, "case_title": case.title, "fixed": fixed}


def test_report_header_shows_the_case_its_fix_and_the_session_button(zstack_case, live_server, browser):
    OUTPUT.mkdir(exist_ok=True)
    host = zstack_case["host"]
    page = open_page(browser, live_server, zstack_case["session"], "en")
    page.goto(f"{live_server.url}/snapshots/{host.pk}/")
    header = page.locator("#report-header")
    header.wait_for()
    # The answer is on the first screen, above the findings.
    assert header.bounding_box()["y"] < VIEWPORT_HEIGHT
    assert page.locator("#start-session").bounding_box()["y"] + 40 < VIEWPORT_HEIGHT
    assert header.bounding_box()["y"] < page.locator("#findings-heading").bounding_box()["y"]
    best = page.locator("#best-case")
    assert best.get_attribute("data-slug") == "zstack-mariadb-v2v"
    assert best.locator("h3 a").inner_text() == zstack_case["case_title"]
    assert best.locator("h3 a").get_attribute("href") == "/cases/zstack-mariadb-v2v/en/"
    assert "Cause:" in best.locator(".best-cause").inner_text()
    # What fixed it, by title and in order, each linked to the catalogue.
    links = page.locator("#best-fix a.measure-link")
    assert links.all_inner_texts() == zstack_case["fixed"]
    assert links.first.get_attribute("href") == "/cases/measures/disable-cpu-hotplug/"
    assert re.search(r"120 → 58 s \(-52 %\)", page.locator("#best-effect").inner_text())
    assert "Shares the findings" in page.locator("#best-why").inner_text()
    # The findings with the largest impact link to their cards.
    top = page.locator("#top-findings li a")
    assert top.count() == 3
    target = top.first.get_attribute("href")
    assert page.locator(target).count() == 1
    button = page.locator("#start-session")
    assert button.inner_text() == "Start troubleshooting session"
    assert "the other host of cluster zstack-v2v" in page.locator(".start-session").inner_text()
    page.screenshot(path=str(OUTPUT / "report-answer-first-en.png"))
    page.screenshot(path=str(OUTPUT / "report-answer-first-en-full.png"), full_page=True)


def test_starting_a_session_from_the_report(zstack_case, live_server, browser):
    host, guest = zstack_case["host"], zstack_case["guest"]
    page = open_page(browser, live_server, zstack_case["session"], "en")
    page.goto(f"{live_server.url}/snapshots/{host.pk}/")
    page.click("#start-session")
    page.wait_for_selector("#problem-form")
    # Pre-filled with this snapshot and its cluster sibling, no picking from a list of file names.
    assert page.locator("#problem-form input[name=title]").input_value() == host.display_name
    assert "kvm.vcpus_unpinned" in page.locator("#problem-form textarea[name=symptom]").input_value()
    assert page.locator(f"#from-cluster [data-snapshot='{guest.pk}']").inner_text() == guest.display_name
    page.fill("#problem-form input[name=title]", "zstack-9 guest slow after v2v")
    page.click("#problem-form button[type=submit]")
    page.wait_for_url(re.compile(r"/sessions/\d+/step/snapshots/$"))
    rows = page.locator("tr[data-snapshot]")
    rows.first.wait_for()
    attached = {rows.nth(i).get_attribute("data-snapshot") for i in range(rows.count())}
    assert attached == {str(host.pk), str(guest.pk)}
    page.screenshot(path=str(OUTPUT / "session-started-from-report.png"), full_page=True)


@pytest.fixture
def many(zstack):
    """250 more snapshots, uploaded a minute apart after the ZStack pair."""
    add_snapshots(zstack["user"], base=timezone.now() + dt.timedelta(minutes=1))
    return zstack


def _first_labels(page, n=3):
    return page.locator("table.snap-table tbody tr td:first-child a").all_inner_texts()[:n]


def test_lists_are_newest_first_with_250_snapshots(many, live_server, browser):
    page = open_page(browser, live_server, many["session"], "en")
    page.goto(f"{live_server.url}/snapshots/")
    assert _first_labels(page) == ["host-249", "host-248", "host-247"]
    assert "Page 1 of 6 (252 in all)" in page.locator("nav.pagination").inner_text()
    page.screenshot(path=str(OUTPUT / "snapshot-list-250-newest-first.png"))
    page.click("nav.pagination a.page-next")
    page.wait_for_url(re.compile(r"page=2$"))
    assert _first_labels(page) == ["host-199", "host-198", "host-197"]
    page.goto(f"{live_server.url}/snapshots/?page=6")
    # The oldest page ends with the first uploads (the ZStack pair).
    assert page.locator("table.snap-table tbody tr td:first-child a").all_inner_texts()[-2:] == [
        "zstack-9",
        "infoplus-db",
    ]
    page.goto(f"{live_server.url}/")
    recent = page.locator(".recent-snapshots table.snap-table tbody tr td:first-child a").all_inner_texts()
    assert recent[:3] == ["host-249", "host-248", "host-247"] and len(recent) == 10
    page.screenshot(path=str(OUTPUT / "dashboard-250-newest-first.png"), full_page=True)


def test_a_pasted_ticket_shows_cases_that_sound_like_it(zstack, live_server, browser, monkeypatch):
    monkeypatch.setattr(
        uploads,
        "enqueue_analysis",
        lambda *, snapshot_id: bool(analysis.analyze_snapshot_now(snapshot_id=snapshot_id)),
    )
    page = open_page(browser, live_server, zstack["session"], "en")
    page.goto(f"{live_server.url}/snapshots/new/")
    page.fill("textarea[name=transcript]", TICKET.read_text())
    page.fill("input[name=label]", "customer ticket")
    page.click("#upload-form button[type=submit]")
    page.wait_for_selector("#sounds-like")
    assert page.locator("h1").inner_text() == "customer ticket"
    assert page.locator("#no-known-problem").is_visible()
    case = page.locator("#sounds-like li.sounds-like-case").first
    assert case.get_attribute("data-slug") == "zstack-mariadb-v2v"
    terms = case.locator(".term").all_inner_texts()
    assert {"mariadb", "index"} <= set(terms) and {"migration", "migrated"} & set(terms)
    best = page.locator("#best-case")
    assert "Sounds like this known case" in best.inner_text()
    assert "mariadb" in page.locator("#best-why").inner_text()
    page.screenshot(path=str(OUTPUT / "report-pasted-ticket-sounds-like.png"), full_page=True)
