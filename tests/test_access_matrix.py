"""Every URL of the URL conf x every role -> the expected status.

URLs are DISCOVERED by walking ``get_resolver().url_patterns``; path
parameters are filled with objects owned by team A. A route without an entry
in :data:`EXPECTED` fails :func:`test_every_url_has_an_expectation`, so a new
view cannot be forgotten. Roles: anonymous, an engineer of team A, an
engineer of team B, support staff, an administrator (superuser).

The rule the table encodes: team B never sees team A's snapshots or sessions
(404, never 200 nor a 403 that would confirm they exist); support and admin
see them; anonymous users are sent to sign in (web, 302) or refused (API, 401);
only sign-in, /healthz and the language switch are public.
"""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from desk.models import InboxItem
from integrations import services as integrations_services
from integrations.models import Webhook
from kb.models import Case
from kb.services import save_case
from tests.api.world import World, build_world
from triage import acknowledgements, uploads
from triage.models import Snapshot

pytestmark = pytest.mark.django_db

ROLES = ("anonymous", "engineer_a", "engineer_b", "support", "admin")

# name -> (method, (anonymous, engineer_a, engineer_b, support, admin))
W = 302  # web: anonymous users are redirected to the sign-in page
A = 401  # API: anonymous requests are refused
EXPECTED: dict[str, tuple[str, tuple[int, ...]]] = {
    # public
    "healthz": ("GET", (200, 200, 200, 200, 200)),
    "login": ("GET", (200, 302, 302, 302, 302)),  # signed-in users are sent on
    "set_language": ("POST", (302, 302, 302, 302, 302)),
    # accounts
    "dashboard": ("GET", (W, 200, 200, 200, 200)),
    "logout": ("POST", (W, 302, 302, 302, 302)),
    "password_change": ("GET", (W, 200, 200, 200, 200)),
    "password_change_done": ("GET", (W, 200, 200, 200, 200)),
    "accounts:profile": ("GET", (W, 200, 200, 200, 200)),
    "accounts:token_create": ("POST", (W, 302, 302, 302, 302)),
    "accounts:token_revoke": ("POST", (W, 302, 302, 302, 302)),
    "accounts:teams_help": ("GET", (W, 200, 200, 200, 200)),
    # snapshot pages (team A's snapshot)
    "triage:snapshot_list": ("GET", (W, 200, 200, 200, 200)),
    "triage:snapshot_new": ("GET", (W, 200, 200, 200, 200)),
    "triage:snapshot_detail": ("GET", (W, 200, 404, 200, 200)),
    "triage:snapshot_status": ("GET", (W, 200, 404, 200, 200)),
    "triage:snapshot_reanalyze": ("POST", (W, 302, 404, 302, 302)),  # back to the report
    # adding evidence with an empty form: back to the report with the form's error
    "triage:snapshot_add_artifact": ("POST", (W, 302, 404, 302, 302)),
    # the world's OceanBase snapshot has no guest domain, so even its owners get 404;
    # owner 200 / other team 404 on a real guest: tests/engine/remedies/test_remedies_view.py
    "triage:snapshot_remedy": ("GET", (W, 404, 404, 404, 404)),
    "triage:snapshot_remedy_playbook": ("GET", (W, 404, 404, 404, 404)),
    # the world's snapshot is not analysed, so it has no playbook yet; owner 200 /
    # other team 404 on analysed seeds: tests/engine/remedies/test_remedies_view.py
    "triage:snapshot_playbook": ("GET", (W, 404, 404, 404, 404)),
    "triage:cluster_detail": ("GET", (W, 200, 404, 200, 200)),  # team A's cluster
    # acknowledging with an empty form / linking an empty ticket: back to the report with an error
    "triage:snapshot_acknowledge": ("POST", (W, 302, 404, 302, 302)),
    "triage:snapshot_add_ticket": ("POST", (W, 302, 404, 302, 302)),
    # team A's acknowledgement: withdrawn by engineer A, then a no-op for support and admin
    "triage:acknowledgement_revoke": ("POST", (W, 302, 404, 302, 302)),
    # rule pages: every user, each seeing only the hosts of their teams
    "triage:rule_list": ("GET", (W, 200, 200, 200, 200)),
    "triage:rule_detail": ("GET", (W, 200, 200, 200, 200)),
    # knowledge base pages (founding cases belong to no team)
    "kb:case_list": ("GET", (W, 200, 200, 200, 200)),
    "kb:measure_list": ("GET", (W, 200, 200, 200, 200)),
    "kb:measure_detail": ("GET", (W, 200, 200, 200, 200)),
    "kb:case_detail": ("GET", (W, 200, 200, 200, 200)),
    "kb:case_detail_lang": ("GET", (W, 200, 200, 200, 200)),
    "kb:case_history": ("GET", (W, 200, 200, 200, 200)),
    # a published founding case is not edited in place (drafts: tests/kb/test_kb_review.py)
    "kb:case_edit": ("GET", (W, 403, 403, 403, 403)),
    # writing and importing cases: members of a team and support staff (everyone in the world)
    "triage:case_new": ("GET", (W, 200, 200, 200, 200)),
    "kb:case_import": ("GET", (W, 200, 200, 200, 200)),
    # an empty review form or a repeated "helped": back to the case page
    "kb:case_review": ("POST", (W, 302, 302, 302, 302)),
    "kb:case_helped": ("POST", (W, 302, 302, 302, 302)),
    # troubleshooting sessions (team A's session)
    "troubleshoot:session_list": ("GET", (W, 200, 200, 200, 200)),
    "troubleshoot:session_new": ("GET", (W, 200, 200, 200, 200)),
    "troubleshoot:effectiveness": ("GET", (W, 200, 200, 200, 200)),
    "troubleshoot:session_detail": ("GET", (W, 302, 404, 302, 302)),  # redirects to its step
    "troubleshoot:progress": ("GET", (W, 200, 404, 200, 200)),
    "troubleshoot:step": ("GET", (W, 200, 404, 200, 200)),
    # assigning nobody: a change (302); an empty comment or ticket: back with an error (302)
    "troubleshoot:assign": ("POST", (W, 302, 404, 302, 302)),
    "troubleshoot:comment": ("POST", (W, 302, 404, 302, 302)),
    "troubleshoot:ticket": ("POST", (W, 302, 404, 302, 302)),
    "troubleshoot:summary_md": ("GET", (W, 200, 404, 200, 200)),
    "troubleshoot:summary_jira": ("GET", (W, 200, 404, 200, 200)),
    # API: snapshots and rules
    "api-snapshot-list": ("GET", (A, 200, 200, 200, 200)),
    "api-snapshot-detail": ("GET", (A, 200, 404, 200, 200)),
    "api-snapshot-reanalyze": ("POST", (A, 202, 404, 202, 202)),
    # adding evidence with an empty body: 400 once the snapshot is found
    "api-snapshot-artifacts": ("POST", (A, 400, 404, 400, 400)),
    "api-snapshot-similar": ("GET", (A, 200, 404, 200, 200)),
    "api-snapshot-report-md": ("GET", (A, 200, 404, 200, 200)),
    "api-snapshot-report-jira": ("GET", (A, 200, 404, 200, 200)),
    # an empty body: 400 once the snapshot is found
    "api-snapshot-acknowledge": ("POST", (A, 400, 404, 400, 400)),
    "api-snapshot-tickets": ("POST", (A, 400, 404, 400, 400)),
    "api-acknowledgement-revoke": ("POST", (A, 200, 404, 200, 200)),
    "api-snapshot-playbook": ("GET", (A, 404, 404, 404, 404)),  # not analysed, as above
    "api-snapshot-guest-playbook": ("GET", (A, 404, 404, 404, 404)),  # no guest in that snapshot
    "api-rule-list": ("GET", (A, 200, 200, 200, 200)),
    "api-rule-detail": ("GET", (A, 200, 200, 200, 200)),
    # API: knowledge base
    "kb-api-cases": ("GET", (A, 200, 200, 200, 200)),
    "kb-api-case": ("GET", (A, 200, 200, 200, 200)),
    "kb-api-measures": ("GET", (A, 200, 200, 200, 200)),
    "kb-api-measure": ("GET", (A, 200, 200, 200, 200)),
    # API: sessions (writes with an empty body: 400 once the session is found)
    "api-session-list": ("GET", (A, 200, 200, 200, 200)),
    "api-session-detail": ("GET", (A, 200, 404, 200, 200)),
    "api-session-attach": ("POST", (A, 400, 404, 400, 400)),
    "api-session-measure": ("POST", (A, 400, 404, 400, 400)),
    "api-session-close": ("POST", (A, 400, 404, 400, 400)),
    # integrations: the notification form for everyone; team A's webhooks for
    # its administrators and site administrators only (403 for team A's engineer
    # and for support staff of another team, 404 for team B's engineer)
    "integrations:index": ("POST", (W, 302, 302, 302, 302)),  # an empty form saves "no e-mail"
    "integrations:webhook_list": ("GET", (W, 403, 404, 403, 200)),
    "integrations:webhook_detail": ("GET", (W, 403, 404, 403, 200)),
    "integrations:webhook_test": ("POST", (W, 403, 404, 403, 302)),
    "integrations:webhook_delete": ("POST", (W, 403, 404, 403, 302)),
    # personal webhooks (engineer A's): only their owner sees or changes one, site
    # administrators included; adding one with an empty form shows the form's errors
    "integrations:personal_webhook_add": ("POST", (W, 200, 200, 200, 200)),
    "integrations:personal_webhook_detail": ("GET", (W, 200, 404, 404, 404)),
    "integrations:personal_webhook_test": ("POST", (W, 302, 404, 404, 404)),
    "integrations:personal_webhook_delete": ("POST", (W, 302, 404, 404, 404)),
    # Prometheus: a token or an allowed address, never a session (none configured here)
    "metrics": ("GET", (403, 403, 403, 403, 403)),
    # the support desk: search and the inbox for everyone (each sees only their own items and
    # what their teams hold), team A's host page; the fleet playbook (no host selected) and
    # the diff (no snapshots chosen) of the filled parameters exist for no one
    "desk:search": ("GET", (W, 200, 200, 200, 200)),
    "desk:inbox": ("GET", (W, 200, 200, 200, 200)),
    "desk:inbox_open": ("GET", (W, 302, 404, 404, 404)),  # engineer A's item: only they open it
    "desk:inbox_read_all": ("POST", (W, 302, 302, 302, 302)),
    "desk:host_detail": ("GET", (W, 200, 404, 200, 200)),
    "desk:host_diff": ("GET", (W, 404, 404, 404, 404)),
    "desk:rule_playbook": ("GET", (W, 404, 404, 404, 404)),
    "desk:rule_inventory": ("GET", (W, 404, 404, 404, 404)),
    "api-search": ("GET", (A, 200, 200, 200, 200)),
    "api-host-detail": ("GET", (A, 200, 404, 200, 200)),
    # the collector, the schema and its UI
    "collect_sh": ("GET", (A, 200, 200, 200, 200)),
    "schema": ("GET", (A, 200, 200, 200, 200)),
    "swagger-ui": ("GET", (A, 200, 200, 200, 200)),
}
# Django's admin: only the administrator gets in; everyone else is sent to
# the admin sign-in page.
ADMIN_NAMESPACE = "admin"
CLUSTER = "ob/bench 1"  # a cluster name needing URL encoding
HOST = "obs-197.team-a.example"  # team A's snapshot's host


