"""One Debian Chromium per test process, shared by every browser test.

Starting Playwright's driver and launching Chromium costs seconds per test on
a loaded machine; the browser tests now share one browser per pytest(-xdist)
process and each gets fresh contexts (cookies, storage, permissions), closed
at its end.

Playwright's sync API marks its event loop as running in this thread between
its calls, and Django refuses synchronous ORM calls while a loop runs. So the
loop is marked running only while a test holds the browser (``shared_browser``)
and cleared when it lets go: the tests after it, browser tests' set-ups
included, use the ORM as before.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from tests.conftest import service_unavailable

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - make test installs requirements-dev.txt
    sync_playwright = None

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

_shared: dict[str, Any] = {}
_holders = [0]


def _start() -> Any:
    if not shutil.which(CHROMIUM):
        service_unavailable(f"Chromium not found at {CHROMIUM} (apt-get install chromium)")
    if sync_playwright is None:
        service_unavailable("playwright is not installed (make test installs requirements-dev.txt)")
    manager = sync_playwright()
    playwright = manager.start()
    try:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
    except BaseException:
        manager.__exit__()
        raise
    _shared.update(manager=manager, browser=browser)
    return browser


def stop() -> None:
    """Close the shared browser and Playwright's driver (end of the session)."""
    manager = _shared.pop("manager", None)
    browser = _shared.pop("browser", None)
    if manager is None:
        return
    asyncio._set_running_loop(manager._loop)
    try:
        if browser is not None and browser.is_connected():
            browser.close()
    finally:
        manager.__exit__()
        asyncio._set_running_loop(None)


@contextmanager
def shared_browser() -> Iterator[Any]:
    """The process's Chromium (launched on first use). Contexts the caller
    opens are closed on the way out."""
    if _holders[0] == 0 and "manager" in _shared:
        asyncio._set_running_loop(_shared["manager"]._loop)
        if not _shared["browser"].is_connected():  # crashed: start afresh
            stop()
    browser = _shared.get("browser") or _start()
    before = set(browser.contexts)
    _holders[0] += 1
    try:
        yield browser
    finally:
        _holders[0] -= 1
        try:
            for context in browser.contexts:
                if context not in before:
                    context.close()
        finally:
            if _holders[0] == 0:
                asyncio._set_running_loop(None)


@pytest.fixture
def browser_page():
    """A 1200x800 English page of the shared Chromium (import it into a test
    module or conftest to use it)."""
    with shared_browser() as browser:
        page = browser.new_page(viewport={"width": 1200, "height": 800}, locale="en-US")
        page.set_default_timeout(15_000)
        yield page
