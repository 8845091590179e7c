"""A session's assignee, comments and external tickets (each in the audit
trail), the ticket filter of the session list, and the session summary in
Markdown and Jira wiki markup."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied

from troubleshoot import people
from troubleshoot.models import AuditEntry, Session

pytestmark = pytest.mark.django_db


def _client(client, user):
    client.force_login(user)
    return client


def test_assign_to_a_team_member_and_back_to_nobody(zstack_session, teams):
    alice, bob, carol = teams["alice"], teams["bob"], teams["carol"]
    people.assign_session(session=zstack_session, user=alice, assignee=bob)
    assert Session.objects.get(pk=zstack_session.pk).assignee == bob
    # carol is in another team: she can neither be assigned nor assign
    with pytest.raises(PermissionDenied):
        people.assign_session(session=zstack_session, user=alice, assignee=carol)
    with pytest.raises(PermissionDenied):
        people.assign_session(session=zstack_session, user=carol, assignee=alice)
    people.assign_session(session=zstack_session, user=bob, assignee=None)
    trail = list(
        AuditEntry.objects.filter(session=zstack_session, action="assignee")
        .order_by("id")
        .values_list("old", "new")
    )
    assert trail == [("", "bob"), ("bob", "")]


def test_the_wizard_assigns_comments_and_links_tickets(zstack_session, teams, client):
    c = _client(client, teams["alice"])
    pk = zstack_session.pk
    assert c.post(f"/sessions/{pk}/assign/", {"assignee": teams["bob"].pk}).status_code == 302
    c.post(f"/sessions/{pk}/comments/", {"text": "Customer approved the <b>maintenance</b> window"})
    c.post(f"/sessions/{pk}/tickets/", {"key": "OPS-4711", "url": "https://jira.example.com/browse/OPS-4711"})
    html = c.get(f"/sessions/{pk}/step/problem/").content.decode()
    assert 'id="session-assignee">bob<' in html
    assert "Customer approved the &lt;b&gt;maintenance&lt;/b&gt; window" in html
    assert 'href="https://jira.example.com/browse/OPS-4711"' in html
    actions = set(AuditEntry.objects.filter(session_id=pk).values_list("action", flat=True))
    assert {"assignee", "comment", "ticket"} <= actions
    # an assignee outside the session's team is a bad request, not a change
    assert c.post(f"/sessions/{pk}/assign/", {"assignee": teams["carol"].pk}).status_code == 400
    # team "net" sees nothing and changes nothing
    carol = _client(client, teams["carol"])
    assert carol.post(f"/sessions/{pk}/comments/", {"text": "hi"}).status_code == 404
    assert zstack_session.comments.count() == 1


def test_session_list_filters_by_ticket_and_assignee(zstack_session, teams, client):
    people.add_session_ticket(session=zstack_session, user=teams["alice"], key="OPS-4711")
    c = _client(client, teams["bob"])
    assert [s.pk for s in c.get("/sessions/?ticket=ops-4711").context["sessions"]] == [zstack_session.pk]
    assert list(c.get("/sessions/?ticket=OPS-1").context["sessions"]) == []
    assert list(c.get("/sessions/?assignee=me").context["sessions"]) == []
    people.assign_session(session=zstack_session, user=teams["alice"], assignee=teams["bob"])
    assert [s.pk for s in c.get("/sessions/?assignee=me").context["sessions"]] == [zstack_session.pk]
    assert list(_client(client, teams["carol"]).get("/sessions/?ticket=OPS-4711").context["sessions"]) == []


def test_summary_in_markdown_and_jira_carries_the_same_content(zstack_session, teams, client):
    from troubleshoot.summary import render_summary

    alice = teams["alice"]
    people.add_session_ticket(
        session=zstack_session, user=alice, key="OPS-4711", url="https://jira.example.com/browse/OPS-4711"
    )
    people.assign_session(session=zstack_session, user=alice, assignee=teams["bob"])
    people.add_comment(session=zstack_session, user=alice, text="pinning planned for Friday [night] | *ok*")
    md = render_summary(zstack_session, markup="markdown", base_url="https://casebook.example/")
    jira = render_summary(zstack_session, markup="jira", base_url="https://casebook.example/")
    assert md.startswith("# Session: MariaDB slow after v2v migration\n")
    assert jira.startswith("h1. Session: MariaDB slow after v2v migration\n")
    assert "[OPS-4711](https://jira.example.com/browse/OPS-4711)" in md
    assert "[OPS\\-4711|https://jira.example.com/browse/OPS-4711]" in jira
    assert "Assignee: bob" in md and "Assignee: bob" in jira
    # the zstack findings, in both
    for rule in ("kvm.vcpus_unpinned", "kvm.guest_numa_missing"):
        assert f"`{rule}`" in md
        assert "{{" + rule.replace("_", "\\_") + "}}" in jira
    # user text cannot open Jira markup
    assert "pinning planned for Friday \\[night\\] \\| \\*ok\\*" in jira
    assert "|| CREATE INDEX duration | 120 → — s |" in jira
    page = _client(client, alice).get(f"/sessions/{zstack_session.pk}/summary.jira")
    assert page.status_code == 200 and page["Content-Type"].startswith("text/plain")
    assert _client(client, teams["carol"]).get(f"/sessions/{zstack_session.pk}/summary.md").status_code == 404
