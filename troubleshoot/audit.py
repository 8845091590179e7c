"""A session's audit trail: each write appends who, when, what and
old -> new in the same transaction as the change, so the trail can never miss
one (also the trail of a finding acknowledgement, ``troubleshoot.receivers``)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from troubleshoot.models import AuditEntry, Session


def as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def record(
    *,
    session: Session | None = None,
    acknowledgement=None,
    user,
    action: str,
    target: str = "",
    old: Any = None,
    new: Any = None,
) -> AuditEntry:
    """One audit trail entry, of a session or of a finding acknowledgement."""
    return AuditEntry.objects.create(
        session=session,
        acknowledgement=acknowledgement,
        user=user,
        action=action,
        target=target,
        old=as_text(old),
        new=as_text(new),
    )


def touch(session: Session) -> None:
    Session.objects.filter(pk=session.pk).update(updated_at=timezone.now())
