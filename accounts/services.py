"""Writes of the accounts app. Views, tasks and commands call these functions;
arguments are keyword-only so call sites read as what they do."""

from __future__ import annotations

import secrets
import string
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from django.utils.text import slugify

from .models import ApiToken, Membership, Team, WorkerHeartbeat

# Heartbeats are evidence, not history: keep enough to see a pattern.
HEARTBEATS_KEPT = 200


def create_team(*, name: str, slug: str = "", description: str = "") -> Team:
    return Team.objects.create(name=name, slug=slug or slugify(name) or "team", description=description)


def add_member(*, team: Team, user, role: str = Membership.Role.ENGINEER) -> Membership:
    """Add ``user`` to ``team`` or change their role there."""
    if role not in Membership.Role.values:
        raise ValueError(f"unknown role {role!r}")
    membership, _ = Membership.objects.update_or_create(team=team, user=user, defaults={"role": role})
    return membership


@dataclass(frozen=True)
class NewApiToken:
    """A token just made: ``key`` exists only here, the database keeps its hash."""

    key: str
    token: ApiToken


def rotate_api_token(*, user) -> NewApiToken:
    """Create the user's API token, replacing any previous one: a user holds
    one key, so "new token" means the old key stops working."""
    key = secrets.token_hex(20)
    with transaction.atomic():
        ApiToken.objects.filter(user=user).delete()
        token = ApiToken.objects.create(user=user, key_hash=ApiToken.hash_key(key), prefix=key[:8])
    return NewApiToken(key=key, token=token)


def revoke_api_token(*, user) -> bool:
    """Delete the user's API token. Returns whether there was one."""
    deleted, _ = ApiToken.objects.filter(user=user).delete()
    return bool(deleted)


@dataclass(frozen=True)
class AdminResult:
    created: bool
    username: str
    password: str | None  # only when created with a generated password


def generate_password(length: int = 20) -> str:
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(length))


def ensure_admin(*, username: str = "admin", password: str = "", email: str = "") -> AdminResult:
    """Create the first superuser once. An existing account is left untouched,
    so running ``make run`` again never resets a password someone changed."""
    user_model = get_user_model()
    if user_model.objects.filter(username=username).exists():
        return AdminResult(created=False, username=username, password=None)
    generated = not password
    password = password or generate_password()
    user_model.objects.create_superuser(username=username, email=email, password=password)
    return AdminResult(created=True, username=username, password=password if generated else None)


def request_heartbeat() -> WorkerHeartbeat:
    """Record a heartbeat request and queue it for a worker once the row is
    committed (a worker must never look for a row it cannot see yet)."""
    from .tasks import record_heartbeat

    heartbeat = WorkerHeartbeat.objects.create()
    transaction.on_commit(lambda: record_heartbeat.delay(heartbeat.pk))
    return heartbeat


def record_heartbeat(*, heartbeat_id: int | None, worker: str) -> WorkerHeartbeat:
    """Mark a heartbeat as answered by ``worker``. Without an id (the periodic
    beat) a new, already answered row is written."""
    now = timezone.now()
    with transaction.atomic():
        if heartbeat_id is None:
            heartbeat = WorkerHeartbeat.objects.create(completed_at=now, worker=worker)
        else:
            heartbeat = WorkerHeartbeat.objects.select_for_update().get(pk=heartbeat_id)
            heartbeat.completed_at = now
            heartbeat.worker = worker
            heartbeat.save(update_fields=["completed_at", "worker"])
        stale = WorkerHeartbeat.objects.values_list("pk", flat=True)[HEARTBEATS_KEPT:]
        WorkerHeartbeat.objects.filter(pk__in=list(stale)).delete()
    return heartbeat


def last_worker_contact() -> WorkerHeartbeat | None:
    return WorkerHeartbeat.objects.filter(completed_at__isnull=False).order_by("-completed_at").first()


def worker_seen_within(*, seconds: int) -> bool:
    last = last_worker_contact()
    return bool(last and last.completed_at >= timezone.now() - timedelta(seconds=seconds))
