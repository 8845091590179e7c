import io

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def run(*args, **kwargs) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, **kwargs)
    return out.getvalue()


def test_ensure_admin_prints_the_generated_password_once(monkeypatch):
    monkeypatch.delenv("CASEBOOK_ADMIN_PASSWORD", raising=False)
    first = run("ensure_admin")
    assert "Created admin account 'admin' with password: " in first
    password = first.split("with password: ", 1)[1].split()[0]
    assert authenticate(username="admin", password=password) is not None

    second = run("ensure_admin")
    assert "exists" in second
    assert password not in second


def test_ensure_admin_takes_the_password_from_the_environment(monkeypatch):
    monkeypatch.setenv("CASEBOOK_ADMIN_PASSWORD", "env-chosen-password-42")
    out = run("ensure_admin")
    assert "env-chosen-password-42" not in out
    assert authenticate(username="admin", password="env-chosen-password-42") is not None


@pytest.mark.django_db(transaction=True)
def test_heartbeat_command_round_trip_in_process():
    out = run("heartbeat", "--wait", "5")
    assert "queued" in out
    assert "answered by in-process@" in out


def test_addteam_and_adduser_make_an_engineer_and_support_staff(monkeypatch):
    from django.contrib.auth import get_user_model
    from django.core.management.base import CommandError

    from accounts.access import is_support, visible_teams
    from accounts.models import Membership, Team

    assert "Created team 'Database support' (slug database-support)" in run("addteam", "Database support")
    assert "exists" in run("addteam", "Database support")
    run("addteam", "Support desk")
    assert Team.objects.count() == 2

    with pytest.raises(CommandError, match="addteam"):
        run("adduser", "li.wei", "--team", "No such team")
    monkeypatch.delenv("CASEBOOK_USER_PASSWORD", raising=False)
    out = run("adduser", "li.wei", "--team", "database-support", "--role", "engineer")
    password = out.split("with password: ", 1)[1].split()[0]
    assert authenticate(username="li.wei", password=password) is not None
    assert "'li.wei' is engineer in team 'Database support'" in out

    monkeypatch.setenv("CASEBOOK_USER_PASSWORD", "support-chosen-pw-42")
    out = run("adduser", "sam", "--team", "Support desk", "--role", "support")
    assert "support-chosen-pw-42" not in out
    sam = authenticate(username="sam", password="support-chosen-pw-42")
    assert sam is not None and is_support(sam) and visible_teams(sam).count() == 2
    li = get_user_model().objects.get(username="li.wei")
    assert not is_support(li) and [t.name for t in visible_teams(li)] == ["Database support"]

    # Run again: a second team, a role change, the password left alone.
    out = run("adduser", "li.wei", "--team", "Support desk", "--role", "support")
    assert "password unchanged" in out and authenticate(username="li.wei", password=password) is not None
    assert Membership.objects.filter(user=li).count() == 2 and is_support(li)
    with pytest.raises(CommandError):
        run("adduser", "li.wei", "--team", "Support desk", "--role", "wizard")
