"""Ticket keys picked up from a paste (triage.tickets.keys_in, on upload) and
carried from the snapshot to the session it joins and to the case that session
becomes. The paste is the ZStack founding seed's own write-up, whose fourth
line names its ticket (ZSTACK-48375) and whose body quotes MDEV-18860."""

from __future__ import annotations

import pytest

from accounts.models import Team
from triage import uploads
from triage.tickets import keys_in
from troubleshoot import lifecycle, promotion, snapshots


@pytest.fixture
def seed_text(seeds_dir) -> bytes:
    path = next(seeds_dir.glob("000_*.txt"))
    return path.read_bytes()


@pytest.fixture(autouse=True)
def _no_queue(monkeypatch, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)


def test_the_ticket_on_the_first_lines_of_a_real_write_up_is_found_and_a_quoted_bug_is_not(seed_text):
    assert keys_in(seed_text[:4096].decode("utf-8")) == ["ZSTACK-48375"]


def test_standards_and_advisories_are_not_tickets():
    assert keys_in("UTF-8 output, see CVE-2021-1234 and RFC-7231") == []


def test_a_team_pattern_replaces_the_jira_default():
    assert keys_in("INC0012345 / OPS-123 slow host", pattern=r"INC\d{7}") == ["INC0012345"]
    assert keys_in("ticket #4711: slow host", pattern=r"#(\d+)") == ["4711"]


def test_an_upload_gets_the_ticket_of_its_paste(teams, seed_text):
    snap = uploads.create_snapshot(owner=teams["alice"], data=seed_text, filename="ticket.md")
    assert [t.key for t in snap.tickets.all()] == ["ZSTACK-48375"]


def test_the_team_pattern_is_used_for_its_uploads(teams):
    Team.objects.filter(slug="db").update(ticket_pattern=r"INC\d{7}")
    snap = uploads.create_snapshot(owner=teams["alice"], data=b"INC0012345 slow host OPS-123\n$ lscpu\n")
    assert [t.key for t in snap.tickets.all()] == ["INC0012345"]


def test_the_ticket_follows_the_snapshot_into_the_session_and_the_case(teams, seed_text, founding_cases):
    alice = teams["alice"]
    snap = uploads.create_snapshot(owner=alice, data=seed_text, filename="ticket.md")
    session = lifecycle.create_session(owner=alice, title="MariaDB slow after v2v")
    snapshots.attach_snapshot(session=session, user=alice, snapshot=snap)
    assert [t.key for t in session.tickets.all()] == ["ZSTACK-48375"]
    lifecycle.close_session(
        session=session, user=alice, outcome="resolved", root_cause="unpinned guest", lessons="pin after v2v"
    )
    case = promotion.promote(session=session, user=alice)
    assert [r.key for r in case.references.all()] == ["ZSTACK-48375"]
