"""Issue 25 point 3 in headless Chromium: a PDF, a random binary and a
prose-only ticket uploaded through the page; none ends "Done · No problem
found". The binaries are refused with a form error; the ticket's report says
"Nothing to check yet" with the first commands."""

from __future__ import annotations

import os

import pytest

from tests.browser.test_verify_recheck import PASSWORD, engineer  # noqa: F401 (fixture)
from tests.triage.test_unreadable_uploads import PDF, TICKET
from tests.troubleshoot.wizard_browser import (
    Shots,
    chromium_page,
    login,
    unhashed_static,  # noqa: F401 (fixture)
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_unreadable_uploads_never_end_green(engineer, live_server, tmp_path):  # noqa: F811
    shot = Shots("unreadable-uploads")
    base = live_server.url
    pdf, binary = tmp_path / "report.pdf", tmp_path / "dump.bin"
    pdf.write_bytes(PDF)
    binary.write_bytes(os.urandom(3 * 1024 * 1024))
    with chromium_page() as page:
        login(page, base, "alice", PASSWORD)
        for path in (pdf, binary):
            page.goto(f"{base}/snapshots/new/")
            page.set_input_files("#upload-form input[type=file]", str(path))
            page.click("#upload-form button[type=submit]")
            page.wait_for_selector("#upload-form .errorlist")
            error = page.locator("#upload-form .errorlist").inner_text()
            assert path.name in error and ("PDF" in error or "binary" in error)
            assert "No problem found" not in page.content()
            shot(page, path.suffix.lstrip("."))
        page.goto(f"{base}/snapshots/new/")
        page.set_input_files("#upload-form input[type=file]", str(TICKET))
        page.click("#upload-form button[type=submit]")
        page.wait_for_selector("#snapshot-status[data-status='done']", timeout=30_000)
        page.wait_for_selector("#nothing-to-check")
        text = page.locator("main").inner_text() if page.locator("main").count() else page.content()
        assert "No problem found" not in text
        assert "Nothing to check yet" in page.locator("#snapshot-status").inner_text()
        assert "numactl -H" in page.locator("#nothing-to-check").inner_text()
        shot(page, "prose-ticket")
