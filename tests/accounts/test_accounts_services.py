import hashlib

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import User

from accounts.models import ApiToken, WorkerHeartbeat
from accounts.services import (
    HEARTBEATS_KEPT,
    ensure_admin,
    last_worker_contact,
    record_heartbeat,
    request_heartbeat,
    revoke_api_token,
    rotate_api_token,
    worker_seen_within,
)

pytestmark = pytest.mark.django_db


def test_rotate_replaces_the_token_and_revoke_deletes_it():
    user = User.objects.create_user("tess", password="pw-tess-1234")
    first = rotate_api_token(user=user)
    second = rotate_api_token(user=user)
    assert first.key != second.key
    stored = ApiToken.objects.get(user=user)
    assert stored.pk == second.token.pk and stored.matches(second.key) and not stored.matches(first.key)

    assert revoke_api_token(user=user) is True
    assert not ApiToken.objects.filter(user=user).exists()
    assert revoke_api_token(user=user) is False


def test_ensure_admin_generates_a_password_once():
    created = ensure_admin()
    assert created.created and created.username == "admin"
    assert len(created.password) >= 16
    assert authenticate(username="admin", password=created.password) is not None
    assert User.objects.get(username="admin").is_superuser

    again = ensure_admin(password="something-else-entirely")
    assert not again.created and again.password is None
    # The existing password is left alone.
    assert authenticate(username="admin", password=created.password) is not None


def test_ensure_admin_uses_the_given_password_without_echoing_it():
    result = ensure_admin(username="ops", password="a-long-chosen-password")
    assert result.created and result.password is None
    assert authenticate(username="ops", password="a-long-chosen-password") is not None


def test_request_heartbeat_runs_in_process_without_broker(django_capture_on_commit_callbacks):
    # REDIS_URL is unset in the test settings, so Celery runs the task eagerly.
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        heartbeat = request_heartbeat()
    assert len(callbacks) == 1
    heartbeat.refresh_from_db()
    assert heartbeat.completed_at is not None
    assert heartbeat.worker.startswith("in-process@")
    assert last_worker_contact() == heartbeat
    assert worker_seen_within(seconds=60)


def test_request_heartbeat_does_not_enqueue_before_commit(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        heartbeat = request_heartbeat()
    heartbeat.refresh_from_db()
    assert heartbeat.completed_at is None
    assert last_worker_contact() is None
    assert not worker_seen_within(seconds=60)


def test_periodic_heartbeat_creates_a_row_and_old_rows_are_pruned():
    for _ in range(HEARTBEATS_KEPT + 5):
        record_heartbeat(heartbeat_id=None, worker="celery@test")
    assert WorkerHeartbeat.objects.count() == HEARTBEATS_KEPT
    assert last_worker_contact().worker == "celery@test"


def test_token_is_stored_hashed_never_in_clear():
    user = User.objects.create_user("hana", password="pw-hana-1234")
    new = rotate_api_token(user=user)
    assert len(new.key) == 40
    row = ApiToken.objects.filter(user=user).values().get()
    assert new.key not in {str(v) for v in row.values()}
    assert row["key_hash"] == hashlib.sha256(new.key.encode()).hexdigest()
    assert row["prefix"] == new.key[:8]


def test_migration_hashes_the_clear_tokens_of_earlier_versions():
    """accounts/0002 turns rows of DRF's old token table into hashes and
    deletes the clear keys."""
    import importlib
    import types

    from django.apps import apps
    from django.db import connection

    migration = importlib.import_module("accounts.migrations.0002_api_token_hashed")
    user = User.objects.create_user("olga", password="pw-olga-1234")
    key = "0123456789abcdef0123456789abcdef01234567"
    with connection.cursor() as cursor:
        cursor.execute(
            'CREATE TABLE "authtoken_token" '
            '("key" varchar(40) PRIMARY KEY, "created" timestamp, "user_id" integer)'
        )
        cursor.execute(
            'INSERT INTO "authtoken_token" ("key", "created", "user_id") VALUES (%s, %s, %s)',
            [key, "2026-01-02 03:04:05", user.pk],
        )
    try:
        # The function reads only the editor's connection (SQLite's real
        # schema editor cannot open inside the test's transaction).
        migration.hash_existing_tokens(apps, types.SimpleNamespace(connection=connection))
        token = ApiToken.objects.get(user=user)
        assert token.matches(key) and token.prefix == key[:8] and token.created.year == 2026
        with connection.cursor() as cursor:
            cursor.execute('SELECT COUNT(*) FROM "authtoken_token"')
            assert cursor.fetchone()[0] == 0
    finally:
        with connection.cursor() as cursor:
            cursor.execute('DROP TABLE "authtoken_token"')
