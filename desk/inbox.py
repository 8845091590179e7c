"""What waits for one person, and the review queue.

Items are written when the apps announce an event (``desk.receivers``): a case
sent to review (to every reviewer, the author excepted), a case returned to
draft (to its author, with the reviewer's comment), a session given to someone,
a comment naming someone (``@username``, if they may read the session), an
analysis of someone's upload that found something critical, a case published or
a rule deployed whose retro-scan matched a team's stored hosts (to every member
of the team; a team-less host's uploader). One item per event and person;
nobody is told of what they did themselves."""

from __future__ import annotations

import re

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import F, Q, QuerySet
from django.urls import reverse
from django.utils import timezone

from accounts.access import support_staff
from accounts.models import Membership
from desk.models import InboxItem
from desk.signals import inbox_item_created
from kb.access import can_review_case
from kb.models import Case, RetroScan
from triage.models import FLEET_PREFIX, Finding, Snapshot
from triage.retroscan import news_by_scope, subject_of
from troubleshoot.access import can_view
from troubleshoot.models import Comment, Session

MENTION = re.compile(r"(?<![\w@])@([\w.+-]{1,150})")


def do_notify(*, user, kind: str, title: str, url: str, key: str, actor=None, detail: str = "") -> bool:
    """Put one item in ``user``'s inbox (False when it is already there, or
    ``user`` is the one who acted, or is no longer active)."""
    if user is None or not user.is_active or (actor is not None and actor.pk == user.pk):
        return False
    try:
        with transaction.atomic():
            item = InboxItem.objects.create(
                user=user,
                kind=kind,
                title=title[:300],
                url=url[:500],
                key=key[:200],
                actor=actor,
                detail=detail,
            )
    except IntegrityError:
        return False
    inbox_item_created.send(sender=InboxItem, item=item)
    return True


def items_for(user) -> QuerySet[InboxItem]:
    """The reader's items, unread first, newest first."""
    return (
        InboxItem.objects.filter(user=user)
        .select_related("actor")
        .order_by(F("read_at").desc(nulls_first=True), "-created_at", "-id")
    )


def unread_count(user) -> int:
    if not getattr(user, "is_authenticated", False):
        return 0
    return InboxItem.objects.filter(user=user, read_at__isnull=True).count()


def do_mark_read(*, user, item_ids: list[int] | None = None) -> int:
    """Mark the reader's items read (all of them without ``item_ids``)."""
    qs = InboxItem.objects.filter(user=user, read_at__isnull=True)
    if item_ids is not None:
        qs = qs.filter(pk__in=item_ids)
    return qs.update(read_at=timezone.now())


def review_queue(user) -> list[Case]:
    """Case groups in review that ``user`` may review, oldest first: one
    version per group (the English one where there are both)."""
    versions = (
        Case.objects.filter(state=Case.State.IN_REVIEW)
        .select_related("author")
        .order_by("updated_at", "slug")
    )
    queue: dict[str, Case] = {}
    for case in versions:
        if can_review_case(user, case) and (case.slug not in queue or case.language == "en"):
            queue[case.slug] = case
    return list(queue.values())


def _case_group(slug: str) -> list[Case]:
    return list(Case.objects.filter(slug=slug).select_related("author"))


def review_requested(*, slug: str, user, comment: str) -> None:
    versions = _case_group(slug)
    if not versions:
        return
    case = next((c for c in versions if c.language == "en"), versions[0])
    url = reverse("kb:case_detail_lang", kwargs={"slug": slug, "language": case.language})
    revision = case.revisions.order_by("-id").values_list("pk", flat=True).first()
    for reviewer in support_staff():
        if all(can_review_case(reviewer, c) for c in versions):
            do_notify(
                user=reviewer,
                kind=InboxItem.Kind.REVIEW_REQUESTED,
                title=case.title,
                url=url,
                key=f"review:{slug}:{revision}",
                actor=user,
                detail=comment,
            )


def case_returned(*, slug: str, user, comment: str) -> None:
    versions = _case_group(slug)
    authors = {c.author_id: c.author for c in versions if c.author is not None}
    if not versions:
        return
    case = next((c for c in versions if c.language == "en"), versions[0])
    url = reverse("kb:case_detail_lang", kwargs={"slug": slug, "language": case.language})
    revision = case.revisions.order_by("-id").values_list("pk", flat=True).first()
    for author in authors.values():
        do_notify(
            user=author,
            kind=InboxItem.Kind.CASE_RETURNED,
            title=case.title,
            url=url,
            key=f"returned:{slug}:{revision}",
            actor=user,
            detail=comment,
        )


