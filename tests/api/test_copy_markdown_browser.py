"""The "copy as Markdown" button in headless Chromium: a click fetches the
snapshot's report.md with the page's session and puts it on the clipboard.

The include is placed on the snapshot report page by the test itself (the
page template belongs to the pipeline and may or may not include it yet), so
this checks the include and its script, not the page layout."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string
from django.test import Client
from django.utils import translation

from tests.api.world import build_world
from tests.chromium import shared_browser
from triage import uploads

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def prepared(transactional_db, django_user_model, settings, tmp_path, monkeypatch):
    """Everything that needs the ORM, before Playwright's loop starts."""
    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    world = build_world(django_user_model)
    client = Client()
    client.force_login(world.users["engineer_a"])
    snap = world.snapshot
    with translation.override("zh-hans"):
        include = render_to_string("triage/_copy_markdown.html", {"snapshot": snap})
    expected = client.get(f"/api/v1/snapshots/{snap.pk}/report.md?lang=zh-hans").content.decode()
    return {
        "snapshot": snap,
        "session": client.cookies["sessionid"].value,
        "include": include,
        "md": expected,
    }


@pytest.fixture
def browser():
    with shared_browser() as b:
        yield b


def test_copy_markdown_puts_the_report_on_the_clipboard(prepared, live_server, browser):
    context = browser.new_context()
    host = live_server.url.split("//", 1)[1].split(":")[0]
    context.add_cookies([{"name": "sessionid", "value": prepared["session"], "domain": host, "path": "/"}])
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{live_server.url}/snapshots/{prepared['snapshot'].pk}/")
    page.evaluate(
        "html => { const d = document.createElement('div'); d.id = 'injected'; d.innerHTML = html;"
        " document.body.prepend(d); }",
        prepared["include"],
    )
    page.add_script_tag(url="/static/js/copy-markdown.js")
    button = page.locator("#injected button[data-copy-markdown]")
    assert button.inner_text() in ("复制为 Markdown", "Copy as Markdown")
    button.click()
    page.wait_for_selector("#injected button[data-copied-ok]")
    assert page.locator("#injected .copy-markdown-status").inner_text()
    copied = page.evaluate("navigator.clipboard.readText()")
    # The same report the API gives, with links to the server the page came from.
    assert copied.replace(live_server.url, "http://testserver") == prepared["md"]
    assert copied.startswith("# 快照分析报告")
    context.close()