def walk(patterns, prefix: str = "", namespace: str | None = None):
    """(route, name, pattern) for every leaf of the URL conf."""
    for p in patterns:
        if isinstance(p, URLResolver):
            ns = namespace
            if p.namespace:
                ns = f"{namespace}:{p.namespace}" if namespace else p.namespace
            yield from walk(p.url_patterns, prefix + str(p.pattern), ns)
        elif isinstance(p, URLPattern):
            name = f"{namespace}:{p.name}" if namespace and p.name else p.name
            yield prefix + str(p.pattern), name, p


def discovered():
    return list(walk(get_resolver().url_patterns))


def _admin_object_id(world: World, name: str) -> str:
    """An object of the admin page's model, team A's where there is one."""
    from django.apps import apps

    match = re.match(r"admin:(\w+?)_(\w+)_(change|delete|history)$", name)
    if not match:
        return "1"
    app_label, model_name = match.group(1), match.group(2)
    try:
        model = apps.get_model(app_label, model_name)
    except LookupError:
        return "1"
    preferred = {
        "triage.snapshot": world.snapshot.pk,
        "troubleshoot.session": world.session.pk,
        "auth.user": world.users["engineer_a"].pk,
        "accounts.team": world.teams["team-a"].pk,
    }.get(model._meta.label_lower)
    if preferred is not None:
        return str(preferred)
    obj = model._default_manager.order_by("pk").first()
    return str(obj.pk) if obj is not None else "1"


