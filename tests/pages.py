"""Every HTML page of the app, for the tests that look at all of them
(tests/browser/test_every_page_mobile.py: no horizontal overflow at 390 px;
tests/test_ui_translated.py: no English left in the Chinese UI).

The list is built from the URL resolver, not typed by hand: every named GET
route of the access matrix (tests/test_access_matrix.py, which already fails
for a route without an expectation) is a page unless :data:`NOT_PAGES` says
why it is not one. Path parameters come from :data:`PAGE_ARGS`, filled with
real objects of :func:`build_page_world`; a page added later without an
entry there fails with a message saying what to add.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.urls import reverse

from tests.api.world import World, build_world
from tests.conftest import FIXTURES
from tests.test_access_matrix import CLUSTER, EXPECTED, discovered

# Named routes that are not HTML pages of the app, and why.
NOT_PAGES = {
    "healthz": "JSON health check",
    "metrics": "Prometheus metrics (text exposition format)",
    "collect_sh": "shell script download",
    "schema": "OpenAPI document",
    "swagger-ui": "third-party Swagger UI (vendored, not our templates)",
    "triage:snapshot_status": "htmx fragment of the report page",
    "troubleshoot:progress": "htmx fragment of the wizard",
    "triage:snapshot_playbook": "Ansible playbook download (YAML)",
    "triage:snapshot_remedy_playbook": "Ansible playbook download (YAML)",
    "troubleshoot:summary_md": "Markdown summary download",
    "troubleshoot:summary_jira": "Jira wiki summary download",
    "desk:rule_playbook": "Ansible playbook download (YAML) for the hosts selected on the rule page",
    "desk:rule_inventory": "Ansible inventory download (INI)",
    "desk:inbox_open": "marks an inbox item read and redirects to what it is about",
    "desk:host_diff": "needs ?a=&b= (two snapshots): tests/desk/test_desk_hosts.py renders real ones",
}
# Pages seen signed out (signed-in users are sent on).
ANONYMOUS_PAGES = {"login"}

ZSTACK_HOST = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before" / "zstack-9.txt"
GUEST = "8c1f5e2a0d9b4c6e9f3a7b2d1e4c6a80"
STEPS = ("problem", "snapshots", "findings", "constraints", "plan", "apply", "verify", "close")


@dataclass
class PageWorld(World):
    guest_snapshot: object = None
    webhook: object = None
    personal_webhook: object = None
    draft_slug: str = ""
    review_slug: str = ""


def build_page_world(django_user_model) -> PageWorld:
    """The access matrix's world, plus what makes every page show content: a
    KVM host with a guest (the remediation page), a session with a plan, an
    applied measure and a promoted draft (both languages), and a case in
    review. Pages are seen by support staff (``support``), who may edit the
    session and the draft and review the case."""
    from kb import services as kb
    from kb.models import Case
    from triage import analysis, uploads
    from troubleshoot import apply, lifecycle, planning, promotion

    base = build_world(django_user_model)
    w = PageWorld(**{k: getattr(base, k) for k in ("users", "tokens", "teams", "snapshot", "session")})
    from triage.models import Snapshot

    Snapshot.objects.filter(pk=w.snapshot.pk).update(cluster=CLUSTER)
    engineer = w.users["engineer_a"]
    guest = uploads.create_snapshot(
        owner=engineer, data=ZSTACK_HOST.read_bytes(), filename=ZSTACK_HOST.name, label="zstack-9"
    )
    w.guest_snapshot = analysis.analyze_snapshot_now(snapshot_id=guest.pk, force=True)
    # The hosts a founding case and a rule match, listed on their pages (retro-scans run here).
    from kb.models import RetroScan
    from triage import retroscan

    for kind, target in (("case", "zstack-mariadb-v2v"), ("rule", "net.netem_delay")):
        scan = retroscan.start_scan(kind=kind, target=target, reason=RetroScan.Reason.REQUESTED)
        retroscan.run_scan(scan_id=scan.pk)

    s = w.session
    lifecycle.update_session(
        session=s,
        user=engineer,
        changes={"metric_unit": "tpmC", "metric_baseline": 41000.0, "symptom": "slow"},
    )
    for slug, tier in (
        ("remove-netem", 1),
        ("tune-cpu-quota-concurrency", 1),
        ("odp-routing-mode-oceanbase", 2),
    ):
        planning.plan_measure(session=s, user=engineer, slug=slug, tier=tier)
    pm = s.measures.get(measure__slug="remove-netem")
    apply.record_application(
        session=s, user=engineer, pm=pm, status="applied", change_made="tc qdisc del dev eth0 root",
        notes="netem removed on all three observers", metric_after=52000.0,
    )  # fmt: skip
    lifecycle.close_session(
        session=s, user=engineer, outcome="resolved", root_cause="netem delay", lessons=""
    )
    w.draft_slug = promotion.promote(session=s, user=engineer, language="en").slug

    review = {}
    for language, title in (("en", "Guest slow after migration"), ("zh", "迁移后虚拟机变慢")):
        case = Case(
            slug="session-review-guest-slow", language=language, title=title, symptom="CREATE INDEX 120 s",
            cause="vCPUs unpinned", state=Case.State.DRAFT, author=engineer,
        )  # fmt: skip
        kb.save_case(case, steps=[], metrics=[])
        kb.record_revision(case=case, user=engineer, action="created")
        review[language] = case
    kb.submit_for_review(slug="session-review-guest-slow", user=engineer)
    w.review_slug = "session-review-guest-slow"
    # A webhook of team A (created directly: a delivery is never attempted).
    from integrations.models import Webhook

    w.webhook = Webhook.objects.create(
        team=w.teams["team-a"], url="http://127.0.0.1:9/hook", secret="s", events=["analysis.done"]
    )
    # ... and a personal webhook of the reader of the pages (support staff)
    w.personal_webhook = Webhook.objects.create(
        user=w.users["support"], url="http://127.0.0.1:9/me", secret="s", events=["inbox.item"]
    )
    return w


# URL name -> the keyword arguments of each page to visit under that name.
PAGE_ARGS: dict[str, Callable[[PageWorld], list[dict]]] = {
    "triage:snapshot_detail": lambda w: [{"pk": w.snapshot.pk}, {"pk": w.guest_snapshot.pk}],
    "triage:snapshot_remedy": lambda w: [{"pk": w.guest_snapshot.pk, "domain": GUEST}],
    "triage:cluster_detail": lambda w: [{"name": CLUSTER}],
    "kb:measure_detail": lambda w: [{"slug": "pin-vcpus"}],
    "kb:case_detail": lambda w: [{"slug": "zstack-mariadb-v2v"}, {"slug": w.draft_slug}],
    "kb:case_detail_lang": lambda w: [
        {"slug": "zstack-mariadb-v2v", "language": "zh"},
        {"slug": w.draft_slug, "language": "zh"},
        {"slug": w.review_slug, "language": "en"},
    ],
    "kb:case_edit": lambda w: [
        {"slug": w.draft_slug, "language": "en"},
        {"slug": w.draft_slug, "language": "zh"},
    ],
    "kb:case_history": lambda w: [{"slug": w.draft_slug, "language": "en"}],
    "troubleshoot:session_detail": lambda w: [{"pk": w.session.pk}],
    "troubleshoot:step": lambda w: [{"pk": w.session.pk, "step": step} for step in STEPS],
    "triage:rule_detail": lambda w: [{"rule_id": "net.netem_delay"}],
    "integrations:webhook_list": lambda w: [{"team": "team-a"}],
    "desk:host_detail": lambda w: [{"team": "team-a", "host": w.guest_snapshot.host_key}],
    "integrations:webhook_detail": lambda w: [{"team": "team-a", "webhook": w.webhook.pk}],
    "integrations:personal_webhook_detail": lambda w: [{"webhook": w.personal_webhook.pk}],
}


@dataclass(frozen=True)
class Page:
    name: str
    path: str
    anonymous: bool = False


def _is_page_route(route: str, name: str | None) -> bool:
    if not name or route.startswith(("admin/", "api/")) or name.startswith("admin:"):
        return False  # Django's admin and the REST API are not our HTML pages
    return name not in NOT_PAGES


def every_page(world: PageWorld) -> list[Page]:
    """Every page to visit, with a concrete path; fails for a page whose URL
    takes arguments and has no entry in PAGE_ARGS."""
    pages: list[Page] = []
    for route, name, _pattern in discovered():
        if not _is_page_route(route, name):
            continue
        if name not in EXPECTED:
            pytest.fail(f"{name} ({route}) has no entry in tests/test_access_matrix.py EXPECTED")
        if EXPECTED[name][0] != "GET":
            continue  # an action (POST), not a page
        if "<" not in route:
            pages.append(Page(name, reverse(name), anonymous=name in ANONYMOUS_PAGES))
            continue
        if name not in PAGE_ARGS:
            pytest.fail(
                f"page {name} ({route}) takes URL arguments and has no fixture: add real objects for it "
                "to PAGE_ARGS in tests/pages.py (or, if it is not an HTML page, to NOT_PAGES with why)"
            )
        for kwargs in PAGE_ARGS[name](world):
            pages.append(Page(name, reverse(name, kwargs=kwargs)))
    # The error pages (404 for a path that matches nothing, 403 for a forbidden page).
    pages.append(Page("404", "/no-such-page/"))
    pages.append(
        Page("403", reverse("kb:case_edit", kwargs={"slug": "zstack-mariadb-v2v", "language": "en"}))
    )
    return pages
