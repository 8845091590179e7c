"""Who may read and change a troubleshooting session, built on
``accounts.access`` (who is support, which teams a user sees)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet

from accounts.access import Reach, can_view_team, is_support, reach
from accounts.models import Membership
from troubleshoot.models import Session


def visible_sessions(user, *, scope: Reach | None = None) -> QuerySet[Session]:
    """Sessions a user may read: their own, their teams' and, for support
    staff, every session (``accounts.access`` decides who is support).
    ``scope``: the user's ``accounts.access.reach`` when the caller already asked it."""
    scope = scope or reach(user)
    if scope.nothing:
        return Session.objects.none()
    if scope.everything:
        return Session.objects.all()
    return Session.objects.filter(Q(owner_id=scope.user_id) | Q(team_id__in=scope.team_ids))


def can_view(user, session: Session) -> bool:
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    if session.owner_id == user.pk or is_support(user):
        return True
    return session.team_id is not None and can_view_team(user, session.team)


def can_edit(user, session: Session) -> bool:
    """The owner, any member of the session's team, and support staff."""
    if not can_view(user, session):
        return False
    if session.owner_id == user.pk or is_support(user):
        return True
    return (
        session.team_id is not None and Membership.objects.filter(user=user, team_id=session.team_id).exists()
    )


def require_edit(user, session: Session) -> None:
    if not can_edit(user, session):
        raise PermissionDenied("you may not change this session")
