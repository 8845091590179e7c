"""Who may see what. Views, API views and services of every app ask these
helpers instead of reading memberships themselves, so the policy lives here."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db.models import Q, QuerySet
from django.http import HttpRequest

from .models import Membership, Team

SUPPORT_ROLES = (Membership.Role.SUPPORT, Membership.Role.ADMIN)


class SignedInRequest(HttpRequest):
    """The request of a page: LoginRequiredMiddleware lets only signed-in users
    through, so its ``user`` is a ``User`` (an annotation for type checkers;
    Django passes an ``HttpRequest``)."""

    user: User


def is_support(user) -> bool:
    """Support staff work across teams: superusers, and anyone holding the
    ``support`` or ``admin`` role in at least one team."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    if user.is_superuser:
        return True
    return Membership.objects.filter(user=user, role__in=SUPPORT_ROLES).exists()


@dataclass(frozen=True)
class Reach:
    """What a reader may read, asked once: nothing (anonymous or inactive),
    everything (support staff, :func:`is_support`), or what they own and what
    their teams hold (``team_ids``, the teams :func:`visible_teams` gives them).
    A page that filters several kinds of rows (the desk's global search) asks
    :func:`reach` once and hands it to ``visible_snapshots`` / ``visible_sessions``."""

    user_id: int | None
    everything: bool = False
    team_ids: tuple[int, ...] = ()

    @property
    def nothing(self) -> bool:
        return self.user_id is None


def reach(user) -> Reach:
    """The user's :class:`Reach` in one query (their memberships)."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return Reach(None)
    if user.is_superuser:
        return Reach(user.pk, everything=True)
    rows = list(Membership.objects.filter(user_id=user.pk).values_list("team_id", "role"))
    return Reach(
        user.pk,
        everything=any(role in SUPPORT_ROLES for _, role in rows),
        team_ids=tuple(sorted({team_id for team_id, _ in rows})),
    )


def support_staff() -> QuerySet[User]:
    """Everyone :func:`is_support` says yes to (active superusers and holders of
    a support role), e.g. the reviewers a case waits for."""
    return (
        User.objects.filter(is_active=True)
        .filter(Q(is_superuser=True) | Q(memberships__role__in=SUPPORT_ROLES))
        .distinct()
    )


def visible_teams(user) -> QuerySet[Team]:
    """Teams whose data the user may read: all of them for support staff,
    otherwise the user's own teams; none for anonymous or inactive users."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return Team.objects.none()
    if is_support(user):
        return Team.objects.all()
    return Team.objects.filter(memberships__user=user).distinct()


def role_in(user, team: Team) -> str | None:
    """The user's role in ``team`` or None when not a member."""
    if not getattr(user, "is_authenticated", False):
        return None
    return Membership.objects.filter(user=user, team=team).values_list("role", flat=True).first()


def can_view_team(user, team: Team | None) -> bool:
    """Objects without a team are visible to every signed-in user (the founding
    cases, for instance); otherwise the team must be visible."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    if team is None:
        return True
    return visible_teams(user).filter(pk=team.pk).exists()


def home_team(user) -> Team | None:
    """The team a user's new snapshots and sessions belong to: their first membership."""
    membership = Membership.objects.filter(user=user).select_related("team").order_by("pk").first()
    return membership.team if membership else None


def can_manage_integrations(user, team: Team | None) -> bool:
    """Webhooks of a team send its data elsewhere: they are managed by that
    team's administrators (role ``admin`` in it) and by site administrators
    (superusers); support staff of other teams and engineers read nothing of
    them."""
    if team is None or not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    return bool(user.is_superuser) or role_in(user, team) == Membership.Role.ADMIN


def integration_teams(user) -> QuerySet[Team]:
    """The teams whose webhooks the user manages (:func:`can_manage_integrations`)."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return Team.objects.none()
    if user.is_superuser:
        return Team.objects.all()
    return Team.objects.filter(memberships__user=user, memberships__role=Membership.Role.ADMIN).distinct()
