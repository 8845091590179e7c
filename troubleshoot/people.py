"""Who works on a session and what they say: its assignee, comments and the
external tickets it is linked to. Each change goes to the audit trail."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q

from triage.tickets import add_ticket
from troubleshoot import signals
from troubleshoot.access import require_edit
from troubleshoot.audit import record, touch
from troubleshoot.models import Comment, Session

MAX_COMMENT = 10000


def assignable_users(session: Session):
    """Who a session can be assigned to: its owner and the members of its team."""
    users = get_user_model().objects.filter(is_active=True)
    scope = Q(pk=session.owner_id)
    if session.team_id:
        scope |= Q(memberships__team_id=session.team_id)
    return users.filter(scope).distinct().order_by("username")


@transaction.atomic
def assign_session(*, session: Session, user, assignee) -> None:
    """Give the session to ``assignee`` (None: nobody), who must be able to
    edit it; the trail records the change."""
    require_edit(user, session)
    if assignee is not None and not assignable_users(session).filter(pk=assignee.pk).exists():
        raise PermissionDenied("the assignee cannot work on this session")
    if session.assignee_id == (assignee.pk if assignee else None):
        return
    old = session.assignee.get_username() if session.assignee is not None else ""
    record(
        session=session,
        user=user,
        action="assignee",
        target="assignee",
        old=old,
        new=assignee.get_username() if assignee else "",
    )
    session.assignee = assignee
    session.save(update_fields=["assignee", "updated_at"])
    if assignee is not None:
        signals.session_assigned.send(sender=Session, session=session, user=user, assignee=assignee)


@transaction.atomic
def add_comment(*, session: Session, user, text: str) -> Comment:
    require_edit(user, session)
    text = (text or "").strip()
    if not text:
        raise ValueError("an empty comment")
    comment = Comment.objects.create(session=session, author=user, text=text[:MAX_COMMENT])
    record(
        session=session, user=user, action="comment", target=f"comment-{comment.pk}", new=comment.text[:200]
    )
    touch(session)
    signals.comment_added.send(sender=Comment, comment=comment)
    return comment


@transaction.atomic
def add_session_ticket(*, session: Session, user, key: str, url: str = ""):
    """Link the session to an external ticket (``triage.tickets.add_ticket``)."""
    require_edit(user, session)
    ticket = add_ticket(user=user, key=key, url=url, session=session)
    record(session=session, user=user, action="ticket", target=ticket.key, new=ticket.url)
    return ticket
