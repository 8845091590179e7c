"""Issue 12, acceptance 4 in headless Chromium: for each founding case, the
snapshot with one needed block removed; the engineer pastes the real output
into the report page, the SAME snapshot is analysed again and the missing
finding appears, with the earlier analysis kept. Also: the not-checked list's
copy buttons put the exact command on the clipboard."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from tests.browser.test_report_page import OUTPUT, browser, open_page  # noqa: F401 - fixture
from tests.triage.founding_gaps import GAPS
from triage import analysis, uploads
from triage.models import Snapshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def engineer(django_user_model, settings, tmp_path, monkeypatch):
    settings.MEDIA_ROOT = tmp_path / "media"
    # The re-analysis runs in the web process right after the paste commits.
    monkeypatch.setattr(
        uploads,
        "enqueue_analysis",
        lambda *, snapshot_id: bool(analysis.analyze_snapshot_now(snapshot_id=snapshot_id)),
    )
    user = django_user_model.objects.create_user("paster", password="paste-page-pass-1")
    from django.test import Client

    client = Client()
    client.force_login(user)
    return {"user": user, "session": client.cookies["sessionid"].value}


def cut_snapshot(user, gap) -> tuple[Snapshot, str]:
    text, block = gap.split()
    snap = uploads.create_snapshot(
        owner=user, data=text.encode(), filename=gap.host_file, label=gap.path.stem
    )
    done = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    assert done.status == "done", done.last_error
    assert not done.current_findings().filter(rule=gap.rule).exists()
    return done, block


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


def paste_box(page):
    """The paste form: in the not-checked list, or under "Add evidence" when
    nothing is listed (opened first)."""
    if page.locator("#not-checked #paste-form").count():
        return page.locator("#not-checked #paste-form")
    page.locator("#add-evidence > summary").click()
    return page.locator("#add-evidence #paste-form")


@pytest.mark.parametrize("gap", GAPS, ids=lambda g: g.slug)
def test_pasting_the_missing_output_on_the_report_page(engineer, live_server, browser, gap):  # noqa: F811
    snap, block = db(lambda: cut_snapshot(engineer["user"], gap))
    page = open_page(browser, live_server, engineer["session"], "en")
    report = f"{live_server.url}/snapshots/{snap.pk}/"
    page.goto(report)
    assert page.locator(f"article.finding[data-rule='{gap.rule}']").count() == 0

    form = paste_box(page)
    form.locator("textarea[name=output]").fill(block)
    form.locator("button[type=submit]").click()
    page.wait_for_selector(f"article.finding[data-rule='{gap.rule}']", timeout=30_000)

    assert page.url == report  # the same snapshot
    assert page.locator("#snapshot-status").get_attribute("data-status") == "done"
    assert "Earlier analyses" in page.locator("#history-heading").inner_text()
    added = page.locator("table.added-artifacts").inner_text()
    assert "pasted-output.txt" in added and "paster" in added
    assert db(lambda: Snapshot.objects.count()) == 1
    assert db(lambda: Snapshot.objects.get(pk=snap.pk).added_artifacts.count()) == 1
    OUTPUT.mkdir(exist_ok=True)
    page.screenshot(path=str(OUTPUT / f"pasted-{gap.slug}.png"), full_page=True)


@pytest.mark.parametrize("gap", GAPS, ids=lambda g: g.slug)
def test_the_removed_artifact_is_listed_with_its_command(engineer, live_server, browser, gap):  # noqa: F811
    snap, _block = db(lambda: cut_snapshot(engineer["user"], gap))
    page = open_page(browser, live_server, engineer["session"], "en")
    page.goto(f"{live_server.url}/snapshots/{snap.pk}/")
    item = page.locator(f"#not-checked li.not-checked-item[data-rule='{gap.rule}']")
    assert item.count() == 1
    commands = item.locator("code.command").all_inner_texts()
    assert any(gap.offered in c for c in commands), commands


def test_copy_button_puts_the_command_on_the_clipboard(engineer, live_server, browser):  # noqa: F811
    gap = GAPS[4]
    snap, _ = db(lambda: cut_snapshot(engineer["user"], gap))
    command = "tc qdisc show | grep -E 'netem|delay'"
    not_checked = [
        {
            "rule": "net.netem_delay",
            "reason": "no tc qdisc output was read",
            "reason_zh": "未读取到 tc qdisc 的输出",
            "commands": [command],
            "host": "obs-197",
        }
    ]
    db(lambda: Snapshot.objects.filter(pk=snap.pk).update(not_checked=not_checked))
    page = open_page(browser, live_server, engineer["session"], "zh-hans")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page.goto(f"{live_server.url}/snapshots/{snap.pk}/")
    item = page.locator("#not-checked li.not-checked-item[data-rule='net.netem_delay']")
    assert "未读取到 tc qdisc 的输出" in item.inner_text()
    item.locator("button.copy-command").click()
    page.wait_for_function("document.querySelector('.copy-status').textContent.length > 0")
    assert item.locator(".copy-status").inner_text() == "已复制"
    assert page.evaluate("navigator.clipboard.readText()") == command
