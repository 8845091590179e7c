"""The snapshot report of the rebuilt ZStack founding snapshot in headless
Chromium (Debian's, through Playwright), in English and in Chinese, plus the
live status polling of the report page. Screenshots go to test-output/."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from tests.chromium import shared_browser
from tests.conftest import FIXTURES, ROOT
from triage import analysis, uploads
from triage.models import Snapshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OUTPUT = ROOT / "test-output"
ZSTACK_BEFORE = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before"


@pytest.fixture
def zstack(django_user_model, settings, tmp_path, monkeypatch):
    """The ZStack host and its MariaDB guest uploaded as one cluster and
    analysed by the real loader and engine. Created before the browser starts:
    Playwright's event loop in this thread makes Django refuse ORM calls."""
    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    from kb.services import load_all

    load_all()  # the founding cases, so the report links similar cases
    user = django_user_model.objects.create_user("reporter", password="report-page-pass-1")
    snaps = {}
    for name in ("infoplus-db.txt", "zstack-9.txt"):
        path = ZSTACK_BEFORE / name
        snap = uploads.create_snapshot(
            owner=user, data=path.read_bytes(), filename=name, label=path.stem, cluster="zstack-v2v"
        )
        assert analysis.analyze_snapshot_now(snapshot_id=snap.pk).status == "done"
        snaps[path.stem] = Snapshot.objects.get(pk=snap.pk)
    host = snaps["zstack-9"]
    findings = list(host.current_findings())
    assert len(findings) >= 8
    from django.test import Client

    client = Client()
    client.force_login(user)
    from kb.models import Measure

    hotplug = Measure.objects.get(slug="disable-cpu-hotplug")
    return {
        "user": user,
        "host": host,
        "guest": snaps["infoplus-db"],
        "findings": findings,
        "hotplug_titles": {"en": hotplug.title_en, "zh-hans": hotplug.title_zh},
        "session": client.cookies["sessionid"].value,
    }


@pytest.fixture
def browser():
    with shared_browser() as b:
        yield b


