"""Acceptance: a case written on the New case page, with a snapshot, goes
through review to publication, in Debian's Chromium. The author (a team
member) opens "New case" from the navigation, writes the English version,
picks an analysed snapshot of hers, saves the draft, translates the
pre-filled Chinese version and sends the case to review; a support engineer
publishes it. Screenshots go to test-output/case-new/."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES
from tests.troubleshoot.wizard_browser import Shots, chromium_page, login, unhashed_static  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ZSTACK = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before" / "zstack-9.txt"
SLUG = "mariadb-slow-in-a-guest-without-pinning"


@pytest.fixture
def people(django_user_model, unhashed_static):  # noqa: F811
    from accounts.services import add_member, create_team
    from kb import services
    from triage import analysis, uploads

    services.load_catalogue()
    alice = django_user_model.objects.create_user("alice", password="alice-pw-12345")
    add_member(team=create_team(name="DB"), user=alice)
    sam = django_user_model.objects.create_user("sam", password="sam-pw-123456")
    add_member(team=create_team(name="Support"), user=sam, role="support")
    snap = uploads.create_snapshot(
        owner=alice, data=ZSTACK.read_bytes(), filename=ZSTACK.name, label="zstack-9"
    )
    return {"snapshot": analysis.analyze_snapshot_now(snapshot_id=snap.pk, force=True)}


def test_a_case_written_with_a_snapshot_is_reviewed_and_published(people, live_server, monkeypatch):
    shot = Shots("case-new")
    base = live_server.url
    with chromium_page() as author:
        login(author, base, "alice", "alice-pw-12345")
        author.goto(f"{base}/cases/")
        author.click("#nav-new-case")
        author.wait_for_selector("#case-new-form")
        author.fill("#id_title", "MariaDB slow in a guest without pinning")
        author.fill("#id_symptom", "CREATE INDEX takes about 120 s in the migrated guest.")
        author.fill("#id_cause", "The vCPUs float over both host nodes; CPU hot-plug is on.")
        author.fill("#id_resolution_summary", "Pin the vCPUs to one node and give the guest a NUMA cell.")
        author.fill("#id_references", "ZSTACK-48375 https://example.org/ZSTACK-48375 migrated guest")
        author.check("#case-measures input[value='pin-vcpus']")
        author.select_option("#id_snapshot", str(people["snapshot"].pk))
        shot(author, "form")
        author.click("#save-new-case")
        author.wait_for_url(f"**/cases/{SLUG}/en/")
        assert "ZSTACK-48375" in author.locator("body").inner_text()
        assert author.locator("#submit-review").is_disabled()  # the Chinese version is pre-filled
        shot(author, "draft")

        author.click("#edit-zh")
        author.fill("#id_title", "未绑核的云主机中 MariaDB 很慢")
        author.fill("#id_symptom", "迁移后的云主机里 CREATE INDEX 约需 120 秒。")
        author.fill("#id_cause", "vCPU 在宿主机两个节点间漂移，且开启了 CPU 热插拔。")
        author.click("#save-case")
        author.wait_for_selector("#submit-review:not([disabled])")
        author.click("#submit-review")
        author.wait_for_selector("#review[data-state='review']")
        shot(author, "submitted")

        reviewer = author.context.browser.new_context().new_page()
        login(reviewer, base, "sam", "sam-pw-123456")
        reviewer.goto(f"{base}/cases/{SLUG}/en/")
        reviewer.click("#approve")
        reviewer.wait_for_selector(".badge:has-text('published')")
        shot(reviewer, "published")

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from kb.models import Case

    versions = {c.language: c for c in Case.objects.filter(slug=SLUG)}
    assert {(lang, c.state, c.reviewer.username) for lang, c in versions.items()} == {
        ("en", "published", "sam"),
        ("zh", "published", "sam"),
    }
    case = versions["en"]
    assert case.signature_source == f"snapshot {people['snapshot'].pk}"
    assert "kvm.vcpus_unpinned" in case.signature_rules and case.hypervisor == "KVM"
    assert [s.measure.slug for s in case.steps.all()] == ["pin-vcpus"]


def test_the_new_case_and_import_pages_fit_a_phone_in_both_languages(people, live_server):
    """The pages' own check of tests/browser/test_every_page_mobile.py (390 px)."""
    base = live_server.url
    for locale in ("en-US", "zh-CN"):
        with chromium_page(locale=locale) as page:
            login(page, base, "alice", "alice-pw-12345")
            page.set_viewport_size({"width": 390, "height": 844})
            for path in ("/cases/new/", "/cases/import/"):
                page.goto(f"{base}{path}")
                width = page.evaluate("document.documentElement.scrollWidth")
                assert width <= 390, f"{path} [{locale}] is {width} px wide"
