"""A real browser (Debian's Chromium through Playwright) signs in, switches the
UI to Simplified Chinese and signs out. Screenshots go to test-output/."""

import pytest

from tests.conftest import ROOT

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OUTPUT = ROOT / "test-output"
PASSWORD = "browser-test-password-1"


@pytest.fixture(autouse=True)
def unhashed_static_files(settings):
    # The live server serves static files from the finders by their plain names;
    # a manifest left in the data directory by `make run` must not hash them.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


@pytest.fixture
def account(django_user_model):
    # Created before the browser starts: Playwright's event loop in this thread
    # would make Django refuse synchronous ORM calls afterwards.
    return django_user_model.objects.create_user("browser", password=PASSWORD)


def test_login_switch_to_chinese_and_logout(account, live_server, browser_page):
    page = browser_page
    OUTPUT.mkdir(exist_ok=True)

    page.goto(f"{live_server.url}/")
    assert "/accounts/login/" in page.url
    page.fill("#id_username", "browser")
    page.fill("#id_password", PASSWORD)
    page.screenshot(path=str(OUTPUT / "browser-login-en.png"))
    page.click("form.stacked button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")

    nav = page.locator("nav.main-nav")
    english = ["Dashboard", "Snapshots", "Cases", "New", "case", "Sessions", "Rules", "Inbox", "Integrations"]
    assert nav.inner_text().split() == english
    assert page.locator("h1").inner_text() == "Dashboard"
    # The stylesheet is served and applied (the header is dark).
    assert page.evaluate("getComputedStyle(document.querySelector('.site-header')).backgroundColor") != (
        "rgba(0, 0, 0, 0)"
    )
    page.screenshot(path=str(OUTPUT / "browser-dashboard-en.png"), full_page=True)

    page.click("form.lang-switch button[value=zh-hans]")
    page.wait_for_selector("html[lang=zh-hans]")
    assert nav.inner_text().split() == [
        "概览",
        "快照",
        "案例",
        "新建案例",
        "排障会话",
        "规则",
        "收件箱",
        "集成",
    ]
    assert page.locator("h1").inner_text() == "概览"
    assert page.url == f"{live_server.url}/"
    page.screenshot(path=str(OUTPUT / "browser-dashboard-zh.png"), full_page=True)

    page.click("form.logout button")
    page.wait_for_url("**/accounts/login/**")
    # Still Chinese after signing out: the choice lives in a cookie, not the session.
    assert page.locator("h1").inner_text() == "登录"
    page.screenshot(path=str(OUTPUT / "browser-logged-out-zh.png"))
