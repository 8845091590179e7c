"""A host's history (desk.hosts and its page /hosts/<team>/<host>/, its API and
the two-snapshot diff), on the OceanBase seed's real observer outputs: the
before snapshot, the after snapshot (measures applied), then a third that only
holds the observer's lscpu, from which most rules cannot be re-checked."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from accounts.models import Membership, Team
from desk import hosts
from triage import analysis, uploads
from triage.models import Snapshot

SEED = Path(__file__).resolve().parents[1] / "fixtures" / "seeds" / "oceanbase-bmsql-tuning"
BEFORE = (SEED / "before" / "obs-197.txt").read_bytes()
AFTER = (SEED / "after" / "obs-197.txt").read_bytes()
# The `$lscpu` block of the before output alone: a thin snapshot of the same host.
LSCPU_ONLY = BEFORE.split(b"$ping")[0] + b"```\n"


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def enqueued(monkeypatch):
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)


@pytest.fixture
def team(db):
    return Team.objects.create(name="Observers", slug="observers")


@pytest.fixture
def alice(team):
    user = get_user_model().objects.create_user("alice", password="pw-alice-123")
    Membership.objects.create(user=user, team=team, role="engineer")
    return user


def analysed(owner, data: bytes, label: str = "obs-197") -> Snapshot:
    snap = uploads.create_snapshot(owner=owner, data=data, filename=f"{label}.txt", label=label)
    return analysis.analyze_snapshot_now(snapshot_id=snap.pk)


@pytest.fixture
def three(alice, enqueued):
    return [analysed(alice, BEFORE), analysed(alice, AFTER), analysed(alice, BEFORE + b"\n# again\n")]


def rules_of(changes) -> set[str]:
    return {c.rule for c in changes}


def test_the_after_snapshot_clears_the_findings_it_re_checked(three):
    before, after, _again = three
    assert before.host_key == after.host_key
    rows = hosts.history(hosts.host_snapshots(before.owner, team="observers", host=before.host_key))
    cleared = rules_of(rows[1].cleared)
    assert {"net.netem_delay", "oceanbase.proxy_routing_not_default"} <= cleared
    assert all(rule in (after.checked or []) for rule in cleared)


def test_findings_that_come_back_are_listed_as_appeared(three):
    before = three[0]
    rows = hosts.history(hosts.host_snapshots(before.owner, team="observers", host=before.host_key))
    assert "net.netem_delay" in rules_of(rows[2].appeared)


def test_a_rule_the_later_snapshot_could_not_check_is_never_cleared(alice, enqueued):
    before = analysed(alice, BEFORE)
    thin = analysed(alice, LSCPU_ONLY)
    assert thin.host_key == before.host_key
    row = hosts.history(hosts.host_snapshots(alice, team="observers", host=before.host_key))[1]
    assert "net.netem_delay" in rules_of(row.not_rechecked)
    assert "net.netem_delay" not in rules_of(row.cleared)


def test_the_host_page_shows_what_appeared_and_what_cleared(client, three):
    client.force_login(three[0].owner)
    response = client.get(reverse("desk:host_detail", args=["observers", three[0].host_key]))
    assert response.status_code == 200
    page = response.content.decode()
    assert 'data-cleared="net.netem_delay"' in page
    assert 'data-appeared="net.netem_delay"' in page
    assert "chart-host-history" in page
    assert page.count('class="host-history"') == 1


def test_the_report_links_to_its_host_page(client, three):
    client.force_login(three[0].owner)
    page = client.get(three[0].get_absolute_url()).content.decode()
    assert reverse("desk:host_detail", args=["observers", three[0].host_key]) in page


def test_the_diff_lists_the_facts_that_changed(client, three):
    before, after, _again = three
    client.force_login(before.owner)
    url = reverse("desk:host_diff", args=["observers", before.host_key])
    page = client.get(url, {"a": before.pk, "b": after.pk}).content.decode()
    assert 'data-cleared="net.netem_delay"' in page
    changed = {c.path for c in hosts.facts_diff(before.facts, after.facts)}
    assert changed, "the after snapshot's facts differ"
    assert any(path.startswith("qdiscs") or "tc" in path for path in changed), sorted(changed)[:20]
    for path in sorted(changed)[:3]:
        assert f'data-fact="{path}"' in page


def test_the_diff_of_a_snapshot_of_another_host_is_404(client, three, alice, enqueued):
    other = analysed(alice, AFTER + b"\n# another observer\n", label="obs-198")
    client.force_login(alice)
    url = reverse("desk:host_diff", args=["observers", three[0].host_key])
    assert client.get(url, {"a": three[0].pk, "b": other.pk}).status_code == 404


def test_another_team_sees_no_such_host(client, three, db):
    bob = get_user_model().objects.create_user("bob", password="pw-bob-123")
    other = Team.objects.create(name="Other", slug="other")
    Membership.objects.create(user=bob, team=other, role="engineer")
    client.force_login(bob)
    assert client.get(reverse("desk:host_detail", args=["observers", three[0].host_key])).status_code == 404
    api = reverse("api-host-detail", args=["observers", three[0].host_key])
    assert client.get(api).status_code == 404


def test_the_api_gives_the_same_history(client, three):
    client.force_login(three[0].owner)
    data = client.get(reverse("api-host-detail", args=["observers", three[0].host_key])).json()
    assert [s["id"] for s in data["snapshots"]] == [s.pk for s in three]
    assert "net.netem_delay" in {c["rule"] for c in data["snapshots"][1]["cleared"]}
    assert data["team"] == "observers"
