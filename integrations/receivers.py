"""Webhooks, e-mails and counters for what the other apps announce
(``kb.signals``, ``triage.signals``, ``troubleshoot.signals``, ``desk.signals``). Integrations
is the top layer: it listens to the apps, which never import it. Connected in
``IntegrationsConfig.ready``."""

from __future__ import annotations

from typing import Any

from integrations import metrics, services


def analysis_finished(sender: Any, *, snapshot_id: int, **kwargs: Any) -> None:
    services.analysis_finished(snapshot_id=snapshot_id)


def session_closed(sender: Any, *, session: Any, **kwargs: Any) -> None:
    services.session_closed(session=session)


def case_published(sender: Any, *, case: Any, **kwargs: Any) -> None:
    services.case_published(case=case)


def hosts_matched(sender: Any, *, scan: Any, **kwargs: Any) -> None:
    services.hosts_matched(scan=scan)


def snapshots_requeued(sender: Any, *, count: int, **kwargs: Any) -> None:
    services.increment(name=metrics.SWEEPER_REQUEUES, by=count)


def inbox_item_created(sender: Any, *, item: Any, **kwargs: Any) -> None:
    services.inbox_item_created(item=item)