def fill(route: str, name: str, world: World) -> str:
    """A concrete path for a route: team A's objects for the parameters."""
    values = {
        "pk": str(
            world.session.pk
            if "sessions/" in route
            else world.inbox_item.pk
            if "inbox/<int:pk>" in route
            else world.acknowledgement.pk
            if "acknowledgements/<int:pk>" in route
            else world.snapshot.pk
        ),
        "slug": "remove-netem" if "measure" in (name or "") else "oceanbase-bmsql-tuning",
        "language": "en",
        "step": "problem",
        "rule_id": "net.netem_delay",
        "object_id": _admin_object_id(world, name or ""),
        "id": str(world.users["engineer_a"].pk),
        "app_label": "triage",
        "content_type_id": "1",
        "url": "",
        "domain": "no-such-guest",
        "name": quote(CLUSTER),
        "team": "team-a",
        "host": HOST,
        "webhook": str(
            world.personal_webhook.pk if route.startswith("integrations/me/") else world.webhook.pk
        ),
    }

    def sub(m: re.Match) -> str:
        key = m.group("name")
        if key not in values:
            pytest.fail(f"no value for path parameter {key!r} of {route} ({name})")
        return values[key]

    path = re.sub(r"<(?:(?P<conv>\w+):)?(?P<name>\w+)>", sub, route)
    # Regex routes (the admin's app index) are given their literal form.
    path = (
        path.lstrip("^")
        .rstrip("$")
        .replace("(?P<app_label>auth|accounts|kb|triage|troubleshoot|authtoken)", "triage")
    )
    return "/" + path


