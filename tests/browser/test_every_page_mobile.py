"""Every page at phone width (390 x 844) in English and in Chinese, in Debian's
Chromium: the document must never be wider than the viewport (wide tables and
code scroll inside their cards instead). The pages come from the URL resolver
(tests/pages.py), so a page added later is checked without touching this
file. A screenshot of each page goes to test-output/mobile/."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from tests.pages import build_page_world, every_page
from tests.troubleshoot.wizard_browser import OUTPUT, chromium_page

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

WIDTH, HEIGHT = 390, 844
LANGUAGES = ("en", "zh-hans")

# The document's width, and the elements sticking out of the viewport that are
# not inside a scrolling box (what to fix when the page is too wide).
MEASURE = """() => {
  const doc = document.documentElement, vw = doc.clientWidth;
  const scrolls = (el) => { for (let p = el.parentElement; p; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll' || o === 'hidden') return true; }
    return false; };
  const culprits = [];
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width && r.right > vw + 1 && !scrolls(el)) {
      culprits.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
        (typeof el.className === 'string' && el.className
          ? '.' + el.className.trim().split(/\\s+/).join('.') : '') +
        ' right=' + Math.round(r.right));
      if (culprits.length >= 6) break;
    }
  }
  return {scrollWidth: doc.scrollWidth, viewport: vw, culprits};
}"""


@pytest.fixture
def pages_and_cookies(django_user_model, settings, tmp_path, monkeypatch, unhashed_static):  # noqa: F811
    from triage import uploads

    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    world = build_page_world(django_user_model)
    pages = every_page(world)
    # Signed in as support staff, without going through the form for each language.
    client = Client()
    client.force_login(world.users["support"])
    return pages, client.cookies[settings.SESSION_COOKIE_NAME].value


from tests.troubleshoot.wizard_browser import unhashed_static  # noqa: E402,F401 (fixture)


def test_no_page_is_wider_than_a_phone(pages_and_cookies, live_server):
    pages, session_key = pages_and_cookies
    folder = OUTPUT / "mobile"
    folder.mkdir(parents=True, exist_ok=True)
    failures, seen = [], 0
    host = live_server.url.split("//", 1)[1].split(":")[0]
    with chromium_page() as first:
        browser = first.context.browser
        for language in LANGUAGES:
            for signed_in in (False, True):
                context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}, locale="en-US")
                cookies = [
                    {"name": settings.LANGUAGE_COOKIE_NAME, "value": language, "domain": host, "path": "/"}
                ]
                if signed_in:
                    cookies.append(
                        {
                            "name": settings.SESSION_COOKIE_NAME,
                            "value": session_key,
                            "domain": host,
                            "path": "/",
                        }
                    )
                context.add_cookies(cookies)
                page = context.new_page()
                page.set_default_timeout(30_000)
                for p in pages:
                    if p.anonymous == signed_in:
                        continue
                    page.goto(live_server.url + p.path, wait_until="load")
                    size = page.evaluate(MEASURE)
                    seen += 1
                    label = f"{language} {p.name} {p.path}"
                    if size["scrollWidth"] > size["viewport"]:
                        failures.append(
                            f"{label}: {size['scrollWidth']} px wide > {size['viewport']}: {size['culprits']}"
                        )
                    name = p.path.strip("/").replace("/", "_") or "dashboard"
                    page.screenshot(path=str(folder / f"{language}-{name[:80]}.png"), full_page=True)
                context.close()
    assert seen >= 2 * len(pages)
    assert not failures, "pages wider than a 390 px phone:\n" + "\n".join(failures)
