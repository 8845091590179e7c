"""Webhooks against a real HTTP receiver started by the test (tests/integrations/receiver.py):
the signature verifies with the webhook's secret, a 500 is retried, the
delivery log records every attempt. Tasks run in-process (no REDIS_URL), so
a retry follows at once instead of after its back-off."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import Membership, Team
from integrations import services
from integrations.models import Delivery, Event, Webhook
from kb.models import Case
from kb.services import save_case
from tests.conftest import FIXTURES
from triage import uploads
from troubleshoot import lifecycle

pytestmark = pytest.mark.django_db(transaction=True)

TRANSCRIPT = FIXTURES / "seeds" / "oceanbase-bmsql-tuning" / "before" / "obs-197.txt"


@pytest.fixture
def team_and_owner(django_user_model):
    team = Team.objects.create(name="Team A", slug="team-a")
    owner = django_user_model.objects.create_user("owner", password="owner-pass-123")
    Membership.objects.create(user=owner, team=team, role="engineer")
    return team, owner


def verify(secret: str, received) -> dict:
    """What a receiver does: recompute the HMAC of the raw body."""
    expected = "sha256=" + hmac.new(secret.encode(), received.body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(received.headers["X-Casebook-Signature"], expected)
    return json.loads(received.body)


def test_analysis_done_is_posted_signed(receiver, team_and_owner):
    team, owner = team_and_owner
    hook = services.create_webhook(
        team=team, url=receiver.url, events=[Event.ANALYSIS_DONE, Event.ANALYSIS_FAILED], user=owner
    )
    snapshot = uploads.create_snapshot(owner=owner, data=TRANSCRIPT.read_bytes(), filename=TRANSCRIPT.name)
    snapshot.refresh_from_db()
    assert snapshot.status == "done"

    assert len(receiver.received) == 1
    got = receiver.received[0]
    body = verify(hook.secret, got)
    assert got.headers["X-Casebook-Event"] == "analysis.done"
    assert got.headers["Content-Type"] == "application/json"
    assert body["event"] == "analysis.done"
    assert body["team"] == {"slug": "team-a", "name": "Team A"}
    assert body["data"]["snapshot"]["id"] == snapshot.pk
    assert body["data"]["snapshot"]["url"] == f"/snapshots/{snapshot.pk}/"
    assert body["data"]["snapshot"]["api_url"] == f"/api/v1/snapshots/{snapshot.pk}/"
    # The counts are those of the report.
    findings = list(snapshot.current_findings())
    assert sum(body["data"]["findings"].values()) == len(findings)
    assert body["data"]["rules"] == sorted({f.rule for f in findings})
    assert "net.netem_delay" in body["data"]["rules"]

    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.status_code, delivery.attempts) == ("delivered", 200, 1)
    assert got.headers["X-Casebook-Delivery"] == str(delivery.pk)
    assert [a["status_code"] for a in delivery.attempt_log] == [200]


def test_a_forged_body_does_not_verify(receiver, team_and_owner):
    team, owner = team_and_owner
    hook = services.create_webhook(team=team, url=receiver.url, events=[Event.SESSION_CLOSED])
    services.send_test(webhook=hook, user=owner)
    got = receiver.received[0]
    tampered = type(got)(got.path, got.headers, got.body.replace(b"Test delivery", b"Evil delivery"))
    with pytest.raises(AssertionError):
        verify(hook.secret, tampered)
    verify(hook.secret, got)


def test_a_500_is_retried_and_every_attempt_logged(receiver, team_and_owner):
    team, owner = team_and_owner
    receiver.statuses = [500, 503]
    hook = services.create_webhook(team=team, url=receiver.url, events=[Event.SESSION_CLOSED])
    services.send_test(webhook=hook, user=owner)

    assert len(receiver.received) == 3
    # The same signed body each time, so receivers can deduplicate by "id".
    bodies = {r.body for r in receiver.received}
    assert len(bodies) == 1
    assert verify(hook.secret, receiver.received[-1])["event"] == "webhook.test"
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.status_code, delivery.attempts, delivery.error) == (
        "delivered",
        200,
        3,
        "",
    )
    assert [a["status_code"] for a in delivery.attempt_log] == [500, 503, 200]
    assert delivery.attempt_log[0]["error"] == "HTTP 500 Internal Server Error"


def test_retries_stop_and_the_delivery_fails(receiver, team_and_owner, settings):
    team, _owner = team_and_owner
    settings.CASEBOOK_WEBHOOK_RETRIES = 2
    receiver.statuses = [500] * 10
    hook = services.create_webhook(team=team, url=receiver.url, events=[Event.SESSION_CLOSED])
    services.send_test(webhook=hook)
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.status_code, delivery.attempts) == ("failed", 500, 3)
    assert len(receiver.received) == 3


def test_a_4xx_is_not_retried(receiver, team_and_owner):
    team, _owner = team_and_owner
    receiver.statuses = [404]
    hook = services.create_webhook(team=team, url=receiver.url, events=[Event.SESSION_CLOSED])
    services.send_test(webhook=hook)
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.status_code, delivery.attempts) == ("failed", 404, 1)


def test_a_receiver_that_is_down_is_retried_then_logged(team_and_owner, settings, receiver):
    team, _owner = team_and_owner
    settings.CASEBOOK_WEBHOOK_RETRIES = 1
    url = receiver.url
    receiver.stop()  # nothing listens on the port any more
    hook = Webhook.objects.create(team=team, url=url, secret="s", events=[Event.SESSION_CLOSED])
    services.send_test(webhook=hook)
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.status_code, delivery.attempts) == ("failed", None, 2)
    assert "ConnectionRefusedError" in delivery.error
    receiver.start()  # the fixture stops it again


def test_session_closed_and_case_published(receiver, team_and_owner):
    team, owner = team_and_owner
    hook = services.create_webhook(
        team=team, url=receiver.url, events=[Event.SESSION_CLOSED, Event.CASE_PUBLISHED]
    )
    other = Team.objects.create(name="Team B", slug="team-b")
    services.create_webhook(team=other, url=receiver.url, events=list(Event.values))

    session = lifecycle.create_session(owner=owner, title="BMSQL below expectation")
    lifecycle.close_session(session=session, user=owner, outcome="resolved", root_cause="netem", lessons="")
    # Closing again is no new event.
    lifecycle.close_session(session=session, user=owner, outcome="resolved", root_cause="netem", lessons="")
    case = Case.objects.create(slug="bmsql-netem", title="BMSQL slow: netem", symptom="slow", author=owner)
    case.state = Case.State.PUBLISHED
    save_case(case)
    save_case(case)  # saving a published case again is no new event

    events = [verify(hook.secret, r) for r in receiver.received]
    assert [e["event"] for e in events] == ["session.closed", "case.published"]
    assert events[0]["data"]["session"]["outcome"] == "resolved"
    assert events[0]["data"]["session"]["url"] == f"/sessions/{session.pk}/"
    assert events[1]["data"]["case"]["slug"] == "bmsql-netem"
    assert events[1]["data"]["case"]["api_url"] == "/api/v1/cases/bmsql-netem/"
    assert all(e["team"]["slug"] == "team-a" for e in events)  # team B's hook got nothing
    assert Delivery.objects.filter(webhook__team=other).count() == 0


def test_unsubscribed_and_inactive_hooks_get_nothing(receiver, team_and_owner):
    team, owner = team_and_owner
    services.create_webhook(team=team, url=receiver.url, events=[Event.CASE_PUBLISHED])
    inactive = services.create_webhook(team=team, url=receiver.url, events=[Event.SESSION_CLOSED])
    Webhook.objects.filter(pk=inactive.pk).update(active=False)
    session = lifecycle.create_session(owner=owner, title="t")
    lifecycle.close_session(session=session, user=owner, outcome="resolved", root_cause="", lessons="")
    assert receiver.received == []


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1]/hook",
        "http://0.0.0.0:8080/",
        "http://100.100.100.200/latest/meta-data/",
        "ftp://example.com/x",
        "http://user:pw@127.0.0.1/",
        "http://no-such-host.invalid/",
    ],
)
def test_ssrf_targets_are_refused(url, team_and_owner):
    team, _owner = team_and_owner
    with pytest.raises(services.InvalidWebhookURL):
        services.create_webhook(team=team, url=url, events=[Event.ANALYSIS_DONE])


def test_a_blocked_address_is_refused_at_delivery_too(team_and_owner, settings):
    """A URL that became blocked after it was saved (DNS changed, a setting
    tightened) is not posted to, and not retried."""
    team, _owner = team_and_owner
    hook = Webhook.objects.create(team=team, url="http://169.254.169.254/x", secret="s", events=[])
    services.send_test(webhook=hook)
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.attempts) == ("failed", 1)
    assert "link-local" in delivery.error


def test_the_allow_list_lets_a_link_local_receiver_in(team_and_owner, settings):
    team, _owner = team_and_owner
    settings.CASEBOOK_WEBHOOK_ALLOW = ["169.254.10.0/24"]
    hook = services.create_webhook(team=team, url="http://169.254.10.5/hook", events=[Event.ANALYSIS_DONE])
    assert hook.pk
    with pytest.raises(services.InvalidWebhookURL):
        services.create_webhook(team=team, url="http://169.254.169.254/", events=[Event.ANALYSIS_DONE])


def test_the_delivery_log_keeps_ended_deliveries_for_the_retention_period(team_and_owner, settings):
    team, _owner = team_and_owner
    hook = Webhook.objects.create(team=team, url="http://127.0.0.1:9/x", secret="s", events=[])
    now = timezone.now()
    rows = {}
    for name, status, age_days in (
        ("old delivered", Delivery.Status.DELIVERED, 31),
        ("old failed", Delivery.Status.FAILED, 45),
        ("old retrying", Delivery.Status.RETRYING, 90),  # still in flight: kept
        ("old pending", Delivery.Status.PENDING, 90),
        ("recent delivered", Delivery.Status.DELIVERED, 29),
    ):
        row = Delivery.objects.create(webhook=hook, event="analysis.done", status=status)
        Delivery.objects.filter(pk=row.pk).update(created_at=now - timedelta(days=age_days))
        rows[name] = row.pk
    settings.CASEBOOK_DELIVERY_RETENTION_DAYS = 30
    assert services.prune_deliveries(now=now) == 2
    left = set(Delivery.objects.values_list("pk", flat=True))
    assert left == {rows["old retrying"], rows["old pending"], rows["recent delivered"]}
    # 0 keeps the log forever
    assert services.prune_deliveries(older_than_days=0, now=now + timedelta(days=365)) == 0
    # beat runs it daily
    assert (
        settings.CELERY_BEAT_SCHEDULE["prune-webhook-deliveries"]["task"]
        == "integrations.tasks.prune_deliveries"
    )


def test_analysis_done_reads_no_json_column_of_the_snapshot(receiver, team_and_owner):
    """Sent after every analysis: the payload needs the snapshot's names, status
    and findings, not its facts (kilobytes of JSON per row)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    team, owner = team_and_owner
    services.create_webhook(team=team, url=receiver.url, events=[Event.ANALYSIS_DONE], user=owner)
    snapshot = uploads.create_snapshot(owner=owner, data=TRANSCRIPT.read_bytes(), filename=TRANSCRIPT.name)
    with CaptureQueriesContext(connection) as queries:
        services.analysis_finished(snapshot_id=snapshot.pk)  # autocommit: sent at once
    read = [
        q["sql"] for q in queries.captured_queries if q["sql"].startswith('SELECT "triage_snapshot"."id"')
    ]
    assert read and all('"triage_snapshot"."facts"' not in sql for sql in read)
    assert len(receiver.received) == 2
    assert json.loads(receiver.received[1].body)["data"] == json.loads(receiver.received[0].body)["data"]
