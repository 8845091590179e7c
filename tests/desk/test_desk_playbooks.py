"""Fleet playbooks from the rule page (/rules/<id>/fleet/playbook.yml and
inventory.ini): 20 hosts of the Kunpeng seed's cluster (the real outputs of
gp-sdw03 and gp-sdw04, the two with the finding, each uploaded as ten hosts) selected for
numa.local_node_pagecache_pressure give one playbook whose plays each target
their host's inventory group; it passes ansible-playbook --syntax-check,
ansible-lint, and --check against localhost (every group pointed at it)."""

from __future__ import annotations

import re

import pytest
import yaml
from django.contrib.auth import get_user_model
from django.db import transaction
from django.test import override_settings
from django.urls import reverse

from accounts.models import Membership, Team
from tests.conftest import FIXTURES
from tests.engine.remedies.test_remedies_playbook import _run, _tool
from triage import analysis, uploads
from triage.models import Snapshot

RULE = "numa.local_node_pagecache_pressure"


class _Loader(yaml.SafeLoader):
    """Reads Ansible's ``!unsafe`` values as plain strings."""


_Loader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))
KUNPENG = FIXTURES / "seeds" / "kunpeng-stream-zone-reclaim" / "before"


@pytest.fixture(scope="module", autouse=True)
def _fleet_of_the_module(django_db_setup, django_db_blocker, tmp_path_factory):
    """The 20 hosts uploaded and analysed once for the whole file, in a
    transaction rolled back after its last test; each test runs inside it (its
    own writes are rolled back to a savepoint), so every test starts from the
    same fleet without analysing it again (the 20 analyses were most of each
    test's time). Autouse and module-scoped: set up before any test's own
    transaction."""
    media = tmp_path_factory.mktemp("media")
    with override_settings(MEDIA_ROOT=media), pytest.MonkeyPatch.context() as patch:
        patch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
        with django_db_blocker.unblock():
            atomic = transaction.atomic()
            atomic.__enter__()
            built = _build_fleet()
        try:
            yield built
        finally:
            with django_db_blocker.unblock():
                transaction.set_rollback(True)
                atomic.__exit__(None, None, None)


def _build_fleet():
    team = Team.objects.create(name="Kunpeng", slug="kunpeng")
    user = get_user_model().objects.create_user("alice", password="pw-alice-123")
    Membership.objects.create(user=user, team=team, role="engineer")
    snaps = []
    for path in (KUNPENG / "gp-sdw03.txt", KUNPENG / "gp-sdw04.txt"):
        for copy in range(10):
            data = path.read_bytes() + f"\n# copy {copy}\n".encode()
            snap = uploads.create_snapshot(owner=user, data=data, filename=path.name, cluster="kunpeng")
            snap = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
            # ten hosts of the same build: the fleet view tells hosts apart by their key
            Snapshot.objects.filter(pk=snap.pk).update(host_key=f"{path.stem}-{copy}")
            snaps.append(snap)
    return user, snaps


@pytest.fixture
def fleet(db, _fleet_of_the_module):
    return _fleet_of_the_module


def download(client, name: str, snaps) -> str:
    response = client.get(reverse(name, args=[RULE]), {"snapshot": [s.pk for s in snaps]})
    assert response.status_code == 200, response.content[:300]
    return response.content.decode()


def test_the_playbook_has_one_group_per_selected_host(client, fleet):
    user, snaps = fleet
    client.force_login(user)
    affected = [s for s in snaps if s.current_findings().filter(rule=RULE).exists()]
    assert len(affected) == 20
    plays = yaml.load(download(client, "desk:rule_playbook", affected), Loader=_Loader)  # noqa: S506
    apply = [p for p in plays if "apply" in p["tags"]]
    assert len(apply) == 20 and len({p["hosts"] for p in apply}) == 20
    inventory = download(client, "desk:rule_inventory", affected)
    groups = re.findall(r"^\[(casebook_host_\d+)\]\n(\S+)$", inventory, re.M)
    assert {g for g, _h in groups} == {p["hosts"] for p in apply}
    assert {h for _g, h in groups} == {f"gp-sdw0{i}-{c}" for i in (3, 4) for c in range(10)}


def test_a_host_of_another_team_is_not_in_the_playbook(client, fleet):
    _user, snaps = fleet
    bob = get_user_model().objects.create_user("bob", password="pw-bob-123")
    client.force_login(bob)
    url = reverse("desk:rule_playbook", args=[RULE])
    assert client.get(url, {"snapshot": [s.pk for s in snaps]}).status_code == 404


def test_the_rule_page_offers_the_selection(client, fleet):
    user, _snaps = fleet
    client.force_login(user)
    page = client.get(reverse("triage:rule_detail", args=[RULE])).content.decode()
    assert 'id="fleet-playbook"' in page and page.count('name="snapshot"') == 20


@pytest.mark.slow
def test_the_fleet_playbook_passes_syntax_check_lint_and_check_mode(client, fleet, tmp_path):
    user, snaps = fleet
    client.force_login(user)
    playbook = tmp_path / "fleet.yml"
    playbook.write_text(download(client, "desk:rule_playbook", snaps))
    inventory = download(client, "desk:rule_inventory", snaps)
    # every group at this machine, so --check runs the 20 plays against localhost
    local = re.sub(
        r"^(\[casebook_host_\d+\]\n)(\S+)$",
        lambda m: f"{m.group(1)}{m.group(2)} ansible_host=127.0.0.1 ansible_connection=local",
        inventory,
        flags=re.M,
    )
    (tmp_path / "inventory.ini").write_text(local)
    ansible = _tool("ansible-playbook")
    syntax = _run([ansible, "-i", "inventory.ini", "--syntax-check", "fleet.yml"], tmp_path)
    assert syntax.returncode == 0, syntax.stdout + syntax.stderr
    lint = _run([_tool("ansible-lint"), "--offline", "fleet.yml"], tmp_path)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    check = _run([ansible, "-i", "inventory.ini", "--check", "--diff", "fleet.yml"], tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.count("failed=0") == 20 and "unreachable=0" in check.stdout