def open_page(browser, live_server, session: str, language: str):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    host = live_server.url.split("//", 1)[1].split(":")[0]
    context.add_cookies(
        [
            {"name": "sessionid", "value": session, "domain": host, "path": "/"},
            {"name": "django_language", "value": language, "domain": host, "path": "/"},
        ]
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    return page


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_zstack_report_is_readable(zstack, live_server, browser, language):
    OUTPUT.mkdir(exist_ok=True)
    host = zstack["host"]
    page = open_page(browser, live_server, zstack["session"], language)
    page.goto(f"{live_server.url}/snapshots/{host.pk}/")
    page.wait_for_selector("article.finding")
    assert page.locator("html").get_attribute("lang") == language
    page.screenshot(path=str(OUTPUT / f"report-zstack-{language}-top.png"))

    # Every finding is shown once, in the user's language, under its severity.
    articles = page.locator("article.finding")
    assert articles.count() == len(zstack["findings"])
    shown_titles = set(page.locator("article.finding h3").all_inner_texts())
    for f in zstack["findings"]:
        expected = f.title_zh if language == "zh-hans" and f.title_zh else f.title
        assert expected in shown_titles, expected
        card = page.locator(f"article.finding[data-rule='{f.rule}']")
        assert card.count() == 1
        assert card.locator(f"xpath=ancestor::section[@id='sev-{f.severity}']").count() == 1
    if language == "zh-hans":
        assert page.locator("#findings-heading").inner_text().startswith("发现")
    else:
        assert page.locator("#findings-heading").inner_text() == "Findings"

    # Evidence: artifact and line, and the raw excerpt opens on click.
    hotplug = page.locator("article.finding[data-rule='kvm.vcpu_hotplug_enabled']")
    assert "transcript:virsh dumpxml" in hotplug.locator("table.evidence").inner_text()
    excerpt = hotplug.locator("details pre").first
    assert not excerpt.is_visible()
    hotplug.locator("details summary").first.click()
    assert excerpt.is_visible()
    assert "vcpu" in excerpt.inner_text()

    # Measures each finding points to, by title in the reader's language, linked to the catalogue.
    title = zstack["hotplug_titles"][language]
    measure = hotplug.locator("ul.measures a[data-measure='disable-cpu-hotplug']")
    assert measure.inner_text() == title
    assert measure.get_attribute("href") == "/cases/measures/disable-cpu-hotplug/"

    # The founding ZStack case is the most similar one, titled in the reader's language.
    similar = page.locator("#similar-heading + ul li").first
    assert similar.locator("a").get_attribute("href").startswith("/cases/zstack-mariadb-v2v/")
    zs = zstack["host"].similar_cases[0]
    assert similar.locator("a").inner_text() == (zs.get("title_zh") if language == "zh-hans" else zs["title"])

    # The guest of the same cluster is linked; no polling on a finished snapshot.
    assert "infoplus-db" in page.locator("#cluster-heading + p + ul").inner_text()
    assert page.locator("[hx-trigger]").count() == 0

    # Readable: text does not overflow the viewport horizontally.
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0
    page.screenshot(path=str(OUTPUT / f"report-zstack-{language}.png"), full_page=True)


def set_status(pk: int, status: str) -> None:
    """Update the row from a plain thread: this thread runs Playwright's event
    loop, where Django refuses ORM calls (and would open a connection that
    is never closed)."""

    def run():
        try:
            Snapshot.objects.filter(pk=pk).update(status=status)
        finally:
            connection.close()

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()


def test_status_polls_and_the_report_appears_when_done(zstack, live_server, browser):
    host = zstack["host"]
    set_status(host.pk, "analyzing")
    page = open_page(browser, live_server, zstack["session"], "en")
    page.goto(f"{live_server.url}/snapshots/{host.pk}/")
    assert page.locator("#snapshot-status").get_attribute("data-status") == "analyzing"
    assert page.locator("article.finding").count() == 0
    assert page.evaluate("typeof window.htmx") == "object"

    set_status(host.pk, "done")
    page.wait_for_selector("article.finding", timeout=10_000)
    assert page.locator("#snapshot-status").get_attribute("data-status") == "done"
    assert page.locator("[hx-trigger]").count() == 0


def test_upload_page_in_the_browser(zstack, live_server, browser, monkeypatch):
    # Analyse in the web process right after commit, whatever broker the environment names.
    monkeypatch.setattr(
        uploads,
        "enqueue_analysis",
        lambda *, snapshot_id: bool(analysis.analyze_snapshot_now(snapshot_id=snapshot_id)),
    )
    OUTPUT.mkdir(exist_ok=True)
    page = open_page(browser, live_server, zstack["session"], "en")
    page.goto(f"{live_server.url}/snapshots/new/")
    assert page.locator("#dropzone input[type=file]").count() == 1
    page.set_input_files(
        "#dropzone input[type=file]",
        str(FIXTURES / "seeds" / "openstack-kvm-crm-cpu" / "before" / "od01crmapp05.txt"),
    )
    assert "od01crmapp05.txt" in page.locator("#dropzone-names").inner_text()
    page.fill("input[name=label]", "crm guest")
    page.fill("input[name=cluster]", "openstack")
    page.screenshot(path=str(OUTPUT / "upload-page-en.png"), full_page=True)
    page.click("#upload-form button[type=submit]")
    page.wait_for_selector("article.finding")
    assert page.locator("h1").inner_text() == "crm guest"
    assert page.locator("#snapshot-status").get_attribute("data-status") == "done"
    assert page.locator("article.finding[data-rule='kvm.flat_socket_topology']").count() == 1

    page.goto(f"{live_server.url}/snapshots/?cluster=openstack")
    rows = page.locator("table.snap-table tbody tr")
    assert rows.count() == 1 and "crm guest" in rows.first.inner_text()
    page.screenshot(path=str(OUTPUT / "snapshot-list-en.png"), full_page=True)
