"""Revision history of a case version: what each step changed, as line diffs
of the text fields against the revision before it."""

from __future__ import annotations

import difflib
import textwrap

from kb.models import Case, CaseRevision

# Long paragraphs are wrapped before diffing so a one-word change shows as one
# short line, not as the whole paragraph removed and added again.
WRAP = 80


def _lines(text: str) -> list[str]:
    out: list[str] = []
    for paragraph in (text or "").splitlines() or [""]:
        out.extend(textwrap.wrap(paragraph, WRAP) or [""])
    return out


def field_diff(old: str, new: str) -> list[tuple[str, str]]:
    """``[(kind, line)]`` with kind ``"+"``, ``"-"`` or ``" "`` (context)."""
    rows = []
    for line in difflib.ndiff(_lines(old), _lines(new)):
        kind, text = line[:1], line[2:]
        if kind in "+- ":
            rows.append((kind, text))
    return rows


def history(case: Case) -> list[dict]:
    """Newest first: ``{"revision", "changes": [{"field", "label", "rows"}]}``;
    only the fields that changed are listed (all of them for the first)."""
    revisions = list(case.revisions.select_related("user").order_by("number"))
    labels = {f.name: f.verbose_name for f in Case._meta.get_fields() if hasattr(f, "verbose_name")}
    out = []
    previous: dict[str, str] = {}
    for revision in revisions:
        changes = []
        for name, text in revision.content.items():
            before = previous.get(name, "")
            if text != before:
                changes.append(
                    {"field": name, "label": labels.get(name, name), "rows": field_diff(before, text)}
                )
        out.append({"revision": revision, "changes": changes})
        previous = revision.content
    out.reverse()
    return out


def review_comments(case: Case) -> list[CaseRevision]:
    """The reviewers' and submitters' comments, newest first."""
    return list(case.revisions.exclude(comment="").select_related("user").order_by("-number"))
