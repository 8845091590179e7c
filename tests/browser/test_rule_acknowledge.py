"""Acceptance (issue 16): in headless Chromium, acknowledge a finding on a
report, see it folded there and listed on the rule page; the rule page lists
the affected hosts of a 20-host cluster. The cluster is the founding Kunpeng
transcript uploaded once per host (see tests/triage/kunpeng_fleet.py).
Screenshots go to test-output/."""

from __future__ import annotations

import pytest

from tests.browser.test_report_page import OUTPUT, browser, open_page  # noqa: F401  (fixture)
from tests.triage.kunpeng_fleet import RULE, host_name, upload_fleet
from triage import uploads

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

HOSTS = 20


@pytest.fixture
def fleet(django_user_model, settings, tmp_path, monkeypatch):
    """Created before the browser starts (Playwright's loop makes Django refuse ORM calls)."""
    from django.test import Client

    from accounts.models import Membership, Team
    from kb.services import load_all

    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    load_all(use_real_engine=False)
    team = Team.objects.create(name="Kunpeng ops", slug="kunpeng-ops")
    user = django_user_model.objects.create_user("ops", password="ops-pass-12345")
    Membership.objects.create(user=user, team=team)
    snaps = upload_fleet(user, HOSTS)
    assert all(s.status == "done" and s.current_findings().filter(rule=RULE).exists() for s in snaps)
    client = Client()
    client.force_login(user)
    return {"snapshots": snaps, "session": client.cookies["sessionid"].value}


def test_acknowledge_on_the_report_then_the_rule_page(fleet, live_server, browser):  # noqa: F811
    OUTPUT.mkdir(exist_ok=True)
    snap = fleet["snapshots"][4]
    page = open_page(browser, live_server, fleet["session"], "en")
    page.goto(f"{live_server.url}/snapshots/{snap.pk}/")
    card = page.locator(f"article.finding[data-rule='{RULE}']")
    assert card.locator("table.evidence").is_visible()

    card.locator("details.ack-form summary").click()
    card.locator("textarea[name=reason]").fill("Kunpeng 920: 4 dies, distance 32 is the hardware")
    card.locator("details.ack-form button[type=submit]").click()
    page.wait_for_selector(f"article.finding.acknowledged[data-rule='{RULE}']")

    # Folded: the title, the rule and the acknowledgement stay; the evidence is hidden until asked for.
    card = page.locator(f"article.finding[data-rule='{RULE}']")
    assert "Kunpeng 920: 4 dies" in card.locator(".ack-box").inner_text()
    assert card.locator("h3").is_visible()
    assert not card.locator("table.evidence").is_visible()
    page.screenshot(path=str(OUTPUT / "report-acknowledged-folded.png"), full_page=True)
    card.locator("details.ack-fold summary").click()
    assert card.locator("table.evidence").is_visible()

    # The rule page: every host of the 20-host cluster, the acknowledged one marked,
    # the acknowledgement listed.
    card.locator(".rule-id a").click()
    page.wait_for_selector("#host-table")
    assert page.url.endswith(f"/rules/{RULE}/")
    rows = page.locator("#host-table tbody tr")
    assert rows.count() == HOSTS
    assert sorted(page.locator("#host-table tbody tr").evaluate_all("rs => rs.map(r => r.dataset.host)")) == [
        host_name(i) for i in range(1, HOSTS + 1)
    ]
    assert page.locator("#host-table tr.acknowledged").get_attribute("data-host") == snap.host_key
    assert page.locator("#rule-hosts").inner_text() == f"{HOSTS} hosts affected"
    assert "Kunpeng 920: 4 dies" in page.locator("#ack-table").inner_text()
    page.screenshot(path=str(OUTPUT / "rule-page-20-hosts.png"), full_page=True)

    # The rule list puts this rule first, with its 20 hosts.
    page.goto(f"{live_server.url}/rules/")
    first = page.locator("#rule-table tbody tr").first
    assert first.get_attribute("data-rule") == RULE and first.get_attribute("data-hosts") == str(HOSTS)
