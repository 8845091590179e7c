"""The Content-Security-Policy in a real browser (Debian's Chromium through
Playwright): the pages work under it and the browser reports no violation.
The sign-in goes through the form (and so through the lockout backend)."""

from __future__ import annotations

import pytest

from tests.chromium import shared_browser

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "csp-browser-password-1"


@pytest.fixture
def world(django_user_model, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    user = django_user_model.objects.create_user("csp", password=PASSWORD)
    from troubleshoot.lifecycle import create_session

    return user, create_session(owner=user, title="CSP check")


@pytest.fixture
def page():
    with shared_browser() as browser:
        page = browser.new_page()
        page.set_default_timeout(20_000)
        page.violations = []
        page.on(
            "console",
            lambda m: "Content Security Policy" in m.text and page.violations.append(m.text),
        )
        page.on("pageerror", lambda e: page.violations.append(f"error: {e}"))
        yield page


def test_pages_work_under_the_policy(world, live_server, page, tmp_path):
    _user, session = world
    base = live_server.url
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", "csp")
    page.fill("#id_password", PASSWORD)
    page.click("form.stacked button[type=submit]")
    page.wait_for_url(f"{base}/")

    # The drop zone's script is a static file and runs.
    page.goto(f"{base}/snapshots/new/")
    sample = tmp_path / "uptime.txt"
    sample.write_text("$ uptime\n 10:00:00 up 1 day\n")
    page.set_input_files("#dropzone input[type=file]", str(sample))
    page.wait_for_function("document.getElementById('dropzone-names').textContent.includes('uptime.txt')")

    # htmx moves between wizard steps (a fragment swap) without inline styles.
    page.goto(f"{base}/sessions/{session.pk}/step/problem/")
    page.click(".wiz-steps a[data-step='constraints']")
    page.wait_for_selector("#step-panel[data-step='constraints']")
    assert page.url.endswith(f"/sessions/{session.pk}/step/constraints/")  # HX-Push-Url
    assert page.evaluate("htmx.config.includeIndicatorStyles") is False

    page.goto(f"{base}/snapshots/")
    assert page.violations == []
