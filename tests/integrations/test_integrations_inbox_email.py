"""Opt-in e-mail of one's inbox items (``inbox.item``): desk announces a new
item (``desk.signals.inbox_item_created``), integrations mails it to its user
after the transaction commits, through the e-mail task. Django's mail outbox."""

from __future__ import annotations

from django.core import mail
from django.urls import reverse

from integrations import services
from integrations.models import Event, PersonalEvent
from troubleshoot import lifecycle
from troubleshoot import people as session_people


def test_a_new_inbox_item_is_mailed_to_who_opted_in(people, django_capture_on_commit_callbacks):
    services.set_notification_events(user=people["bob"], events=[PersonalEvent.INBOX_ITEM])
    services.set_notification_events(user=people["carol"], events=list(Event.values))  # not inbox.item
    session = lifecycle.create_session(owner=people["alice"], title="Slow MariaDB on db-7")
    with django_capture_on_commit_callbacks(execute=True):
        session_people.assign_session(session=session, user=people["alice"], assignee=people["bob"])
        assert mail.outbox == []  # nothing leaves before the commit
    with django_capture_on_commit_callbacks(execute=True):
        session_people.add_comment(session=session, user=people["alice"], text="@carol @bob have a look")

    assert [m.to for m in mail.outbox] == [["bob@example.com"], ["bob@example.com"]]
    assigned, mention = mail.outbox
    assert assigned.subject == "[Casebook] session assigned: Slow MariaDB on db-7"
    assert "From: alice" in assigned.body
    assert f"https://casebook.example.com/sessions/{session.pk}/" in assigned.body
    assert "https://casebook.example.com/inbox/" in assigned.body
    assert mention.subject == "[Casebook] mentioned: Slow MariaDB on db-7"
    assert "@carol @bob have a look" in mention.body


def test_no_mail_without_the_opt_in_or_after_opting_out(people, django_capture_on_commit_callbacks):
    session = lifecycle.create_session(owner=people["alice"], title="Slow MariaDB on db-7")
    with django_capture_on_commit_callbacks(execute=True):
        session_people.assign_session(session=session, user=people["alice"], assignee=people["bob"])
    services.set_notification_events(user=people["carol"], events=[PersonalEvent.INBOX_ITEM])
    # Queued while opted in, sent after opting out: the task checks again.
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        session_people.assign_session(session=session, user=people["alice"], assignee=people["carol"])
    services.set_notification_events(user=people["carol"], events=[])
    for callback in callbacks:
        callback()
    assert mail.outbox == []


def test_the_preferences_page_offers_the_inbox(client, people):
    client.force_login(people["bob"])
    page = client.get(reverse("integrations:index")).content.decode()
    assert 'value="inbox.item"' in page
    response = client.post(
        reverse("integrations:index"), {"email": "bob@example.com", "events": ["inbox.item"]}
    )
    assert response.status_code == 302
    assert people["bob"].notification_preference.events == ["inbox.item"]
