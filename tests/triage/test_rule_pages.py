"""Rule pages, the rule list's order, acknowledgements (folded on the report,
in report.md and in the API, listed on the rule page, in the audit trail) and
ticket references of snapshots."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import Membership, Team
from tests.triage.kunpeng_fleet import RULE, host_name, upload_fleet
from triage import acknowledgements, analysis, fleetview, selectors, tickets, uploads
from triage.models import Acknowledgement, Snapshot
from triage.reports import render_markdown
from troubleshoot.models import AuditEntry

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path, monkeypatch):
    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)


@pytest.fixture
def teams(django_user_model):
    a, b = (
        Team.objects.create(name="Team A", slug="team-a"),
        Team.objects.create(name="Team B", slug="team-b"),
    )
    alice = django_user_model.objects.create_user("alice", password="alice-pass-123")
    bob = django_user_model.objects.create_user("bob", password="bob-pass-123")
    Membership.objects.create(user=alice, team=a)
    Membership.objects.create(user=bob, team=b)
    return {"alice": alice, "bob": bob}


@pytest.fixture
def fleet(teams):
    return upload_fleet(teams["alice"], 3)


def _client(client, user):
    client.force_login(user)
    return client


def test_the_analysis_stores_the_host_key(fleet):
    assert [s.host_key for s in fleet] == [host_name(i) for i in (1, 2, 3)]


def test_only_the_newest_snapshot_of_a_host_counts(fleet, teams):
    visible = selectors.visible_snapshots(teams["alice"])
    assert fleetview.affected_counts(visible)[RULE] == 3
    # a newer snapshot of gp-sdw02 without the finding (a bare lscpu: no distances)
    newer = uploads.create_snapshot(
        owner=teams["alice"],
        data=b"Architecture: aarch64\nCPU(s): 4\n",
        filename="lscpu.txt",
        label="gp-sdw02",
    )
    analysis.analyze_snapshot_now(snapshot_id=newer.pk)
    newer.refresh_from_db()
    assert newer.host_key == "gp-sdw02" and not newer.current_findings().filter(rule=RULE).exists()
    hosts = [s.host_key for s in fleetview.affected_snapshots(visible, RULE)]
    assert hosts == ["gp-sdw01", "gp-sdw03"]
    assert fleetview.affected_counts(visible)[RULE] == 2


def test_another_team_sees_none_of_the_hosts(fleet, teams):
    visible = selectors.visible_snapshots(teams["bob"])
    assert fleetview.affected_counts(visible) == {}
    assert not fleetview.affected_snapshots(visible, RULE).exists()


def test_rule_page_queries_do_not_grow_with_the_fleet(fleet, teams, client):
    c = _client(client, teams["alice"])
    with CaptureQueriesContext(connection) as small:
        assert c.get(f"/rules/{RULE}/").status_code == 200
    upload_fleet(teams["alice"], 6, cluster="kunpeng-2")  # gp-sdw01..06 of another... same host keys
    for i in range(7, 10):
        s = uploads.create_snapshot(
            owner=teams["alice"],
            data=fleet[0].file.open("rb").read().replace(b"gp-sdw01", host_name(i).encode()),
            filename=f"{host_name(i)}.txt",
            label=host_name(i),
        )
        analysis.analyze_snapshot_now(snapshot_id=s.pk)
    with CaptureQueriesContext(connection) as large:
        page = c.get(f"/rules/{RULE}/")
    assert page.status_code == 200
    assert len(large) == len(small)
    assert page.context["total"] == 9  # gp-sdw01..09, each once: its newest snapshot


def test_rule_page_pages_its_hosts(fleet, teams, client, monkeypatch):
    """Every affected host is on some page: none drops off the end of the list."""
    monkeypatch.setattr(fleetview, "HOSTS_PER_PAGE", 2)
    c = _client(client, teams["alice"])
    first = c.get(f"/rules/{RULE}/")
    second = c.get(f"/rules/{RULE}/", {"hosts": 2})
    listed = [h.snapshot.host_key for page in (first, second) for h in page.context["hosts"]]
    assert listed == [host_name(i) for i in (1, 2, 3)]
    assert first.context["total"] == 3
    html = first.content.decode()
    assert 'href="?hosts=2"' in html and 'class="page-next"' in html and "Older" not in html


def test_rule_page_lists_text_measures_cases_hosts_and_weeks(fleet, teams, client):
    from kb.services import load_all

    load_all(use_real_engine=False)
    page = _client(client, teams["alice"]).get(f"/rules/{RULE}/")
    html = page.content.decode()
    assert page.context["total"] == 3
    for i in (1, 2, 3):
        assert f'data-host="{host_name(i)}"' in html
    assert "kunpeng-stream-zone-reclaim" in html  # the founding case of the rule
    assert 'id="thresholds"' in html
    assert page.context["weeks"][-1][1] == 3
    assert "<svg" in page.context["chart"]


def test_rule_page_in_chinese_shows_the_chinese_condition_and_rationale(teams, client):
    from django.utils import translation
    from django.utils.html import escape

    from engine.rules import load_all

    spec = load_all()[RULE]
    title_zh, condition, condition_zh, rationale, rationale_zh = map(
        escape, (spec.title_zh, spec.condition, spec.condition_zh, spec.rationale, spec.rationale_zh)
    )
    c = _client(client, teams["alice"])
    with translation.override("zh-hans"):
        zh = c.get(f"/rules/{RULE}/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    en = c.get(f"/rules/{RULE}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert title_zh in zh and condition_zh in zh and rationale_zh in zh
    assert condition not in zh and rationale not in zh
    assert condition in en and rationale in en and condition_zh not in en


def test_rule_list_is_sorted_by_affected_hosts(fleet, teams, client):
    rows = _client(client, teams["alice"]).get("/rules/").context["rows"]
    assert rows[0]["spec"].id == RULE and rows[0]["hosts"] == 3
    assert all(r["hosts"] == 0 for r in rows[1:])
    api = client.get("/api/v1/rules/").json()
    assert api[0]["id"] == RULE and api[0]["hosts_affected"] == 3


def test_unknown_rule_is_404(teams, client):
    assert _client(client, teams["alice"]).get("/rules/no.such_rule/").status_code == 404


def test_acknowledge_on_the_report_folds_the_finding(fleet, teams, client):
    c = _client(client, teams["alice"])
    snap = fleet[0]
    finding = snap.current_findings().get(rule=RULE)
    response = c.post(
        f"/snapshots/{snap.pk}/acknowledge/",
        {"rule": RULE, "scope": "host", "reason": "Kunpeng 920 topology: expected", "expires": ""},
    )
    assert response.status_code == 302 and response["Location"].endswith(f"#finding-{finding.pk}")
    ack = Acknowledgement.objects.get()
    assert (ack.host, ack.cluster, ack.team.slug) == ("gp-sdw01", "", "team-a")
    page = c.get(snap.get_absolute_url())
    html = page.content.decode()
    assert 'class="finding sev-info acknowledged"' in html
    assert page.context["finding_count"] == 0 and page.context["acknowledged_count"] == 1
    # the other hosts are not covered by a host acknowledgement
    assert (
        "acknowledged"
        not in c.get(fleet[1].get_absolute_url())
        .content.decode()
        .split('id="findings-heading"')[1]
        .split("</article>")[0]
        .split('class="finding')[1]
        .split('"')[0]
    )
    # report.md: folded into its own section, never dropped
    md = render_markdown(Snapshot.objects.get(pk=snap.pk))
    assert "## Findings (0)" in md
    assert "## Acknowledged (1)" in md and "Kunpeng 920 topology: expected" in md and RULE in md
    # API: listed, marked acknowledged
    findings = c.get(f"/api/v1/snapshots/{snap.pk}/").json()["findings"]
    assert [f["acknowledged"]["reason"] for f in findings if f["rule"] == RULE] == [
        "Kunpeng 920 topology: expected"
    ]
    # the rule page lists it, and the host as acknowledged
    rule_page = c.get(f"/rules/{RULE}/")
    assert rule_page.context["acknowledged_hosts"] == 1
    assert f'data-ack="{ack.pk}"' in rule_page.content.decode()
    # audit trail
    assert AuditEntry.objects.filter(acknowledgement=ack, action="acknowledge", user=teams["alice"]).exists()


def test_cluster_acknowledgement_covers_every_host_and_can_expire(fleet, teams):
    snap = fleet[1]
    ack = acknowledgements.acknowledge(
        user=teams["alice"], snapshot=snap, rule=RULE, scope="cluster", reason="whole cluster: accepted"
    )
    for s in fleet:
        assert fleetview.acknowledgements_for(s)[RULE].pk == ack.pk
    Acknowledgement.objects.filter(pk=ack.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    assert fleetview.acknowledgements_for(fleet[0]) == {}


def test_lists_count_only_open_findings_and_say_how_many_are_acknowledged(fleet, teams, client):
    c = _client(client, teams["alice"])
    snap = fleet[0]
    severity = snap.current_findings().get(rule=RULE).severity
    before = {s.pk: s for s in c.get("/snapshots/").context["snapshots"]}
    acknowledgements.acknowledge(
        user=teams["alice"], snapshot=snap, rule=RULE, scope="host", reason="Kunpeng 920 topology: expected"
    )
    for url, key in (("/snapshots/", "snapshots"), ("/", "recent_snapshots")):
        rows = {s.pk: s for s in c.get(url).context[key]}
        name = f"n_{severity}"
        assert getattr(rows[snap.pk], name) == getattr(before[snap.pk], name) - 1, url
        assert rows[snap.pk].n_acknowledged == 1
        # a host acknowledgement does not cover the other hosts
        assert getattr(rows[fleet[1].pk], name) == getattr(before[fleet[1].pk], name)
        assert rows[fleet[1].pk].n_acknowledged == 0
    assert "1 acknowledged" in c.get("/snapshots/").content.decode()


def test_withdrawing_shows_the_finding_again_and_keeps_the_record(fleet, teams, client):
    snap = fleet[0]
    ack = acknowledgements.acknowledge(
        user=teams["alice"], snapshot=snap, rule=RULE, scope="host", reason="known"
    )
    # team B cannot withdraw team A's acknowledgement, nor see it
    assert _client(client, teams["bob"]).post(f"/acknowledgements/{ack.pk}/revoke/").status_code == 404
    c = _client(client, teams["alice"])
    assert (
        c.post(f"/acknowledgements/{ack.pk}/revoke/", {"next": "https://evil.example/"})["Location"]
        == f"/rules/{RULE}/"
    )
    ack.refresh_from_db()
    assert ack.revoked_by == teams["alice"] and fleetview.acknowledgements_for(snap) == {}
    assert list(
        AuditEntry.objects.filter(acknowledgement=ack).order_by("id").values_list("action", flat=True)
    ) == [
        "acknowledge",
        "acknowledge.revoke",
    ]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"reason": "  "}, "reason"),
        ({"scope": "cluster", "snapshot": "teamless"}, "no cluster"),
        ({"rule": "kvm.vcpus_unpinned"}, "no such finding"),
        ({"expires_at": timezone.now() - timedelta(days=1)}, "past"),
        ({"scope": "everything"}, "scope"),
    ],
)
def test_acknowledgements_are_refused_when_they_make_no_sense(fleet, teams, kwargs, message):
    snap = fleet[0]
    if kwargs.pop("snapshot", None):
        Snapshot.objects.filter(pk=snap.pk).update(cluster="")
        snap.refresh_from_db()
    args = {"user": teams["alice"], "snapshot": snap, "rule": RULE, "scope": "host", "reason": "ok", **kwargs}
    with pytest.raises(acknowledgements.AcknowledgementRejected, match=message):
        acknowledgements.acknowledge(**args)
    assert not Acknowledgement.objects.exists()


def test_api_acknowledge_and_rule_detail(fleet, teams):
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(teams["alice"])
    response = api.post(
        f"/api/v1/snapshots/{fleet[2].pk}/acknowledgements/",
        {"rule": RULE, "scope": "host", "reason": "<script>x</script>"},
        format="json",
    )
    assert response.status_code == 201 and response.json()["host"] == "gp-sdw03"
    detail = api.get(f"/api/v1/rules/{RULE}/").json()
    assert detail["hosts_affected"] == 3
    assert {h["host"]: bool(h["acknowledged"]) for h in detail["hosts"]} == {
        "gp-sdw01": False,
        "gp-sdw02": False,
        "gp-sdw03": True,
    }
    assert detail["weeks"][-1]["hosts"] == 3 and detail["acknowledgements"][0]["active"] is True
    assert detail["condition_zh"] and detail["rationale_zh"]
    assert (
        api.post(
            f"/api/v1/snapshots/{fleet[2].pk}/acknowledgements/", {"rule": RULE}, format="json"
        ).status_code
        == 400
    )
    bob = APIClient()
    bob.force_authenticate(teams["bob"])
    assert bob.get(f"/api/v1/rules/{RULE}/").json()["hosts"] == []
    assert (
        bob.post(f"/api/v1/snapshots/{fleet[2].pk}/acknowledgements/", {}, format="json").status_code == 404
    )


def test_tickets_are_links_and_filter_the_snapshot_list(fleet, teams, client):
    c = _client(client, teams["alice"])
    snap = fleet[0]
    c.post(
        f"/snapshots/{snap.pk}/tickets/",
        {"key": "OPS-4711", "url": "https://jira.example.com/browse/OPS-4711"},
    )
    c.post(f"/snapshots/{snap.pk}/tickets/", {"key": "bad key", "url": "javascript:alert(1)"})
    assert list(snap.tickets.values_list("key", "url")) == [
        ("OPS-4711", "https://jira.example.com/browse/OPS-4711")
    ]
    html = c.get(snap.get_absolute_url()).content.decode()
    assert 'href="https://jira.example.com/browse/OPS-4711"' in html and "javascript:" not in html
    listed = c.get("/snapshots/?ticket=ops-4711").context["snapshots"]
    assert [s.pk for s in listed] == [snap.pk]
    assert c.get(f"/api/v1/snapshots/{snap.pk}/").json()["tickets"][0]["key"] == "OPS-4711"
    assert _client(client, teams["bob"]).get("/snapshots/?ticket=OPS-4711").context["snapshots"] == []


@pytest.mark.parametrize(
    "key, url",
    [
        ("OPS 1", ""),
        ("", ""),
        ("x" * 65, ""),
        ("OPS-1", "javascript:alert(1)"),
        ("OPS-1", "ftp://example.com/x"),
        ("OPS-1", "https://example.com/\x00"),
        ("OPS-1\x00", ""),
    ],
)
def test_hostile_ticket_references_are_refused(key, url):
    with pytest.raises(tickets.TicketRejected):
        tickets.clean_ticket(key, url)
