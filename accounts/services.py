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

from config.enqueue import enqueue
from config.ldap import ROLES, normalise_dn

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


def ensure_user(
    *, username: str, password: str = "", email: str = "", superuser: bool = False
) -> AdminResult:
    """Create an account once, with ``password`` or a generated one (returned
    so it can be shown once). An existing account is left untouched, so
    running a command again never resets a password someone changed."""
    user_model = get_user_model()
    if user_model.objects.filter(username=username).exists():
        return AdminResult(created=False, username=username, password=None)
    generated = not password
    password = password or generate_password()
    create = user_model.objects.create_superuser if superuser else user_model.objects.create_user
    create(username=username, email=email, password=password)
    return AdminResult(created=True, username=username, password=password if generated else None)


def ensure_admin(*, username: str = "admin", password: str = "", email: str = "") -> AdminResult:
    """Create the first superuser once (``make run``, the container entrypoint)."""
    return ensure_user(username=username, password=password, email=email, superuser=True)


def find_team(name_or_slug: str) -> Team | None:
    return Team.objects.filter(name=name_or_slug).first() or Team.objects.filter(slug=name_or_slug).first()


def ensure_team(*, name: str, description: str = "") -> tuple[Team, bool]:
    """The team called ``name`` (or with that slug), created when missing."""
    team = find_team(name)
    if team is not None:
        return team, False
    slug = slugify(name) or "team"
    if Team.objects.filter(slug=slug).exists():
        raise ValueError(f"another team already has the slug {slug!r}")
    return create_team(name=name, slug=slug, description=description), True


def request_heartbeat() -> WorkerHeartbeat:
    """Record a heartbeat request and queue it for a worker once the row is
    committed (a worker must never look for a row it cannot see yet)."""
    heartbeat = WorkerHeartbeat.objects.create()
    transaction.on_commit(lambda: enqueue("accounts.tasks.record_heartbeat", heartbeat.pk))
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
    return bool(
        last and last.completed_at and last.completed_at >= timezone.now() - timedelta(seconds=seconds)
    )


def sync_directory_teams(
    *, user, group_dns, team_map: dict[str, tuple[str, str]], mirror: bool = True
) -> list[Membership]:
    """Give a directory user the teams and roles their groups map to
    (``settings.CASEBOOK_LDAP_TEAM_MAP``, see ``config.ldap``), at each sign-in.

    Several groups naming one team give the highest of their roles. With
    ``mirror`` a membership of a *mapped* team whose group the user left is
    removed; memberships of teams the map does not name (given by hand in the
    admin) are never touched. A mapped team that does not exist yet is created.
    """
    wanted: dict[str, str] = {}
    for dn in group_dns:
        mapped = team_map.get(normalise_dn(dn))
        if mapped is None:
            continue
        slug, role = mapped
        if slug and ROLES.index(role) >= ROLES.index(wanted.get(slug, ROLES[0])):
            wanted[slug] = role
    with transaction.atomic():
        memberships = []
        for slug, role in sorted(wanted.items()):
            team, _ = Team.objects.get_or_create(slug=slug, defaults={"name": slug})
            memberships.append(add_member(team=team, user=user, role=role))
        if mirror:
            gone = {slug for slug, _ in team_map.values()} - set(wanted)
            Membership.objects.filter(user=user, team__slug__in=gone).delete()
    return memberships
