"""The snapshots attached to a session, per phase (before / after): attached,
uploaded, detached, the ones a session started from a report begins with, and
their analysis progress."""

from __future__ import annotations

from pathlib import PurePath

from django.core.exceptions import PermissionDenied
from django.db import transaction

from kb.similarity import QUALIFYING_SEVERITIES
from triage.models import Snapshot
from triage.selectors import visible_snapshots
from triage.uploads import create_snapshot
from troubleshoot.access import require_edit
from troubleshoot.audit import record, touch
from troubleshoot.lifecycle import set_step
from troubleshoot.models import Session, SessionSnapshot, Step
from troubleshoot.people import add_session_ticket


def cluster_name(session: Session, phase: str) -> str:
    """Snapshots of one phase of a session are analysed together as a cluster,
    so rules see the guest and its host side by side."""
    return f"session-{session.pk}-{phase}"


@transaction.atomic
def attach_snapshot(
    *, session: Session, user, snapshot: Snapshot, phase: str = SessionSnapshot.Phase.BEFORE
) -> bool:
    """Attach an existing snapshot the user can see. False if already attached."""
    require_edit(user, session)

    if not visible_snapshots(user).filter(pk=snapshot.pk).exists():
        raise PermissionDenied("snapshot not visible")
    link, created = SessionSnapshot.objects.get_or_create(
        session=session, snapshot=snapshot, defaults={"phase": phase}
    )
    if not created and link.phase != phase:
        record(
            session=session,
            user=user,
            action="snapshot",
            target=snapshot.display_name,
            old=link.phase,
            new=phase,
        )
        link.phase = phase
        link.save(update_fields=["phase"])
        return True
    if created:
        record(session=session, user=user, action="snapshot", target=snapshot.display_name, new=phase)
        _carry_tickets(session=session, user=user, snapshot=snapshot)
        touch(session)
    return created


def _carry_tickets(*, session: Session, user, snapshot: Snapshot) -> None:
    """The snapshot's tickets (picked up from its paste, or added) follow it
    into the session, and from there into the case it becomes."""
    for ticket in snapshot.tickets.all():
        if not session.tickets.filter(key=ticket.key).exists():
            add_session_ticket(session=session, user=user, key=ticket.key, url=ticket.url)


def startable_snapshot(user, snapshot_id) -> Snapshot | None:
    """The snapshot a new session starts from ("Start a case from this"), if the
    user can see it; None for a missing, invisible or malformed id."""
    try:
        pk = int(snapshot_id)
    except (TypeError, ValueError):
        return None
    return visible_snapshots(user).filter(pk=pk).first()


MAX_STARTING_SIBLINGS = 31  # with the snapshot itself: a 32-host cluster at most


def starting_snapshots(user, snapshot: Snapshot) -> list[Snapshot]:
    """What a session started from ``snapshot``'s report begins with: the
    snapshot and the other hosts of its cluster the user can see (analysed
    together, so the wizard sees the guest and its host side by side),
    newest first after the snapshot itself."""
    if not snapshot.cluster:
        return [snapshot]
    siblings = (
        visible_snapshots(user)
        .filter(cluster=snapshot.cluster)
        .exclude(pk=snapshot.pk)
        .only("pk", "label", "original_filename", "cluster", "status", "created_at")
        .order_by("-created_at", "-id")[:MAX_STARTING_SIBLINGS]
    )
    return [snapshot, *siblings]


@transaction.atomic
def start_from_snapshots(*, session: Session, user, snapshots: list[Snapshot]) -> None:
    """Attach the starting snapshots as before-snapshots and move the session
    on to its snapshots step ("Start troubleshooting session" on a report)."""
    for snap in snapshots:
        attach_snapshot(session=session, user=user, snapshot=snap)
    set_step(session=session, user=user, step=Step.SNAPSHOTS)


def problem_from_snapshot(snapshot: Snapshot) -> dict:
    """Initial problem fields of a session started from a snapshot's report:
    its name and its warning/critical findings as the symptom to refine."""
    findings = [f for f in snapshot.current_findings() if f.severity in QUALIFYING_SEVERITIES]
    symptom = "\n".join(f"- {f.title} ({f.rule}, {f.host})" for f in findings[:10])
    return {"title": snapshot.display_name[:200], "symptom": symptom}


def upload_snapshot(*, session: Session, user, uploaded_file, phase: str) -> Snapshot:
    """Store an upload through triage (which queues its analysis) and attach it.
    Each file is one host; the files of a phase form one cluster."""
    require_edit(user, session)
    name = PurePath(getattr(uploaded_file, "name", "") or "upload").name
    snapshot = create_snapshot(
        owner=user,
        uploaded_file=uploaded_file,
        filename=name,
        label=PurePath(name).stem,
        cluster=cluster_name(session, phase),
    )
    attach_snapshot(session=session, user=user, snapshot=snapshot, phase=phase)
    return snapshot


@transaction.atomic
def detach_snapshot(*, session: Session, user, snapshot_id: int) -> None:
    require_edit(user, session)
    link = (
        SessionSnapshot.objects.filter(session=session, snapshot_id=snapshot_id)
        .select_related("snapshot")
        .first()
    )
    if link is None:
        return
    record(
        session=session,
        user=user,
        action="snapshot",
        target=link.snapshot.display_name,
        old=link.phase,
        new="",
    )
    link.delete()


def snapshots_of(session: Session, phase: str | None = None) -> list[Snapshot]:
    links = session.attachments.select_related("snapshot")
    if phase:
        links = links.filter(phase=phase)
    return [link.snapshot for link in links]


def progress(session: Session, phase: str | None = None) -> dict:
    """Analysis progress of the attached snapshots (of one phase, or all):
    their names and states, not their facts."""
    links = session.attachments.select_related("snapshot").only(
        "phase", "session", "snapshot", *(f"snapshot__{name}" for name in Snapshot.SUMMARY_FIELDS)
    )
    if phase:
        links = links.filter(phase=phase)
    items = [(link.get_phase_display(), link.snapshot) for link in links]
    done = sum(1 for _p, s in items if s.is_finished)
    return {"items": items, "done": done, "total": len(items), "finished": done == len(items)}
