"""Acknowledgements: a team says a rule's finding on a host (or on every host
of a cluster) is known and accepted, with a reason and an optional expiry;
each change goes into the audit trail.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from triage import signals
from triage.fleetview import scope_of, visible_acknowledgements
from triage.models import Acknowledgement, Snapshot

MAX_REASON = 2000


class AcknowledgementRejected(ValueError):
    """The request cannot become an acknowledgement (shown to the user)."""


def _audit(*, acknowledgement, user, action: str, new: str = "", old: str = "") -> None:
    """Into the audit trail (kept by the sessions app, which listens)."""
    signals.acknowledgement_changed.send(
        sender=Acknowledgement, acknowledgement=acknowledgement, user=user, action=action, old=old, new=new
    )


@transaction.atomic
def acknowledge(
    *, user, snapshot: Snapshot, rule: str, scope: str, reason: str, expires_at=None
) -> Acknowledgement:
    """Acknowledge ``rule``'s finding on ``snapshot``'s host (``scope="host"``)
    or on every host of its cluster (``scope="cluster"``), for the snapshot's
    team. An active acknowledgement of the same rule and target is replaced
    (withdrawn, then the new one made), each step in the audit trail."""
    reason = (reason or "").strip()
    if not reason:
        raise AcknowledgementRejected("a reason is required")
    if len(reason) > MAX_REASON:
        raise AcknowledgementRejected(f"the reason is longer than {MAX_REASON} characters")
    if expires_at is not None and expires_at <= timezone.now():
        raise AcknowledgementRejected("the expiry is in the past")
    if not snapshot.current_findings().filter(rule=rule).exists():
        raise AcknowledgementRejected("this snapshot has no such finding")
    if scope == "cluster":
        if not snapshot.cluster:
            raise AcknowledgementRejected("this snapshot belongs to no cluster")
        target = {"host": "", "cluster": snapshot.cluster}
    elif scope == "host":
        if not snapshot.host_key:
            raise AcknowledgementRejected("this snapshot has not been analysed")
        target = {"host": snapshot.host_key, "cluster": ""}
    else:
        raise AcknowledgementRejected("the scope is host or cluster")
    owner_scope = scope_of(snapshot)
    for old in Acknowledgement.objects.select_for_update().filter(
        rule=rule, revoked_at__isnull=True, **target, **owner_scope
    ):
        if old.is_active():
            revoke_acknowledgement(user=user, acknowledgement=old)
    ack = Acknowledgement.objects.create(
        rule=rule,
        reason=reason,
        expires_at=expires_at,
        created_by=user,
        snapshot=snapshot,
        **target,
        **owner_scope,
    )
    until = f" (until {expires_at:%Y-%m-%d %H:%M})" if expires_at else ""
    _audit(
        acknowledgement=ack,
        user=user,
        action="acknowledge",
        new=f"{scope} {ack.scope_label}: {reason}{until}",
    )
    return ack


@transaction.atomic
def revoke_acknowledgement(*, user, acknowledgement: Acknowledgement) -> None:
    """Withdraw an acknowledgement: the finding shows again; the row stays."""
    if acknowledgement.revoked_at is not None:
        return
    acknowledgement.revoked_at = timezone.now()
    acknowledgement.revoked_by = user
    acknowledgement.save(update_fields=["revoked_at", "revoked_by"])
    _audit(
        acknowledgement=acknowledgement, user=user, action="acknowledge.revoke", old=acknowledgement.reason
    )


def visible_acknowledgement(user, pk: int) -> Acknowledgement | None:
    """The acknowledgement ``pk`` when ``user`` may read (and so withdraw) it."""
    ack = Acknowledgement.objects.filter(pk=pk).only("rule").first()
    if ack is None:
        return None
    return visible_acknowledgements(user, ack.rule).filter(pk=pk).first()