def client_for(world: World, role: str, api: bool):
    if role == "anonymous":
        return world.api(None) if api else Client()
    if api:
        return world.api(role)
    client = Client()
    client.force_login(world.users[role])
    return client


@pytest.fixture
def world(db, django_user_model, settings, tmp_path, monkeypatch):
    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    world = build_world(django_user_model)
    # Team A's snapshot belongs to a cluster, so the cluster page has a host.
    Snapshot.objects.filter(pk=world.snapshot.pk).update(cluster=CLUSTER, host_key=HOST)
    # ... and one of its findings is acknowledged (the withdraw URLs)
    world.snapshot.refresh_from_db()
    world.acknowledgement = acknowledgements.acknowledge(
        user=world.users["engineer_a"],
        snapshot=world.snapshot,
        rule="net.netem_delay",
        scope="host",
        reason="the delay is part of the test bed",
    )
    # An inbox item of engineer A (opening it marks it read and redirects).
    world.inbox_item = InboxItem.objects.create(
        user=world.users["engineer_a"], kind="mention", title="a comment", url="/sessions/", key="matrix"
    )
    # Team A's webhook, to a receiver that is never reached: nothing is enqueued.
    monkeypatch.setattr(integrations_services, "_enqueue_delivery", lambda pk: None)
    world.webhook = Webhook.objects.create(
        team=world.teams["team-a"], url="http://127.0.0.1:9/hook", secret="s", events=["analysis.done"]
    )
    # ... and a personal webhook of engineer A (for their inbox items)
    world.personal_webhook = Webhook.objects.create(
        user=world.users["engineer_a"], url="http://127.0.0.1:9/me", secret="s", events=["inbox.item"]
    )
    return world


def _is_admin(route: str, name: str | None) -> bool:
    return route.startswith("admin/") or (name or "").startswith(ADMIN_NAMESPACE + ":")


def test_every_url_has_an_expectation():
    missing = sorted(
        f"{route} ({name})"
        for route, name, _ in discovered()
        if not _is_admin(route, name) and name not in EXPECTED
    )
    assert not missing, f"URLs without an access expectation: {missing}"
    stale = set(EXPECTED) - {name for _, name, _ in discovered()}
    assert not stale, f"expectations for URLs that no longer exist: {sorted(stale)}"


