"""Personal webhooks for one's inbox (``inbox.item``): the webhook channel of the
inbox, opt-in per user like its e-mail. A user adds a receiver of their own on
the notifications page; each new item of their inbox is POSTed to it, signed with
its secret, once the transaction that wrote the item commits, with the same
retries, address checks and status-line-only log as a team's webhook. A real
HTTP receiver started by the test (tests/integrations/receiver.py); tasks run
in-process (no REDIS_URL)."""

from __future__ import annotations

import hashlib
import hmac
import json

import pytest
from django.urls import reverse

from accounts.models import Team
from integrations import services
from integrations.models import Delivery, Event, PersonalEvent, Webhook
from tests.integrations.receiver import PRIVATE_BODY
from troubleshoot import lifecycle
from troubleshoot import people as session_people

pytestmark = pytest.mark.django_db(transaction=True)


def _verified(secret: str, received) -> dict:
    expected = "sha256=" + hmac.new(secret.encode(), received.body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(received.headers["X-Casebook-Signature"], expected)
    return json.loads(received.body)


def test_an_inbox_item_is_posted_to_the_webhook_of_its_user_only(receiver, people):
    hook = services.create_personal_webhook(
        user=people["bob"], url=receiver.url, events=[PersonalEvent.INBOX_ITEM]
    )
    session = lifecycle.create_session(owner=people["alice"], title="Slow MariaDB on db-7")
    session_people.assign_session(session=session, user=people["alice"], assignee=people["carol"])
    assert receiver.received == []  # carol has no webhook: her item goes nowhere
    session_people.assign_session(session=session, user=people["alice"], assignee=people["bob"])

    assert len(receiver.received) == 1
    got = receiver.received[0]
    body = _verified(hook.secret, got)
    assert got.headers["X-Casebook-Event"] == "inbox.item"
    assert body["event"] == "inbox.item" and body["team"] is None
    assert body["data"]["user"] == {"username": "bob"}
    item = body["data"]["item"]
    assert item["kind"] == "session_assigned" and item["kind_label"] == "session assigned"
    assert item["title"] == "Slow MariaDB on db-7" and item["actor"] == "alice"
    assert item["url"].startswith(f"https://casebook.example.com/sessions/{session.pk}/")
    delivery = Delivery.objects.get()
    assert (delivery.webhook_id, delivery.status, delivery.status_code) == (hook.pk, "delivered", 200)


def test_no_post_without_an_active_subscribed_webhook_and_never_to_a_team(receiver, people):
    team_hook = services.create_webhook(team=Team.objects.get(), url=receiver.url, events=list(Event.values))
    mine = services.create_personal_webhook(user=people["bob"], url=receiver.url, events=["inbox.item"])
    Webhook.objects.filter(pk=mine.pk).update(active=False)
    session = lifecycle.create_session(owner=people["alice"], title="Slow MariaDB on db-7")
    session_people.add_comment(session=session, user=people["alice"], text="@bob have a look")
    assert receiver.received == [] and not Delivery.objects.exists()
    # a team's webhook cannot take a personal event, nor a personal one a team's
    with pytest.raises(ValueError):
        services.create_webhook(team=team_hook.team, url=receiver.url, events=["inbox.item"])
    with pytest.raises(ValueError):
        services.create_personal_webhook(user=people["bob"], url=receiver.url, events=["analysis.done"])


def test_personal_webhooks_keep_the_address_rules(people, settings):
    """Loopback, private and metadata addresses are refused unless listed
    (issue 29): for a personal webhook as for a team's."""
    settings.CASEBOOK_WEBHOOK_ALLOW = []
    for url in (
        "http://127.0.0.1:8080/x",
        "http://10.1.2.3/x",
        "http://169.254.169.254/latest",
        "http://[::1]/",
    ):
        with pytest.raises(services.InvalidWebhookURL):
            services.create_personal_webhook(user=people["bob"], url=url, events=["inbox.item"])


def test_the_notifications_page_adds_tests_and_deletes_ones_own_webhook(client, receiver, people):
    client.force_login(people["bob"])
    page = client.get(reverse("integrations:index")).content.decode()
    assert 'id="personal-webhooks"' in page and 'action="/integrations/me/webhooks/"' in page
    response = client.post(
        reverse("integrations:personal_webhook_add"), {"url": receiver.url, "events": ["inbox.item"]}
    )
    hook = Webhook.objects.get(user=people["bob"])
    assert response.status_code == 302
    assert response["Location"] == reverse("integrations:personal_webhook_detail", args=[hook.pk])
    assert hook.team is None and hook.events == ["inbox.item"] and len(hook.secret) == 64
    detail = client.get(response["Location"]).content.decode()
    assert hook.secret in detail

    # "Send test": a 500 answer is logged by its status line, never its body
    receiver.statuses = [500] * 10
    client.post(reverse("integrations:personal_webhook_test", args=[hook.pk]))
    detail = client.get(reverse("integrations:personal_webhook_detail", args=[hook.pk])).content.decode()
    assert "HTTP 500" in detail and PRIVATE_BODY.decode() not in detail

    # nobody else reaches it, not even through the team webhook pages
    client.force_login(people["carol"])
    assert client.get(reverse("integrations:personal_webhook_detail", args=[hook.pk])).status_code == 404
    assert client.post(reverse("integrations:personal_webhook_delete", args=[hook.pk])).status_code == 404
    client.force_login(people["bob"])
    client.post(reverse("integrations:personal_webhook_delete", args=[hook.pk]))
    assert not Webhook.objects.exists()


def test_a_refused_address_is_a_form_error(client, people, settings):
    settings.CASEBOOK_WEBHOOK_ALLOW = []
    client.force_login(people["bob"])
    response = client.post(
        reverse("integrations:personal_webhook_add"),
        {"url": "http://127.0.0.1:9/x", "events": ["inbox.item"]},
    )
    assert response.status_code == 200
    assert "CASEBOOK_WEBHOOK_ALLOW" in response.content.decode()
    assert not Webhook.objects.exists()
