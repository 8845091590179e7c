"""Who may read, edit and review cases: the case states' part of the access
policy (``accounts.access`` holds the teams' part, which it builds on)."""

from __future__ import annotations

from django.db.models import Q

from accounts.access import home_team, is_support, visible_teams
from kb.models import Case, HostMatch


def readable_cases(user):
    """Cases the user may read: published and archived ones for every signed-in
    user; drafts and cases in review (promoted from sessions, so they may still
    name customer hosts) only for their author and for support staff, who
    review and publish them."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return Case.objects.none()
    if is_support(user):
        return Case.objects.all()
    return Case.objects.filter(Q(state__in=PUBLIC_CASE_STATES) | Q(author=user))


PUBLIC_CASE_STATES = ("published", "archived")


def can_edit_case(user, case) -> bool:
    """A draft is edited by its author and by support staff; a case in review
    or published is not edited in place (the reviewer returns it first)."""
    if case.state != Case.State.DRAFT or not getattr(user, "is_authenticated", False):
        return False
    return case.author_id == user.pk or is_support(user)


def can_create_case(user) -> bool:
    """Who writes new cases (drafts, reviewed before they are published):
    members of a team and support staff; a signed-in user without a team
    reads the published cases only."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    return is_support(user) or home_team(user) is not None


def can_review_case(user, case) -> bool:
    """Support staff review a case submitted for review, never their own: a
    second person approves or returns it."""
    if case.state != Case.State.IN_REVIEW or not is_support(user):
        return False
    return case.author_id != user.pk


def case_search_filters(user, filters: dict) -> dict:
    """``filters`` for ``kb.search.search`` narrowed to what the user may read."""
    if filters.get("state") not in (None, "", *PUBLIC_CASE_STATES) and not is_support(user):
        return {**filters, "author_id": user.pk}
    return filters


def visible_host_matches(user):
    """The hosts found by retro-scans (``HostMatch``) that the user may see,
    as they may see the snapshots behind them (``triage.selectors.visible_snapshots``):
    support staff every host; others their teams' hosts and those they uploaded."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return HostMatch.objects.none()
    if is_support(user):
        return HostMatch.objects.all()
    return HostMatch.objects.filter(Q(owner=user) | Q(team__in=visible_teams(user)))