def _is_api(route: str) -> bool:
    return route.startswith("api/") or route == "collect.sh"


# Signing out and rotating a token change the session or the credentials the
# other requests use: these go last.
LAST = (
    "logout",
    "accounts:token_create",
    "accounts:token_revoke",
    "integrations:webhook_delete",
    "integrations:personal_webhook_delete",
)


def test_access_matrix(world):
    failures = []
    routes = sorted(discovered(), key=lambda r: r[1] in LAST)
    for route, name, _ in routes:
        if _is_admin(route, name) or name not in EXPECTED:
            continue
        method, statuses = EXPECTED[name]
        path = fill(route, name, world)
        for role, expected in zip(ROLES, statuses, strict=True):
            client = client_for(world, role, _is_api(route))
            response = client.post(path, {}) if method == "POST" else client.get(path)
            if response.status_code != expected:
                failures.append(f"{method} {path} as {role}: {response.status_code}, expected {expected}")
    assert not failures, "\n".join(failures)


def test_team_b_sees_nothing_of_team_a_in_lists(world):
    """List pages and endpoints answer 200 for team B, without team A's objects."""
    b = client_for(world, "engineer_b", api=False)
    for path in ("/snapshots/", "/sessions/", "/", "/rules/net.netem_delay/"):
        html = b.get(path).content.decode()
        assert "obs-197" not in html and "BMSQL below expectation" not in html, path
    api = client_for(world, "engineer_b", api=True)
    assert api.get("/api/v1/snapshots/").json()["count"] == 0
    assert [x["title"] for x in api.get("/api/v1/sessions/").json()["results"]] == ["team B's own session"]
    assert api.get("/api/v1/snapshots/?rule=net.netem_delay").json()["count"] == 0
    rule = api.get("/api/v1/rules/net.netem_delay/").json()
    assert rule["hosts"] == [] and rule["acknowledgements"] == [] and rule["hosts_affected"] == 0


def test_admin_pages_only_for_administrators(world):
    checked = 0
    for route, name, _ in discovered():
        # The admin's own sign-in and sign-out pages are checked below.
        if not _is_admin(route, name) or name in (None, "admin:login", "admin:logout"):
            continue
        path = fill(route, name, world)
        if "(?P" in path:
            continue
        for role in ("anonymous", "engineer_a", "engineer_b", "support"):
            status = client_for(world, role, api=False).get(path).status_code
            assert status in (302, 404), f"{path} as {role}: {status}"
        status = client_for(world, "admin", api=False).get(path).status_code
        assert status < 500, f"{path} as admin: {status}"
        if name.endswith("_changelist"):
            assert status == 200, f"{path} as admin: {status}"
        checked += 1
    assert checked > 20
    assert client_for(world, "anonymous", api=False).get("/admin/login/").status_code == 200
    # The admin's catch-all and object shortcut redirect, never show data.
    assert (
        client_for(world, "engineer_b", api=False)
        .get(f"/admin/triage/snapshot/{world.snapshot.pk}/")
        .status_code
        == 302
    )


def test_search_suggestions_come_only_from_cases_the_reader_may_read(world):
    """ "Did you mean" respells from the index vocabulary: a word found only
    in team A's draft (a customer host name) is never offered to anyone who
    may not read that draft, in any state filter, web or API."""
    draft = Case(
        slug="session-9-customer-host",
        language="en",
        title="Slow guest on hypervisor custhypervisorseventeen",
        symptom="custhypervisorseventeen runs the slow guest",
        state=Case.State.DRAFT,
        author=world.users["engineer_a"],
    )
    save_case(draft, steps=[], metrics=[])
    typo = "custhypervisorsevnteen"
    for role, sees in (("engineer_a", True), ("engineer_b", False), ("support", True), ("admin", True)):
        for state in ("", "draft", "published", "review"):
            params = {"q": typo, **({"state": state} if state else {})}
            expected = sees and state == "draft"
            api = client_for(world, role, api=True).get("/api/v1/cases/", params).json()
            assert ("custhypervisorseventeen" in api["suggestion"]) is expected, (
                role,
                state,
                api["suggestion"],
            )
            page = client_for(world, role, api=False).get("/cases/", params).content.decode()
            assert ("custhypervisorseventeen" in page) is expected, (role, state)
