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
