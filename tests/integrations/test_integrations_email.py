"""Opt-in e-mail notifications through Django's SMTP backend to a real SMTP
server (aiosmtpd) started by the test."""

from __future__ import annotations

import socket
from email import message_from_bytes

import pytest
from aiosmtpd.controller import Controller

from accounts.models import Membership, Team
from integrations import services
from integrations.models import Event
from tests.conftest import FIXTURES
from triage import analysis, uploads
from troubleshoot import lifecycle

pytestmark = pytest.mark.django_db(transaction=True)


class Inbox:
    def __init__(self):
        self.messages = []

    async def handle_DATA(self, server, session, envelope):
        self.messages.append((list(envelope.rcpt_tos), message_from_bytes(envelope.content)))
        return "250 OK"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def smtp(settings):
    inbox = Inbox()
    controller = Controller(inbox, hostname="127.0.0.1", port=_free_port())
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = controller.port
    settings.DEFAULT_FROM_EMAIL = "casebook@example.com"
    settings.CASEBOOK_BASE_URL = "https://casebook.example.com"
    yield inbox
    controller.stop()


@pytest.fixture
def people(django_user_model):
    team = Team.objects.create(name="Team A", slug="team-a")
    users = {}
    for name in ("alice", "bob", "carol"):
        users[name] = django_user_model.objects.create_user(name, f"{name}@example.com", "pass-123-xyz")
        Membership.objects.create(user=users[name], team=team)
    outsider = django_user_model.objects.create_user("dave", "dave@example.com", "pass-123-xyz")
    Membership.objects.create(user=outsider, team=Team.objects.create(name="Team B", slug="team-b"))
    users["dave"] = outsider
    return users


def test_only_members_who_opted_in_are_mailed(smtp, people):
    services.set_notification_events(user=people["alice"], events=[Event.SESSION_CLOSED])
    services.set_notification_events(user=people["bob"], events=[Event.CASE_PUBLISHED])
    services.set_notification_events(user=people["dave"], events=list(Event.values))  # other team
    # carol never opted in
    session = lifecycle.create_session(owner=people["carol"], title="BMSQL below expectation")
    lifecycle.close_session(
        session=session, user=people["carol"], outcome="resolved", root_cause="", lessons=""
    )

    assert [rcpt for rcpt, _msg in smtp.messages] == [["alice@example.com"]]
    message = smtp.messages[0][1]
    assert message["Subject"] == "[Casebook] Session closed: BMSQL below expectation"
    assert message["From"] == "casebook@example.com"
    body = message.get_payload(decode=True).decode()
    assert "Outcome: resolved" in body
    assert f"https://casebook.example.com/sessions/{session.pk}/" in body
    assert "https://casebook.example.com/integrations/" in body  # where to opt out


def test_a_failed_analysis_is_mailed_one_message_per_recipient(smtp, people):
    for name in ("alice", "bob"):
        services.set_notification_events(user=people[name], events=[Event.ANALYSIS_FAILED])
    snapshot = uploads.create_snapshot(
        owner=people["carol"],
        data=(FIXTURES / "seeds" / "oceanbase-bmsql-tuning" / "before" / "obs-197.txt").read_bytes(),
        filename="obs-197.txt",
        label="obs-197",
    )
    snapshot.refresh_from_db()
    assert snapshot.status == "done"
    assert smtp.messages == []  # done is not failed
    # Fail it the way a worker does when the stored upload vanished.
    analysis._fail(snapshot.pk, "the stored upload is missing from storage")
    rcpts = sorted(tuple(r) for r, _m in smtp.messages)
    assert rcpts == [("alice@example.com",), ("bob@example.com",)]
    message = smtp.messages[0][1]
    assert message["Subject"] == "[Casebook] Analysis failed: obs-197"
    assert "the stored upload is missing from storage" in message.get_payload(decode=True).decode()


def test_no_address_no_mail(smtp, people):
    people["alice"].email = ""
    people["alice"].save()
    services.set_notification_events(user=people["alice"], events=[Event.SESSION_CLOSED])
    session = lifecycle.create_session(owner=people["alice"], title="t")
    lifecycle.close_session(
        session=session, user=people["alice"], outcome="resolved", root_cause="", lessons=""
    )
    assert smtp.messages == []
