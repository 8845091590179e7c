"""Shared pieces of the wizard's browser tests (tests/browser/test_wizard_*.py):
Debian's Chromium through Playwright, sign-in, screenshots, and waiting for
htmx swaps by the state they produce rather than by time."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.chromium import shared_browser
from tests.conftest import ROOT

OUTPUT = ROOT / "test-output"
# Uploads are analysed in the request (eager Celery): allow for the engine.
ANALYSIS_TIMEOUT_MS = 120_000


@contextmanager
def chromium_page(*, locale: str = "en-US"):
    """A page in a fresh context of the process's shared Chromium."""
    with shared_browser() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900}, locale=locale)
        page.set_default_timeout(20_000)
        yield page


class Shots:
    """Numbered full-page screenshots into test-output/<name>/."""

    def __init__(self, name: str):
        self.folder = OUTPUT / name
        self.folder.mkdir(parents=True, exist_ok=True)
        for old in self.folder.glob("*.png"):
            old.unlink()
        self.n = 0

    def __call__(self, page, label: str) -> Path:
        self.n += 1
        path = self.folder / f"{self.n:02d}-{label}.png"
        page.screenshot(path=str(path), full_page=True)
        return path


def login(page, base: str, username: str, password: str) -> None:
    page.goto(f"{base}/sessions/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("form.stacked button[type=submit]")
    page.wait_for_url(f"{base}/sessions/")


def htmx_idle(page) -> None:
    """Wait until htmx has no request in flight and has settled its last swap:
    a click on a form it has just swapped in, before htmx bound it, is lost on
    a busy machine."""
    page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling')")


def at_step(page, name: str) -> None:
    page.wait_for_selector(f"#step-panel[data-step='{name}']")
    assert page.url.rstrip("/").endswith(f"/step/{name}"), page.url
    htmx_idle(page)


def upload(page, files: list[Path], progress_id: str) -> None:
    page.set_input_files("#upload-form input[type=file]", [str(f) for f in files])
    page.click("#upload-form button[type=submit]")
    page.wait_for_selector(
        f"#{progress_id}[data-done='{len(files)}'][data-total='{len(files)}']", timeout=ANALYSIS_TIMEOUT_MS
    )


def add_to_plan(page, slug: str, tier: int = 1) -> None:
    row = page.locator(f"#candidate-measures tr[data-measure='{slug}']")
    row.locator("select[name=tier]").select_option(str(tier))
    row.locator("button[type=submit]").click()
    page.wait_for_selector(f"#tier-{tier} .pm[data-measure='{slug}']")


def record(page, slug: str, *, status: str, change: str = "", metric: str = "", notes: str = "") -> None:
    card = page.locator(f".pm[data-measure='{slug}']")
    card.locator("select[name$='-status']").select_option(status)
    if change:
        card.locator("textarea[name$='-change_made']").fill(change)
    if notes:
        card.locator("textarea[name$='-notes']").fill(notes)
    card.locator("input[name$='-metric_after']").fill(metric)
    card.locator("button[type=submit]").click()
    page.wait_for_selector(f".pm[data-measure='{slug}'][data-status='{status}']")


@pytest.fixture
def unhashed_static(settings):
    # The live server serves static files by their plain names.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
