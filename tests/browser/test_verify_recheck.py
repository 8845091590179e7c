"""Issue 25 point 1 in headless Chromium: a session whose after-snapshot holds
only lscpu and numactl -H. The verify step lists the rules it could not
re-check, with the commands and the paste box of the after-snapshot, and never
calls them "Cleared"; pasting the output re-checks them on the same snapshot."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from tests.troubleshoot.test_troubleshoot_verify import KUNPENG, kunpeng_session
from tests.troubleshoot.wizard_browser import (
    Shots,
    chromium_page,
    htmx_idle,
    login,
    unhashed_static,  # noqa: F401 (fixture)
)
from triage import analysis, uploads

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "verify-recheck-pass-1"
RULE = "numa.local_node_pagecache_pressure"


def db(fn):
    """Run an ORM call from a plain thread: Playwright's loop runs in this one."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:  # re-raised in the test's thread
            out["error"] = exc
        finally:
            connection.close()

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if "error" in out:
        raise out["error"]
    return out.get("value")


@pytest.fixture
def engineer(django_user_model, settings, tmp_path, monkeypatch, unhashed_static):  # noqa: F811
    from accounts.models import Membership, Team
    from kb.services import load_all

    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(
        uploads,
        "enqueue_analysis",
        lambda *, snapshot_id: bool(analysis.analyze_snapshot_now(snapshot_id=snapshot_id)),
    )
    load_all()
    user = django_user_model.objects.create_user("alice", password=PASSWORD)
    Membership.objects.create(user=user, team=Team.objects.create(name="DB", slug="db"), role="engineer")
    return user


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_verify_lists_what_it_could_not_recheck(engineer, live_server, language):
    session, after = db(lambda: kunpeng_session({"alice": engineer}))
    shot = Shots(f"verify-recheck-{language}")
    base = live_server.url
    locale = "zh-CN" if language == "zh-hans" else "en-US"
    with chromium_page(locale=locale) as page:
        login(page, base, "alice", PASSWORD)
        page.context.add_cookies([{"name": "django_language", "value": language, "url": base}])
        page.goto(f"{base}/sessions/{session.pk}/step/verify/")
        page.wait_for_selector("#verification")
        item = page.locator(f"#unverified li[data-rule='{RULE}']")
        assert item.count() == 1
        commands = item.locator("code.command").all_inner_texts()
        assert "cat /sys/devices/system/node/node*/meminfo" in commands
        assert page.locator(f"#cleared li[data-rule='{RULE}']").count() == 0
        heading = page.locator("#unverified-section h3.unverified").inner_text()
        assert ("无法重新检查" if language == "zh-hans" else "Could not be re-checked") in heading
        shot(page, "verify")
        if language != "en":
            return
        # The after-snapshot's missing output, pasted: the rule is checked again
        # (memory unchanged: it is still there) on the same snapshot.
        text = (KUNPENG / "before" / "gp-sdw03.txt").read_text(encoding="utf-8")
        start = text.index("[root@gp-sdw03 ~]# cat /sys/devices/system/node/node0/meminfo")
        end = text.index("[root@gp-sdw03 ~]# ./stream")
        form = page.locator("#unverified-section #paste-form")
        form.locator("textarea[name=output]").fill(text[start:end])
        form.locator("button[type=submit]").click()
        page.wait_for_url(f"{base}/sessions/{session.pk}/step/verify/")
        htmx_idle(page)
        page.wait_for_selector(f"#remaining li[data-rule='{RULE}']")
        assert page.locator(f"#unverified li[data-rule='{RULE}']").count() == 0
        assert page.locator(f"#cleared li[data-rule='{RULE}']").count() == 0
        shot(page, "after-paste")
    assert db(lambda: after.added_artifacts.count()) == 1
