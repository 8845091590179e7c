"""Triage listens to the knowledge base (connected in ``TriageConfig.ready``):
a published case is matched against the stored hosts (``triage.retroscan``).
kb never imports triage."""

from __future__ import annotations

from typing import Any

from triage import retroscan


def case_published(sender: Any, *, case: Any, **kwargs: Any) -> None:
    retroscan.case_published(case=case)
