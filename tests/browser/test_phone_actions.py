"""Primary actions at phone width (390 x 844), in English and in Chinese: on
the report, every step of the wizard, the cluster comparison and both searches
(/search/?q= and /cases/?q=), every link, button and form control lies inside
the viewport horizontally, or inside a collapsed <details> whose summary is
visible. Tables of actions become stacked cards on a phone, the cluster matrix
a card per host; sideways scrolling to reach a button does not count.
Screenshots go to test-output/phone/. The wizard's step is in its URL: after a
click to the next step the location follows, and a reload shows that step."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from tests.pages import STEPS, build_page_world
from tests.test_access_matrix import CLUSTER
from tests.troubleshoot.wizard_browser import OUTPUT, at_step, chromium_page, htmx_idle
from tests.troubleshoot.wizard_browser import unhashed_static as unhashed_static  # fixture

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

WIDTH, HEIGHT = 390, 844
LANGUAGES = ("en", "zh-hans")

# Controls a phone user must reach, and the ones that do not lie within
# [0, viewport] horizontally (nor behind a visible, collapsed <details>).
OUT_OF_REACH = """() => {
  const vw = document.documentElement.clientWidth, out = [];
  const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    ' "' + (el.innerText || el.value || el.getAttribute('aria-label') || '').trim().slice(0, 40) + '"';
  const inside = (r) => r.left >= -1 && r.right <= vw + 1;
  const controls = 'a[href], button, input:not([type=hidden]), select, textarea, summary';
  for (const el of document.body.querySelectorAll(controls)) {
    const closed = el.closest('details:not([open])');
    if (closed && !(el.tagName === 'SUMMARY' && el.parentElement === closed)) {
      const summary = closed.querySelector(':scope > summary');
      const s = summary ? summary.getBoundingClientRect() : null;
      if (!(s && s.width && inside(s)) && !closed.closest('[hidden]') && closed.getClientRects().length)
        out.push(name(el) + ' in a <details> whose summary is out of reach');
      continue;
    }
    const r = el.getBoundingClientRect();
    if (!r.width && !r.height) continue;  // not rendered (a collapsed menu, display:none)
    if (!inside(r)) out.push(name(el) + ' left=' + Math.round(r.left) + ' right=' + Math.round(r.right));
  }
  return {viewport: vw, out: out.slice(0, 12), count: out.length};
}"""


# The stacked cards of a page, screenshotted on their own as well.
CARDS = ("#candidate-measures", ".cluster-matrix", "table.snapshots")


@pytest.fixture
def phone_world(django_user_model, settings, tmp_path, monkeypatch):
    """The pages' world, plus an open session of support staff with both
    analysed snapshots attached, a measure planned and one applied: its plan
    step offers "Add to plan", its apply step the application forms."""
    from triage import uploads
    from triage.models import Snapshot
    from troubleshoot import apply, lifecycle, planning, snapshots

    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    world = build_page_world(django_user_model)
    # Two hosts in the cluster: two cards (with no majority, nothing is highlighted).
    Snapshot.objects.filter(pk=world.guest_snapshot.pk).update(cluster=CLUSTER)
    staff = world.users["support"]
    session = lifecycle.create_session(
        owner=staff, title="BMSQL below expectation on zstack-9", metric_name="tpmC", metric_unit="tpmC"
    )
    lifecycle.update_session(session=session, user=staff, changes={"metric_baseline": 41000.0})
    for snap in (world.snapshot, world.guest_snapshot):
        snapshots.attach_snapshot(session=session, user=staff, snapshot=snap)
    pm = planning.plan_measure(session=session, user=staff, slug="remove-netem", tier=1)
    apply.record_application(
        session=session, user=staff, pm=pm, status="applied",
        change_made="tc qdisc del dev eth0 root", notes="", metric_after=52000.0,
    )  # fmt: skip
    client = Client()
    client.force_login(staff)
    return world, session, client.cookies[settings.SESSION_COOKIE_NAME].value


def _context(browser, live_server, session_key: str, language: str):
    host = live_server.url.split("//", 1)[1].split(":")[0]
    context = browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}, locale="en-US")
    context.add_cookies(
        [
            {"name": settings.LANGUAGE_COOKIE_NAME, "value": language, "domain": host, "path": "/"},
            {"name": settings.SESSION_COOKIE_NAME, "value": session_key, "domain": host, "path": "/"},
        ]
    )
    return context


def test_every_action_is_within_a_phone_screen(phone_world, live_server, unhashed_static):
    world, session, session_key = phone_world
    paths = {
        "report": f"/snapshots/{world.snapshot.pk}/",
        "report-guest": f"/snapshots/{world.guest_snapshot.pk}/",
        **{f"wizard-{step}": f"/sessions/{session.pk}/step/{step}/" for step in STEPS},
        "wizard-closed-plan": f"/sessions/{world.session.pk}/step/plan/",
        "cluster": reverse("triage:cluster_detail", kwargs={"name": CLUSTER}),
        "search": "/search/?q=zstack",
        "cases": "/cases/?q=numa",
    }
    folder = OUTPUT / "phone"
    folder.mkdir(parents=True, exist_ok=True)
    failures, seen = [], 0
    with chromium_page() as first:
        for language in LANGUAGES:
            context = _context(first.context.browser, live_server, session_key, language)
            page = context.new_page()
            page.set_default_timeout(30_000)
            for label, path in paths.items():
                response = page.goto(live_server.url + path, wait_until="load")
                assert response is not None and response.status == 200, (label, path)
                result = page.evaluate(OUT_OF_REACH)
                seen += 1
                if result["count"]:
                    failures.append(f"{language} {label} {path}: {result['count']} {result['out']}")
                page.screenshot(path=str(folder / f"{language}-{label}.png"), full_page=True)
                for selector in CARDS:  # the cards themselves, to look at
                    if page.locator(selector).count():
                        shot = folder / f"{language}-{label}-cards.png"
                        page.locator(selector).first.screenshot(path=str(shot))
            # The usual value of a highlighted cell is written, not hover-only.
            page.goto(live_server.url + paths["cluster"])
            for cell in page.locator(".cluster-matrix td.differs").all():
                assert cell.locator(".usual").is_visible()
            context.close()
    assert seen == 2 * len(paths)
    assert not failures, "actions out of reach on a 390 px phone:\n" + "\n".join(failures)


def test_the_wizard_step_is_in_the_url_and_survives_a_reload(phone_world, live_server, unhashed_static):
    _world, session, session_key = phone_world
    with chromium_page() as first:
        context = _context(first.context.browser, live_server, session_key, "en")
        page = context.new_page()
        page.goto(f"{live_server.url}/sessions/{session.pk}/step/findings/")
        at_step(page, "findings")
        page.click("nav .wiz-steps a[data-step='constraints']")
        at_step(page, "constraints")  # htmx pushed /step/constraints/ into the address bar
        page.reload()
        at_step(page, "constraints")
        page.click("#constraints-form button[name=next]")
        at_step(page, "plan")
        page.reload()
        at_step(page, "plan")
        page.go_back()
        at_step(page, "constraints")
        htmx_idle(page)
        context.close()
