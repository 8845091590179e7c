"""Support staff add a webhook, send a test and read the delivery log in a
real browser (Debian's Chromium); the receiver is a real local HTTP server
that fails the first POST. Screenshots go to test-output/."""

from __future__ import annotations

import pytest

from accounts.models import Membership, Team
from tests.browser.test_login_language import OUTPUT, PASSWORD, unhashed_static_files  # noqa: F401 (autouse)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def support(django_user_model):
    team = Team.objects.create(name="Team A", slug="team-a")
    user = django_user_model.objects.create_user("browser", password=PASSWORD)
    Membership.objects.create(user=user, team=team, role="admin")  # the team's administrator
    return user


def test_add_webhook_send_test_and_read_the_log(support, receiver, live_server, browser_page):
    page = browser_page
    OUTPUT.mkdir(exist_ok=True)
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "browser")
    page.fill("#id_password", PASSWORD)
    page.click("form.stacked button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")

    page.click("nav.main-nav >> text=Integrations")
    page.click("#webhooks >> text=Team A")
    page.fill("#id_url", receiver.url)
    page.check("input[name=events][value='analysis.done']")
    page.check("input[name=events][value='analysis.failed']")
    page.click("form >> text=Add")
    secret = page.locator("[data-testid=webhook-secret]").inner_text()
    assert len(secret) == 64

    receiver.statuses = [500]
    page.click("form >> text=Send test")
    page.wait_for_selector("tr.delivery-delivered")
    row = page.locator("tr.delivery-delivered").inner_text()
    assert "webhook.test" in row and "200" in row
    page.click("tr.delivery-delivered summary")
    attempts = page.locator("tr.delivery-delivered ol").inner_text()
    assert "500" in attempts and "200" in attempts
    page.screenshot(path=str(OUTPUT / "integrations-webhook-log.png"), full_page=True)
    assert len(receiver.received) == 2
