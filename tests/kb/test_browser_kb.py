"""Acceptance 4: a real browser (Debian's Chromium through Playwright) searches
the knowledge base for 大页 and opens a case page. Screenshots go to
test-output/kb-search-hugepages.png and test-output/kb-case-zstack-{zh,en}.png."""

from __future__ import annotations

import pytest

from kb import services
from tests.chromium import shared_browser
from tests.conftest import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OUTPUT = ROOT / "test-output"
PASSWORD = "kb-browser-password-1"


@pytest.fixture
def reader(django_user_model):
    # Data and account exist before the browser starts: Playwright's event loop
    # in this thread makes Django refuse synchronous ORM calls afterwards.
    services.load_all()
    return django_user_model.objects.create_user("kb-browser", password=PASSWORD)


@pytest.fixture
def page():
    with shared_browser() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900}, locale="en-US")
        page.set_default_timeout(15_000)
        yield page


def _login(page, live_server):
    page.goto(f"{live_server.url}/cases/")
    page.fill("#id_username", "kb-browser")
    page.fill("#id_password", PASSWORD)
    page.click("form.stacked button[type=submit]")
    page.wait_for_url(f"{live_server.url}/cases/")


def test_search_for_huge_pages_and_open_a_case(reader, live_server, page):
    OUTPUT.mkdir(exist_ok=True)
    _login(page, live_server)

    page.fill("#id_q", "大页")
    page.click(".kb-search button[type=submit]")
    page.wait_for_selector(".kb-hit mark")
    slugs = page.locator(".kb-hit").evaluate_all("els => els.map(e => e.dataset.slug)")
    assert {"zstack-mariadb-v2v", "percona-numa-interleave-startup"} <= set(slugs)
    # the English UI shows the English versions: the glossary's "huge pages" is marked
    marks = {m.lower() for m in page.locator(".kb-hit mark").all_inner_texts()}
    assert {"huge", "pages"} <= marks
    assert "q=%E5%A4%A7%E9%A1%B5" in page.url  # htmx pushed the query into the address bar
    page.screenshot(path=str(OUTPUT / "kb-search-hugepages.png"), full_page=True)

    # one hit per case, in the reader's language; the Chinese version is one click away
    languages = page.locator(".kb-hit").evaluate_all("els => els.map(e => e.dataset.language)")
    assert set(languages) == {"en"} and len(languages) == len(slugs)
    page.click('.kb-hit[data-slug="zstack-mariadb-v2v"] a.kb-other')
    page.wait_for_selector("article.kb-case")
    assert "/cases/zstack-mariadb-v2v/zh/" in page.url
    assert page.locator("article.kb-case h1").inner_text().startswith("v2v 迁移")
    metrics = page.locator("article.kb-case table").inner_text()
    assert "120 s" in metrics and "58 s" in metrics
    assert page.locator("aside a[href='/cases/openstack-kvm-crm-cpu/zh/']").count() == 1
    page.screenshot(path=str(OUTPUT / "kb-case-zstack-zh.png"), full_page=True)

    page.click("a[hreflang=en]")
    page.wait_for_url(f"{live_server.url}/cases/zstack-mariadb-v2v/en/")
    assert "CREATE INDEX" in page.locator("article.kb-case").inner_text()
    page.screenshot(path=str(OUTPUT / "kb-case-zstack-en.png"), full_page=True)