def session_assigned(*, session: Session, user, assignee) -> None:
    do_notify(
        user=assignee,
        kind=InboxItem.Kind.SESSION_ASSIGNED,
        title=session.title,
        url=session.get_absolute_url(),
        key=f"assigned:{session.pk}:{timezone.now().isoformat()}",
        actor=user,
    )


def comment_added(*, comment: Comment) -> None:
    names = set(MENTION.findall(comment.text))
    if not names:
        return
    session = comment.session
    for person in get_user_model().objects.filter(username__in=names, is_active=True):
        if can_view(person, session):
            do_notify(
                user=person,
                kind=InboxItem.Kind.MENTION,
                title=session.title,
                url=session.get_absolute_url() + f"#comment-{comment.pk}",
                key=f"mention:{comment.pk}",
                actor=comment.author,
                detail=comment.text[:500],
            )


def analysis_finished(*, snapshot_id: int) -> None:
    """Tell the uploader of a critical finding of the analysis, once the
    analysis's write commits. Never inside that transaction: it holds the
    snapshot's row and the cluster's lock, and the snapshot is not ``done``
    for anyone until it commits (its two to seven queries there made every
    upload wait for them). An error is logged (``robust``): the inbox never
    undoes or fails the analysis it reports on."""
    transaction.on_commit(lambda: _notify_critical_findings(snapshot_id), robust=True)


# What the item needs of the snapshot (its JSON columns are not read).
_NOTIFIED_FIELDS = (
    "label",
    "original_filename",
    "cluster",
    "engine_version",
    "finished_at",
    "owner",
    "team",
)


def _notify_critical_findings(snapshot_id: int) -> None:
    # Most analyses find nothing critical: one query says so, and the
    # snapshot is read only when there may be an item to write.
    if not _may_hold_critical(snapshot_id):
        return
    snapshot = (
        Snapshot.objects.filter(pk=snapshot_id, status=Snapshot.Status.DONE)
        .select_related("owner")
        .only(*_NOTIFIED_FIELDS)
        .first()
    )
    if snapshot is None:
        return
    critical = _critical_titles(snapshot)
    if critical:
        do_notify(
            user=snapshot.owner,
            kind=InboxItem.Kind.CRITICAL_FINDING,
            title=snapshot.display_name,
            url=snapshot.get_absolute_url(),
            key=f"critical:{snapshot.pk}:{snapshot.engine_version}:{snapshot.finished_at}",
            detail="; ".join(critical),
        )


def _may_hold_critical(snapshot_id: int) -> bool:
    """Whether a ``done`` snapshot's current findings can hold a critical one:
    only its own critical rows can, or its fleet rows (current in the words of
    the cluster's latest analysis, which may say critical), of the engine
    version that last analysed it. One plain query, before
    ``Snapshot.current_findings`` (two subqueries through the cluster) is built."""
    return Finding.objects.filter(
        Q(severity=Finding.Severity.CRITICAL) | Q(rule__startswith=FLEET_PREFIX),
        snapshot_id=snapshot_id,
        snapshot__status=Snapshot.Status.DONE,
        engine_version=F("snapshot__engine_version"),
    ).exists()


def _critical_titles(snapshot: Snapshot, limit: int = 3) -> list[str]:
    """The titles of the snapshot's current critical findings, highest impact first."""
    return list(
        snapshot.current_findings()
        .filter(severity=Finding.Severity.CRITICAL)
        .order_by("-impact")
        .values_list("title", flat=True)[:limit]
    )


# Hosts named in a "matches your hosts" item; the rest are counted.
HOSTS_NAMED = 10


def hosts_matched(*, scan: RetroScan) -> None:
    """A retro-scan matched hosts first: one item per member of each team
    whose hosts they are (for a team-less host, its uploader), naming them."""
    subject = subject_of(scan)
    for team, owner, matches in news_by_scope(scan):
        if team is not None:
            people = [m.user for m in Membership.objects.filter(team=team).select_related("user")]
        else:
            people = [owner]
        named = ", ".join(m.host_key for m in matches[:HOSTS_NAMED])
        more = len(matches) - HOSTS_NAMED
        detail = f"{len(matches)}: {named}" + (f" (+{more})" if more > 0 else "")
        for person in people:
            do_notify(
                user=person,
                kind=InboxItem.Kind.HOSTS_MATCHED,
                title=subject.title,
                url=subject.url,
                key=f"matches:{scan.pk}:{matches[0].scope}",
                detail=detail,
            )
