"""The one search box (/search/?q= and /api/v1/search/?q=): a host by name, a
ticket by key, a snapshot by id, a rule by id and a case by ticket text, each
in its group, in English and Chinese, and nothing of another team."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from accounts.models import Membership, Team
from kb import services
from triage import uploads
from triage.models import Snapshot
from triage.tickets import add_ticket


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def world(db, monkeypatch):
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    services.load_all(use_real_engine=False)
    alpha, beta = (
        Team.objects.create(name="Alpha", slug="alpha"),
        Team.objects.create(name="Beta", slug="beta"),
    )
    users = {}
    for name, team in (("alice", alpha), ("bob", beta)):
        users[name] = get_user_model().objects.create_user(name, password=f"pw-{name}-123")
        Membership.objects.create(user=users[name], team=team, role="engineer")
    snap = uploads.create_snapshot(
        owner=users["alice"], data=b"lscpu\n", filename="a.txt", label="db-node-07"
    )
    Snapshot.objects.filter(pk=snap.pk).update(host_key="db-node-07.example.org", status="done")
    add_ticket(user=users["alice"], key="ZSTACK-48375", snapshot=snap)
    other = uploads.create_snapshot(
        owner=users["bob"], data=b"numactl\n", filename="b.txt", label="secret-db"
    )
    Snapshot.objects.filter(pk=other.pk).update(host_key="secret-db-01", status="done")
    add_ticket(user=users["bob"], key="BETA-1", snapshot=other)
    return {"snap": snap, "other": other, **users}


def groups(client, q: str, language: str = "en") -> dict[str, list[str]]:
    response = client.get(reverse("api-search"), {"q": q}, HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 200
    return {g["kind"]: [i["title"] for i in g["items"]] for g in response.json()["groups"]}


def test_a_host_is_found_by_part_of_its_name(client, world):
    client.force_login(world["alice"])
    assert groups(client, "db-node")["hosts"] == ["db-node-07.example.org"]


def test_a_ticket_key_finds_the_ticket_and_its_snapshot(client, world):
    client.force_login(world["alice"])
    found = groups(client, "zstack-48375")
    assert found["tickets"] == ["ZSTACK-48375"]
    assert found["snapshots"] == [f"#{world['snap'].pk} db-node-07"]


def test_a_snapshot_is_found_by_its_id(client, world):
    client.force_login(world["alice"])
    assert f"#{world['snap'].pk} db-node-07" in groups(client, f"#{world['snap'].pk}")["snapshots"]


def test_control_characters_in_the_query_are_dropped_not_an_error(client, world):
    """Schemathesis sent a NUL in ``q``: PostgreSQL refuses it in a text
    parameter, and the search answered 500."""
    client.force_login(world["alice"])
    assert groups(client, "db-\x00node\x1f")["hosts"] == ["db-node-07.example.org"]
    assert client.get(reverse("desk:search"), {"q": "\x00"}).status_code == 200


def test_a_rule_is_found_by_its_id(client, world):
    client.force_login(world["alice"])
    assert groups(client, "numa.balancing")["rules"] == ["numa.balancing_disabled"]


def test_a_case_is_found_by_ticket_text_in_both_languages(client, world):
    client.force_login(world["alice"])
    english = groups(client, "STREAM bandwidth dropped after a disk test filled the page cache")
    assert english["cases"] and "Kunpeng" in english["cases"][0]
    chinese = groups(client, "绑核", language="zh-hans")
    assert chinese["cases"]


def test_nothing_of_another_team_is_found(client, world):
    client.force_login(world["alice"])
    assert "hosts" not in groups(client, "secret-db")
    assert groups(client, "BETA-1") == {}
    assert groups(client, f"#{world['other'].pk}").get("snapshots", []) == []


def test_the_search_page_groups_the_hits_and_the_navigation_has_the_box(client, world):
    client.force_login(world["alice"])
    page = client.get(reverse("desk:search"), {"q": "ZSTACK-48375"}).content.decode()
    assert 'data-kind="tickets"' in page and 'data-kind="snapshots"' in page
    assert 'class="nav-search"' in page
    assert (
        reverse("desk:host_detail", args=["alpha", "db-node-07.example.org"])
        in client.get(reverse("desk:search"), {"q": "db-node"}).content.decode()
    )


def test_the_search_page_speaks_chinese(client, world):
    client.force_login(world["alice"])
    page = client.get(
        reverse("desk:search"), {"q": "db-node"}, HTTP_ACCEPT_LANGUAGE="zh-hans"
    ).content.decode()
    assert "主机" in page
