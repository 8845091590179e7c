"""The team webhook pages and the notification form, through the web client,
with deliveries going to a real local receiver."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from accounts.models import Membership
from integrations.models import Delivery, NotificationPreference, Webhook
from tests.api.world import build_world
from tests.integrations.receiver import PRIVATE_BODY

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def world(django_user_model, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    world = build_world(django_user_model, analyse=False)
    # Team A's administrator manages team A's webhooks.
    admin_a = django_user_model.objects.create_user("admin_a", password="admin_a-pass-123")
    Membership.objects.create(user=admin_a, team=world.teams["team-a"], role="admin")
    world.users["admin_a"] = admin_a
    return world


def login(world, role: str) -> Client:
    client = Client()
    client.force_login(world.users[role])
    return client


def test_the_team_admin_adds_tests_and_deletes_a_webhook(world, receiver):
    support = login(world, "admin_a")
    page = support.get("/integrations/")
    assert b"/integrations/teams/team-a/webhooks/" in page.content

    response = support.post(
        "/integrations/teams/team-a/webhooks/",
        {"url": receiver.url, "events": ["analysis.done", "session.closed"], "secret": "shared-secret"},
    )
    hook = Webhook.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/integrations/teams/team-a/webhooks/{hook.pk}/"
    assert (hook.team.slug, hook.events, hook.secret) == (
        "team-a",
        ["analysis.done", "session.closed"],
        "shared-secret",
    )

    receiver.statuses = [500]
    response = support.post(f"/integrations/teams/team-a/webhooks/{hook.pk}/test/")
    assert response.status_code == 302
    log = support.get(response["Location"]).content.decode()
    assert "webhook.test" in log and "shared-secret" in log
    delivery = Delivery.objects.get()
    assert (delivery.status, delivery.status_code, delivery.attempts) == ("delivered", 200, 2)
    # the first attempt's status line, never the answer's body
    assert "<td>200</td>" in log and "HTTP 500 Internal Server Error" in log
    assert PRIVATE_BODY.decode() not in log

    listing = support.get("/integrations/teams/team-a/webhooks/").content.decode()
    assert receiver.url in listing and "Delivered" in listing.replace("delivered", "Delivered")

    assert support.post(f"/integrations/teams/team-a/webhooks/{hook.pk}/delete/").status_code == 302
    assert not Webhook.objects.exists() and not Delivery.objects.exists()


def test_bad_urls_are_refused_by_the_form(world):
    support = login(world, "admin_a")
    response = support.post(
        "/integrations/teams/team-a/webhooks/",
        {"url": "http://169.254.169.254/latest/meta-data/", "events": ["analysis.done"]},
    )
    assert response.status_code == 200
    assert "link-local" in response.content.decode()
    response = support.post(
        "/integrations/teams/team-a/webhooks/", {"url": "http://127.0.0.1/", "events": ["nope"]}
    )
    assert response.status_code == 200
    assert not Webhook.objects.exists()


def test_engineers_cannot_manage_webhooks(world, receiver):
    hook = Webhook.objects.create(
        team=world.teams["team-a"], url=receiver.url, secret="top-secret", events=[]
    )
    own, other = login(world, "engineer_a"), login(world, "engineer_b")
    for path in ("/integrations/teams/team-a/webhooks/", f"/integrations/teams/team-a/webhooks/{hook.pk}/"):
        assert own.get(path).status_code == 403
        assert other.get(path).status_code == 404
    assert own.post(f"/integrations/teams/team-a/webhooks/{hook.pk}/test/").status_code == 403
    assert own.post(f"/integrations/teams/team-a/webhooks/{hook.pk}/delete/").status_code == 403
    assert other.post(f"/integrations/teams/team-a/webhooks/{hook.pk}/delete/").status_code == 404
    assert receiver.received == [] and Webhook.objects.filter(pk=hook.pk).exists()
    # A webhook of team A is not reachable through team B's URL either.
    admin = login(world, "admin")
    assert admin.get(f"/integrations/teams/team-b/webhooks/{hook.pk}/").status_code == 404
    assert b"top-secret" not in own.get("/integrations/").content


def test_support_staff_of_another_team_cannot_manage_a_teams_webhooks(world, receiver):
    hook = Webhook.objects.create(
        team=world.teams["team-a"], url=receiver.url, secret="top-secret", events=[]
    )
    support = login(world, "support")
    for path in ("/integrations/teams/team-a/webhooks/", f"/integrations/teams/team-a/webhooks/{hook.pk}/"):
        assert support.get(path).status_code == 403
    assert support.post("/integrations/teams/team-a/webhooks/", {"url": receiver.url}).status_code == 403
    assert support.post(f"/integrations/teams/team-a/webhooks/{hook.pk}/delete/").status_code == 403
    assert b"/integrations/teams/team-a/webhooks/" not in support.get("/integrations/").content
    # the team's administrator and the site administrator do
    assert login(world, "admin_a").get(f"/integrations/teams/team-a/webhooks/{hook.pk}/").status_code == 200
    assert login(world, "admin").get(f"/integrations/teams/team-a/webhooks/{hook.pk}/").status_code == 200
    # a team's administrator manages only that team
    assert login(world, "admin_a").get("/integrations/teams/team-b/webhooks/").status_code == 403


def test_notification_opt_in(world):
    client = login(world, "engineer_a")
    response = client.post(
        "/integrations/", {"email": "a@example.com", "events": ["analysis.failed", "session.closed"]}
    )
    assert response.status_code == 302
    pref = NotificationPreference.objects.get(user=world.users["engineer_a"])
    assert pref.events == ["analysis.failed", "session.closed"]
    world.users["engineer_a"].refresh_from_db()
    assert world.users["engineer_a"].email == "a@example.com"
    page = client.get("/integrations/").content.decode()
    assert re.search(r'value="analysis.failed"[^>]*checked', page)
    assert not re.search(r'value="case.published"[^>]*checked', page)
    assert client.post("/integrations/", {"email": "not an address", "events": []}).status_code == 200
    # Opting out is ticking nothing.
    client.post("/integrations/", {"email": "a@example.com"})
    assert NotificationPreference.objects.get(user=world.users["engineer_a"]).events == []


def test_chinese_page(world):
    client = login(world, "admin_a")
    client.cookies["django_language"] = "zh-hans"
    page = client.get("/integrations/teams/team-a/webhooks/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "添加" in page
