"""Who may see what. Views, API views and services of every app ask these
helpers instead of reading memberships themselves, so the policy lives here."""

from __future__ import annotations

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
    """Webhooks of a team (they send its data elsewhere) are managed by
    support staff and administrators, who see every team; engineers read
    nothing of them."""
    return team is not None and is_support(user) and can_view_team(user, team)
