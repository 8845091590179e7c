"""A session's life: opened with its problem, its fields and constraints
changed, moved through the wizard's steps, closed with its outcome and reopened."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.access import home_team
from troubleshoot import signals
from troubleshoot.access import require_edit
from troubleshoot.audit import record
from troubleshoot.models import STEP_ORDER, Session

PROBLEM_FIELDS = (
    "title",
    "symptom",
    "workload",
    "platform",
    "database",
    "metric_name",
    "metric_unit",
    "metric_baseline",
    "metric_expected",
    "metric_direction",
)
CONSTRAINT_FIELDS = (
    "guest_reboot_allowed",
    "host_reboot_allowed",
    "service_restart_allowed",
    "other_workloads",
    "change_approval",
    "maintenance_window",
)
CLOSE_FIELDS = ("outcome", "root_cause", "lessons")
# Recorded measurements: the trail calls their changes "metric" so an edit
# of a recorded value is easy to find, with the old value kept.
METRIC_FIELDS = {"metric_baseline", "metric_after"}


def _team_of(user):
    return home_team(user)


@transaction.atomic
def create_session(*, owner, title: str, **problem: Any) -> Session:
    """Open a session for ``owner`` in the owner's (first) team."""
    unknown = set(problem) - set(PROBLEM_FIELDS)
    if unknown:
        raise TypeError(f"unknown problem fields: {sorted(unknown)}")
    session = Session.objects.create(owner=owner, team=_team_of(owner), title=title.strip()[:200], **problem)
    record(session=session, user=owner, action="created", new=session.title)
    for name, value in problem.items():
        if value not in (None, ""):
            record(session=session, user=owner, action=_action_for(name), target=name, new=value)
    return session


def _action_for(name: str) -> str:
    return "metric" if name in METRIC_FIELDS else "field"


@transaction.atomic
def update_session(*, session: Session, user, changes: dict[str, Any]) -> list[str]:
    """Change session fields; each real change gets its own trail entry.
    Returns the names of the fields that changed."""
    require_edit(user, session)
    allowed = set(PROBLEM_FIELDS) | set(CONSTRAINT_FIELDS) | set(CLOSE_FIELDS) | {"metric_after"}
    unknown = set(changes) - allowed
    if unknown:
        raise TypeError(f"not editable here: {sorted(unknown)}")
    locked = Session.objects.select_for_update().get(pk=session.pk)
    changed = []
    for name, new in changes.items():
        old = getattr(locked, name)
        if old == new or (old in (None, "") and new in (None, "")):
            continue
        setattr(locked, name, new)
        changed.append(name)
        record(session=locked, user=user, action=_action_for(name), target=name, old=old, new=new)
    if changed:
        locked.save(update_fields=[*changed, "updated_at"])
        for name in changed:
            setattr(session, name, getattr(locked, name))
    return changed


@transaction.atomic
def set_step(*, session: Session, user, step: str) -> None:
    if step not in STEP_ORDER:
        raise ValueError(f"unknown step {step!r}")
    require_edit(user, session)
    if session.step == step:
        return
    record(session=session, user=user, action="step", target="step", old=session.step, new=step)
    session.step = step
    session.save(update_fields=["step", "updated_at"])


def next_step(step: str) -> str:
    i = STEP_ORDER.index(step)
    return STEP_ORDER[min(i + 1, len(STEP_ORDER) - 1)]


def _change_state(*, session: Session, user, state: str, closed_at) -> None:
    """A session's state change, audited (closing and reopening)."""
    record(session=session, user=user, action="state", target="state", old=session.state, new=state)
    session.state = state
    session.closed_at = closed_at
    session.save(update_fields=["state", "closed_at", "updated_at"])


@transaction.atomic
def close_session(*, session: Session, user, outcome: str, root_cause: str, lessons: str) -> None:
    require_edit(user, session)
    if outcome not in Session.Outcome.values:
        raise ValueError(f"unknown outcome {outcome!r}")
    update_session(
        session=session, user=user, changes={"outcome": outcome, "root_cause": root_cause, "lessons": lessons}
    )
    if session.state != Session.State.CLOSED:
        _change_state(session=session, user=user, state=Session.State.CLOSED, closed_at=timezone.now())
        signals.session_closed.send(sender=Session, session=session)


@transaction.atomic
def reopen_session(*, session: Session, user) -> None:
    require_edit(user, session)
    if session.state == Session.State.CLOSED:
        _change_state(session=session, user=user, state=Session.State.OPEN, closed_at=None)
