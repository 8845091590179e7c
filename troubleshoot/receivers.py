"""What the sessions app does when an app beneath it announces something
(connected in ``TroubleshootConfig.ready``)."""

from __future__ import annotations

from typing import Any

from troubleshoot.audit import record


def acknowledgement_changed(
    sender: Any, *, acknowledgement: Any, user: Any, action: str, old: str = "", new: str = "", **kwargs: Any
) -> None:
    """Acknowledgements (triage) are kept in the sessions' audit trail."""
    record(
        acknowledgement=acknowledgement,
        user=user,
        action=action,
        target=acknowledgement.rule,
        old=old,
        new=new,
    )
