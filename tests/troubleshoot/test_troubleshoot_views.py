"""The wizard over HTTP: every step works with plain form posts (no JS) and
as htmx fragments; the URL names the step; sessions stay within their team."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from troubleshoot import lifecycle, planning, snapshots
from troubleshoot.models import AuditEntry, Session

pytestmark = pytest.mark.django_db


def step_url(session, name):
    return reverse("troubleshoot:step", args=[session.pk, name])


@pytest.fixture
def alice_client(client, teams):
    client.force_login(teams["alice"])
    return client


def test_create_session_with_a_plain_form(alice_client, teams):
    response = alice_client.post(
        reverse("troubleshoot:session_new"),
        {
            "title": "Slow index build",
            "symptom": "CREATE INDEX 120 s",
            "metric_name": "CREATE INDEX",
            "metric_unit": "s",
            "metric_baseline": "120",
            "metric_expected": "30-60 s",
            "metric_direction": "lower",
        },
    )
    session = Session.objects.get()
    assert response.status_code == 302
    assert response["Location"] == step_url(session, "snapshots")
    assert session.owner == teams["alice"] and session.team.slug == "db"
    assert session.metric_baseline == 120.0
    page = alice_client.get(response["Location"])
    assert page.status_code == 200
    assert b'data-step="snapshots"' in page.content
    assert b"<html" in page.content


def test_every_step_renders_as_page_and_fragment(zstack_session, alice_client):
    zstack_session.refresh_from_db()
    step_before, audit_before = zstack_session.step, AuditEntry.objects.filter(session=zstack_session).count()
    for name in ("problem", "snapshots", "findings", "constraints", "plan", "apply", "verify", "close"):
        page = alice_client.get(step_url(zstack_session, name))
        assert page.status_code == 200, name
        assert f'data-step="{name}"'.encode() in page.content
        fragment = alice_client.get(step_url(zstack_session, name), HTTP_HX_REQUEST="true")
        assert fragment.status_code == 200
        assert b"<html" not in fragment.content
        assert fragment["HX-Push-Url"] == step_url(zstack_session, name)
    # Showing a step is a GET: it neither moves the session nor writes to its audit trail.
    zstack_session.refresh_from_db()
    assert zstack_session.step == step_before
    assert AuditEntry.objects.filter(session=zstack_session).count() == audit_before


def test_next_moves_the_session_by_post(zstack_session, alice_client):
    r = alice_client.post(step_url(zstack_session, "constraints"), {"next": "1"})
    assert r.status_code == 302 and r["Location"] == step_url(zstack_session, "plan")
    zstack_session.refresh_from_db()
    assert zstack_session.step == "plan"
    assert AuditEntry.objects.filter(session=zstack_session, action="step", new="plan").exists()


def test_findings_page_shows_charts_and_top_case(zstack_session, alice_client):
    page = alice_client.get(step_url(zstack_session, "findings")).content.decode()
    assert 'data-rule="kvm.vcpu_hotplug_enabled"' in page
    similar = page[page.index('id="similar-cases"') :]
    assert re.search(r'data-slug="([^"]+)"', similar).group(1) == "zstack-mariadb-v2v"
    assert "chart-numa-memory" in page and "chart-cpu-heat" in page and "chart-numa-distance" in page


def test_plan_and_apply_with_plain_posts(zstack_session, alice_client):
    r = alice_client.post(
        step_url(zstack_session, "constraints"),
        {"guest_reboot_allowed": "on", "service_restart_allowed": "on", "next": "1"},
    )
    assert r.status_code == 302 and r["Location"] == step_url(zstack_session, "plan")
    plan = alice_client.get(r["Location"]).content.decode()
    # Host-reboot measures are shown blocked with the constraint, with no add button.
    row = plan[plan.index('data-measure="static-hugepages"') :]
    row = row[: row.index("</tr>")]
    assert "BLOCKED" in row and "host reboot not allowed" in row and "Add to plan" not in row
    r = alice_client.post(
        step_url(zstack_session, "plan"), {"action": "add", "measure": "pin-vcpus", "tier": "1"}
    )
    assert r.status_code == 302
    refused = alice_client.post(
        step_url(zstack_session, "plan"), {"action": "add", "measure": "isolate-host-cpus", "tier": "2"}
    )
    assert refused.status_code == 302
    assert not zstack_session.measures.filter(measure__slug="isolate-host-cpus").exists()
    pm = zstack_session.measures.get()
    r = alice_client.post(
        step_url(zstack_session, "apply"),
        {
            "action": "record",
            "pm": pm.pk,
            f"pm{pm.pk}-status": "applied",
            f"pm{pm.pk}-change_made": "virsh edit infoplus",
            f"pm{pm.pk}-metric_after": "58",
        },
    )
    assert r.status_code == 302
    pm.refresh_from_db()
    assert pm.status == "applied" and pm.metric_after == 58.0
    page = alice_client.get(step_url(zstack_session, "apply")).content.decode()
    assert "chart-metric" in page and 'data-value="58"' in page


def test_htmx_post_answers_with_the_next_step_fragment(zstack_session, alice_client):
    r = alice_client.post(
        step_url(zstack_session, "problem"),
        {"title": zstack_session.title, "metric_baseline": "121", "metric_direction": "lower", "next": "1"},
        HTTP_HX_REQUEST="true",
    )
    assert r.status_code == 200
    assert r["HX-Push-Url"] == step_url(zstack_session, "snapshots")
    assert b'data-step="snapshots"' in r.content
    assert AuditEntry.objects.filter(action="metric", target="metric_baseline", old="120", new="121").exists()


def test_other_team_gets_404_and_cannot_post(zstack_session, client, teams):
    client.force_login(teams["carol"])
    assert client.get(step_url(zstack_session, "problem")).status_code == 404
    r = client.post(step_url(zstack_session, "problem"), {"title": "mine now", "metric_direction": "lower"})
    assert r.status_code == 404
    assert not client.get(reverse("troubleshoot:session_list")).context["sessions"]
    zstack_session.refresh_from_db()
    assert zstack_session.title != "mine now"


def test_support_sees_every_session(zstack_session, client, teams):
    client.force_login(teams["sam"])
    assert client.get(step_url(zstack_session, "findings")).status_code == 200
    assert list(client.get(reverse("troubleshoot:session_list")).context["sessions"]) == [zstack_session]


def test_teammate_sees_and_changes(zstack_session, client, teams):
    client.force_login(teams["bob"])
    r = client.post(step_url(zstack_session, "constraints"), {"guest_reboot_allowed": "on"})
    assert r.status_code == 302
    entry = AuditEntry.objects.get(target="guest_reboot_allowed")
    assert entry.user == teams["bob"]


def test_progress_polls_until_done(zstack_session, alice_client):
    url = reverse("troubleshoot:progress", args=[zstack_session.pk])
    done = alice_client.get(url).content.decode()
    assert "hx-trigger" not in done and 'data-done="2"' in done
    snap = snapshots.snapshots_of(zstack_session)[0]
    type(snap).objects.filter(pk=snap.pk).update(status="analyzing")
    polling = alice_client.get(url).content.decode()
    assert 'hx-trigger="every 1s"' in polling and 'data-done="1"' in polling


def test_dashboard_include_lists_open_sessions(zstack_session, rf, teams):
    from django.template import Context, Template

    request = rf.get("/")
    request.user = teams["bob"]
    html = Template("{% load troubleshoot_sessions %}{% recent_sessions %}").render(
        Context({"request": request})
    )
    assert zstack_session.title in html
    request.user = teams["carol"]
    html = Template("{% load troubleshoot_sessions %}{% recent_sessions %}").render(
        Context({"request": request})
    )
    assert zstack_session.title not in html


def test_effectiveness_page(alice_client):
    assert alice_client.get(reverse("troubleshoot:effectiveness")).status_code == 200


def test_snapshots_verify_close_promote_publish_without_javascript(
    zstack_session, alice_client, client, teams
):
    """The later steps by plain multipart and form posts, as a browser without JS sends them."""
    from tests.troubleshoot.conftest import SEEDS
    from triage import analysis

    lifecycle.update_session(
        session=zstack_session, user=teams["alice"], changes={"guest_reboot_allowed": True}
    )
    planning.plan_measure(session=zstack_session, user=teams["alice"], slug="pin-vcpus")
    files = [open(p, "rb") for p in sorted((SEEDS / "zstack-mariadb-v2v" / "after").iterdir())]  # noqa: SIM115
    try:
        r = alice_client.post(
            step_url(zstack_session, "verify"), {"action": "upload", "phase": "after", "files": files}
        )
    finally:
        for f in files:
            f.close()
    assert r.status_code == 302 and r["Location"] == step_url(zstack_session, "verify")
    after = snapshots.snapshots_of(zstack_session, "after")
    assert len(after) == 2
    for snap in after:
        analysis.analyze_snapshot_now(snapshot_id=snap.pk, force=True)
    page = alice_client.get(step_url(zstack_session, "verify")).content.decode()
    cleared = page[page.index('id="cleared"') : page.index('id="remaining"')]
    assert 'data-rule="kvm.vcpus_unpinned"' in cleared

    r = alice_client.post(
        step_url(zstack_session, "verify"), {"action": "metric", "metric_after": "58", "next": "1"}
    )
    assert r["Location"] == step_url(zstack_session, "close")
    r = alice_client.post(
        step_url(zstack_session, "close"),
        {"action": "close", "outcome": "resolved", "root_cause": "no pinning", "lessons": ""},
    )
    assert r.status_code == 302
    page = alice_client.get(step_url(zstack_session, "close")).content.decode()
    assert 'id="similar-warning"' in page and 'value="zstack-mariadb-v2v"' in page
    # Without confirming, promoting only warns; confirmed, it creates the draft.
    alice_client.post(step_url(zstack_session, "close"), {"action": "promote"})
    zstack_session.refresh_from_db()
    assert zstack_session.promoted_case is None
    alice_client.post(step_url(zstack_session, "close"), {"action": "promote", "confirm": "1"})
    zstack_session.refresh_from_db()
    case = zstack_session.promoted_case
    assert case.state == "draft" and case.metrics.get().after == 58.0
    page = alice_client.get(step_url(zstack_session, "close")).content.decode()
    # The wizard no longer publishes: it links both versions, the other one to translate.
    assert 'id="publish"' not in page and 'id="promoted-versions"' in page
    assert page.count('hreflang="zh"') >= 1 and "pre-filled from the other language" in page

    # On the case page: alice translates the Chinese version and submits;
    # support staff (sam) approves; then both versions are published.
    review = reverse("kb:case_review", args=[case.slug])
    alice_client.post(reverse("kb:case_edit", args=[case.slug, "zh"]), {
        "title": "v2v 迁移后 MariaDB 慢一倍", "symptom": "CREATE INDEX 需要 120 秒。", "cause": "未绑核。",
        "resolution_summary": "", "environment_notes": "",
    })  # fmt: skip
    alice_client.post(review, {"action": "submit"})
    case.refresh_from_db()
    assert case.state == "review"
    assert alice_client.post(review, {"action": "approve"}).status_code == 403  # the author is no reviewer
    client.force_login(teams["sam"])
    page = client.get(case.get_absolute_url()).content.decode()
    assert 'id="approve"' in page and 'id="return"' in page
    client.post(review, {"action": "approve"})
    case.refresh_from_db()
    assert case.state == "published" and case.reviewer == teams["sam"]


def test_support_sees_a_session_without_team(client, teams, django_user_model):
    loner = django_user_model.objects.create_user("loner", password="loner-password-1")
    session = lifecycle.create_session(owner=loner, title="no team")
    assert session.team is None
    client.force_login(teams["sam"])
    assert client.get(step_url(session, "problem")).status_code == 200
    client.force_login(teams["alice"])
    assert client.get(step_url(session, "problem")).status_code == 404


def test_admin_shows_the_session_read_only(zstack_session, client, django_user_model):
    admin_user = django_user_model.objects.create_superuser("root", password="root-password-1")
    client.force_login(admin_user)
    page = client.get(reverse("admin:troubleshoot_session_change", args=[zstack_session.pk]))
    assert page.status_code == 200
    assert b"metric_baseline" in page.content  # the audit trail inline
    assert client.get(reverse("admin:troubleshoot_session_changelist")).status_code == 200


def test_malformed_posts_are_rejected_not_500(zstack_session, alice_client):
    plan = step_url(zstack_session, "plan")
    assert alice_client.post(plan, {"action": "up", "pm": "x"}).status_code == 400
    assert alice_client.post(plan, {"action": "up", "pm": "999999"}).status_code == 404
    assert (
        alice_client.post(plan, {"action": "add", "measure": "no-such-measure", "tier": "1"}).status_code
        == 302
    )
    snaps = step_url(zstack_session, "snapshots")
    assert alice_client.post(snaps, {"action": "detach", "snapshot": "1; drop"}).status_code == 400
    close = step_url(zstack_session, "close")
    assert alice_client.post(close, {"action": "link", "case": "no-such-case"}).status_code == 302
    assert alice_client.post(close, {"action": "helped", "case": "no-such-case"}).status_code == 302
    assert alice_client.get(reverse("troubleshoot:step", args=[zstack_session.pk, "nope"])).status_code == 404


def test_findings_step_shows_the_reports_not_checked_list(alice_client, teams, media):
    """The same "Not checked — missing evidence" list as the snapshot's report,
    each item linked to the report where the output is pasted."""
    from tests.triage.test_views_evidence import make_done

    alice = teams["alice"]
    snap = make_done(alice)
    session = lifecycle.create_session(owner=alice, title="slow db", metric_name="qps")
    snapshots.attach_snapshot(session=session, user=alice, snapshot=snap)
    response = alice_client.get(reverse("troubleshoot:step", args=[session.pk, "findings"]))
    html = response.content.decode()
    section = html[html.index('id="not-checked"') :]
    assert "no /proc/meminfo or HugePages_Total was read" in section
    assert 'data-copy-text="grep -i huge /proc/meminfo"' in section
    assert f'href="{snap.get_absolute_url()}#not-checked"' in section
    assert 'name="output"' not in section  # pasting happens on the snapshot's report


def test_findings_page_of_a_healthy_host_matches_no_known_problem(
    teams, founding_cases, media, no_queue, alice_client
):
    """Issue 17: the Percona seed host with its problem fixed has no warning, so no case is offered
    even though the session's symptom and environment resemble the Percona case."""
    from tests.troubleshoot.conftest import SEEDS, upload_folder
    from troubleshoot import findings, lifecycle

    session = lifecycle.create_session(
        owner=teams["alice"],
        title="Percona restart check",
        symptom="Restart after enabling large pages",
        metric_name="start-up time",
        metric_unit="s",
        metric_baseline=3.0,
        metric_expected="< 10 s",
    )
    upload_folder(session, teams["alice"], SEEDS / "percona-numa-interleave-startup" / "after", "before")
    assert findings.similar_cases(session) == []
    page = alice_client.get(step_url(session, "findings")).content.decode()
    assert 'id="no-known-problem"' in page and 'id="similar-cases"' not in page
