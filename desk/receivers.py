"""The inbox listens to kb, triage and troubleshoot (connected in
``DeskConfig.ready``); those apps never import desk."""

from __future__ import annotations

from typing import Any

from desk import inbox


def case_review_requested(sender: Any, *, slug: str, user: Any, comment: str = "", **kwargs: Any) -> None:
    inbox.review_requested(slug=slug, user=user, comment=comment)


def case_returned(sender: Any, *, slug: str, user: Any, comment: str = "", **kwargs: Any) -> None:
    inbox.case_returned(slug=slug, user=user, comment=comment)


def session_assigned(sender: Any, *, session: Any, user: Any, assignee: Any, **kwargs: Any) -> None:
    inbox.session_assigned(session=session, user=user, assignee=assignee)


def comment_added(sender: Any, *, comment: Any, **kwargs: Any) -> None:
    inbox.comment_added(comment=comment)


def analysis_finished(sender: Any, *, snapshot_id: int, **kwargs: Any) -> None:
    inbox.analysis_finished(snapshot_id=snapshot_id)


def hosts_matched(sender: Any, *, scan: Any, **kwargs: Any) -> None:
    inbox.hosts_matched(scan=scan)
