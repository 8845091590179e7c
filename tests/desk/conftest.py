"""People of the desk tests: alice and bob in team "db", carol in "net", sam
support staff."""

from __future__ import annotations

import pytest

from accounts.models import Membership, Team


@pytest.fixture
def people(db, django_user_model, settings):
    teams = {slug: Team.objects.create(name=slug.upper(), slug=slug) for slug in ("db", "net", "support")}
    users = {}
    for name, team, role in (
        ("alice", "db", "engineer"),
        ("bob", "db", "engineer"),
        ("carol", "net", "engineer"),
        ("sam", "support", "support"),
    ):
        users[name] = django_user_model.objects.create_user(name, password=f"{name}-password-1")
        Membership.objects.create(user=users[name], team=teams[team], role=role)
    return users
