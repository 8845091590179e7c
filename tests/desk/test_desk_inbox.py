"""The inbox (/inbox/): a review asked of reviewers, a case returned to its
author with the reviewer's comment, a session given to someone, a comment that
names someone who may read the session, an analysis of one's upload with a
critical finding; read/unread and the count in the navigation."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from desk.models import InboxItem
from kb import services
from kb.models import Case, CaseRevision
from triage import analysis, uploads
from troubleshoot import lifecycle
from troubleshoot import people as session_people

OCEANBASE = Path(__file__).resolve().parents[1] / "fixtures" / "seeds" / "oceanbase-bmsql-tuning" / "before"


@pytest.fixture
def draft(people):
    for language in ("en", "zh"):
        case = Case(
            slug="session-9-slow-index",
            language=language,
            title="Slow CREATE INDEX on guest db-7" if language == "en" else "访客 db-7 上 CREATE INDEX 慢",
            symptom="CREATE INDEX takes 120 s",
            cause="vCPUs float across host nodes",
            state=Case.State.DRAFT,
            author=people["alice"],
        )
        services.save_case(case, steps=[], metrics=[])
        services.record_revision(case=case, user=people["alice"], action=CaseRevision.Action.CREATED)
    return "session-9-slow-index"


def kinds(user) -> list[str]:
    return list(InboxItem.objects.filter(user=user).values_list("kind", flat=True))


def test_a_review_request_reaches_the_reviewers_and_their_queue(client, people, draft):
    services.submit_for_review(slug=draft, user=people["alice"])
    assert kinds(people["sam"]) == ["review_requested"]
    assert kinds(people["alice"]) == [] and kinds(people["bob"]) == []
    client.force_login(people["sam"])
    page = client.get(reverse("desk:inbox")).content.decode()
    assert f'data-review="{draft}"' in page and 'data-kind="review_requested"' in page


def test_a_returned_case_reaches_its_author_with_the_comment(client, people, draft):
    services.submit_for_review(slug=draft, user=people["alice"])
    services.review_case(slug=draft, user=people["sam"], approve=False, comment="Add the host's numactl -H.")
    item = InboxItem.objects.get(user=people["alice"])
    assert item.kind == "case_returned" and item.detail == "Add the host's numactl -H."
    client.force_login(people["alice"])
    page = client.get(reverse("desk:inbox")).content.decode()
    assert "Add the host&#x27;s numactl -H." in page


def test_an_assigned_session_reaches_the_assignee(people):
    session = lifecycle.create_session(owner=people["alice"], title="Slow MariaDB on db-7")
    session_people.assign_session(session=session, user=people["alice"], assignee=people["bob"])
    assert kinds(people["bob"]) == ["session_assigned"]
    session_people.assign_session(session=session, user=people["alice"], assignee=people["alice"])
    assert kinds(people["alice"]) == []  # nobody is told of what they did themselves


def test_a_mention_reaches_only_someone_who_may_read_the_session(people):
    session = lifecycle.create_session(owner=people["alice"], title="Slow MariaDB on db-7")
    session_people.add_comment(session=session, user=people["alice"], text="@bob @carol @sam please look")
    assert kinds(people["bob"]) == ["mention"] and kinds(people["sam"]) == ["mention"]
    assert kinds(people["carol"]) == []  # another team's engineer cannot read the session


def test_an_analysis_with_a_critical_finding_reaches_the_uploader(
    people, settings, tmp_path, monkeypatch, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    data = (OCEANBASE / "obs-197.txt").read_bytes()
    snap = uploads.create_snapshot(owner=people["alice"], data=data, filename="obs-197.txt")
    with django_capture_on_commit_callbacks() as callbacks:
        analysis.analyze_snapshot_now(snapshot_id=snap.pk)
        # not written by the analysis's write transaction: the snapshot is
        # "done" for everyone without waiting for the inbox
        assert not InboxItem.objects.exists()
    for callback in callbacks:
        callback()
    item = InboxItem.objects.get(user=people["alice"])
    assert item.kind == "critical_finding" and "netem" in item.detail.lower()


def test_a_failing_inbox_never_fails_the_analysis(
    people, settings, tmp_path, monkeypatch, caplog, django_capture_on_commit_callbacks
):
    """The item is written after the analysis commits; an error there is
    logged, the snapshot stays done."""
    from desk import inbox

    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)

    def broken(**_kwargs):
        raise RuntimeError("inbox down")

    monkeypatch.setattr(inbox, "do_notify", broken)
    data = (OCEANBASE / "obs-197.txt").read_bytes()
    snap = uploads.create_snapshot(owner=people["alice"], data=data, filename="obs-197.txt")
    with django_capture_on_commit_callbacks(execute=True):  # the analysis's commit, as a worker makes it
        analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    snap.refresh_from_db()
    assert snap.status == "done"
    assert "inbox down" in caplog.text


def test_opening_an_item_marks_it_read_and_the_navigation_counts_the_unread(client, people, draft):
    services.submit_for_review(slug=draft, user=people["alice"])
    client.force_login(people["sam"])
    assert 'data-unread="1"' in client.get(reverse("desk:inbox")).content.decode()
    item = InboxItem.objects.get(user=people["sam"])
    response = client.get(reverse("desk:inbox_open", args=[item.pk]))
    assert response.status_code == 302 and response["Location"] == item.url
    item.refresh_from_db()
    assert item.read_at is not None
    assert "data-unread" not in client.get(reverse("desk:inbox")).content.decode()


def test_someone_elses_item_is_404(client, people, draft):
    services.submit_for_review(slug=draft, user=people["alice"])
    item = InboxItem.objects.get(user=people["sam"])
    client.force_login(people["bob"])
    assert client.get(reverse("desk:inbox_open", args=[item.pk])).status_code == 404


def test_mark_all_read_needs_a_post_with_csrf(people, draft):
    from django.test import Client

    services.submit_for_review(slug=draft, user=people["alice"])
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(people["sam"])
    assert strict.post(reverse("desk:inbox_read_all")).status_code == 403
    assert InboxItem.objects.filter(read_at__isnull=True).count() == 1


def _member(owner, label: str, *, finished: int, cluster: str = "c1"):
    from datetime import timedelta

    from django.utils import timezone

    from triage.models import Snapshot

    return Snapshot.objects.create(
        owner=owner,
        label=label,
        cluster=cluster,
        sha256=label.ljust(64, "0"),
        size=1,
        status="done",
        engine_version="v1",
        finished_at=timezone.now() + timedelta(seconds=finished),
    )


def _finding(snapshot, rule: str, severity: str, impact: float = 1.0):
    from triage.models import Finding

    return Finding.objects.create(
        snapshot=snapshot,
        rule=rule,
        severity=severity,
        title=f"{rule} on {snapshot.label}",
        impact=impact,
        engine_version="v1",
    )


def _current_critical(snapshot) -> list[str]:
    return list(
        snapshot.current_findings()
        .filter(severity="critical")
        .order_by("-impact")
        .values_list("title", flat=True)[:3]
    )


def test_the_critical_titles_are_the_current_findings_ones_with_or_without_fleet_rows(
    people, django_assert_num_queries
):
    """The inbox asks one plain query whether a snapshot holds a critical or a
    fleet row of its own before it builds ``current_findings`` (whose words,
    for a fleet finding, are the cluster's latest analysis's)."""
    from desk.inbox import _critical_titles, _may_hold_critical, _notify_critical_findings

    def titles_of(snapshot):
        return _critical_titles(snapshot) if _may_hold_critical(snapshot.pk) else []

    alice = people["alice"]
    lone = _member(alice, "db-1", finished=0, cluster="")
    _finding(lone, "memory.swap", "critical", impact=2)
    _finding(lone, "numa.balancing", "critical", impact=5)
    _finding(lone, "disk.sched", "warning", impact=9)
    assert titles_of(lone) == ["numa.balancing on db-1", "memory.swap on db-1"] == _current_critical(lone)

    # a member whose fleet row is a warning while the cluster's latest analysis
    # (the source) says critical: the source's words are the current ones
    member = _member(alice, "sdw01", finished=0)
    source = _member(alice, "sdw02", finished=10)
    _finding(member, "fleet.spread", "warning")
    _finding(member, "kvm.cpu", "info")
    _finding(source, "fleet.spread", "critical")
    assert titles_of(member) == ["fleet.spread on sdw02"] == _current_critical(member)
    # a fleet finding the latest analysis does not hold is the member's own
    _finding(member, "fleet.drift", "critical", impact=7)
    _finding(source, "fleet.other", "critical", impact=8)  # not the member's: not current for it
    assert titles_of(member) == ["fleet.drift on sdw01", "fleet.spread on sdw02"] == _current_critical(member)

    quiet = _member(alice, "sdw03", finished=-10)
    _finding(quiet, "kvm.cpu", "warning")
    assert titles_of(quiet) == [] == _current_critical(quiet)
    with django_assert_num_queries(1):  # nothing critical: the snapshot itself is not read
        _notify_critical_findings(quiet.pk)
    assert not InboxItem.objects.exists()
