"""A troubleshooting session summed up for its ticket, in Markdown or Jira
wiki markup (the writers of ``triage.reports``: one structure, two formats).

Example (Markdown)::

    # Session: BMSQL below expectation
    - State: open · Owner: alice · Assignee: bob
    - Ticket: [OPS-4711](https://jira.example.com/browse/OPS-4711)
    ## Problem
    ...
    ## Measures
    - `remove-netem` Remove the tc netem delay: applied (tpmC 180000)
"""

from __future__ import annotations

from django.utils import translation
from django.utils.translation import gettext as _

from config.language import content_language, ui_language
from triage.reports import MARKUPS, Markdown
from troubleshoot import findings as session_findings
from troubleshoot import verify
from troubleshoot.models import Session, SessionSnapshot


def _number(value) -> str:
    return "—" if value is None else f"{value:g}"


def render_summary(
    session: Session, *, language: str = "en", base_url: str = "", markup: str = "markdown"
) -> str:
    """The session's problem, tickets, people, snapshots, findings, measures
    with their outcome, the close-out and the comments."""
    w = MARKUPS[markup]
    lang = content_language(language)
    with translation.override(ui_language(lang == "zh")):
        lines = _summary(w, session, base_url.rstrip("/"), lang)
    return "\n".join(lines).rstrip() + "\n"


def _summary(w: Markdown, session: Session, base: str, lang: str) -> list[str]:
    out: list[str] = []
    add = out.append
    add(w.heading(1, f"{_('Session')}: {w.inline(session.title)}"))
    add("")
    state = session.get_state_display() + (f" ({session.get_outcome_display()})" if session.outcome else "")
    add(w.bullet(f"{_('State')}: {w.bold(w.inline(state))}"))
    people = f"{_('Owner')}: {w.inline(session.owner.get_username())}"
    if session.assignee is not None:
        people += f" · {_('Assignee')}: {w.inline(session.assignee.get_username())}"
    if session.team is not None:
        people += f" · {_('Team')}: {w.inline(session.team.name)}"
    add(w.bullet(people))
    for ticket in session.tickets.all():
        key = w.inline(ticket.key)
        add(w.bullet(f"{_('Ticket')}: " + (w.link(key, ticket.url) if ticket.url else key)))
    if base:
        url = base + session.get_absolute_url()
        add(w.bullet(f"{_('Session')}: {w.link(url, url)}"))
    add("")

    add(w.heading(2, _("Problem")))
    add("")
    if session.symptom:
        add(w.paragraph(session.symptom))
        add("")
    metric = ""
    if session.metric_baseline is not None:
        after = _number(verify.final_metric(session))
        metric = f"{_number(session.metric_baseline)} → {after} {session.metric_unit}".strip()
    rows = [
        (_("Workload"), session.workload),
        (_("Platform"), session.platform),
        (_("Database"), session.database),
        (session.metric_name or _("Metric"), metric),
    ]
    table = [(w.inline(name), w.inline(value)) for name, value in rows if value]
    if table:
        out.extend(w.table(table))
        add("")

    phases = dict(SessionSnapshot.Phase.choices)
    snaps = []
    for link in session.attachments.select_related("snapshot"):
        name = w.inline(link.snapshot.display_name)
        shown = w.link(name, base + link.snapshot.get_absolute_url()) if base else name
        snaps.append(w.bullet(f"{shown} ({phases.get(link.phase, link.phase)})"))
    _section(w, out, _("Snapshots"), snaps)

    findings = session_findings.merged_findings(session)
    _section(
        w,
        out,
        _("Findings"),
        [
            w.bullet(f"[{f.severity}] {w.code(f.rule)} — {w.inline(f.localized_title(lang))}")
            for f in findings
        ],
    )

    measures = list(session.measures.select_related("measure"))
    if measures:
        add(w.heading(2, _("Measures")))
        add("")
        for pm in measures:
            item = (
                f"{w.code(pm.measure.slug)} {w.inline(pm.measure.title_for(lang))}: {pm.get_status_display()}"
            )
            if pm.metric_after is not None:
                item += f" ({w.inline(session.metric_name or _('metric'))} {_number(pm.metric_after)})"
            add(w.bullet(item))
            if pm.change_made:
                add(w.bullet(w.inline(pm.change_made), 2))
        add("")

    if session.root_cause or session.lessons:
        add(w.heading(2, _("Close")))
        add("")
        for label, text in ((_("Root cause"), session.root_cause), (_("Lessons"), session.lessons)):
            if text:
                add(w.bold(label))
                add("")
                add(w.paragraph(text))
                add("")

    comments = session.comments.select_related("author")
    _section(
        w,
        out,
        _("Comments"),
        [
            w.bullet(f"{w.inline(c.author.get_username())} {c.created_at:%Y-%m-%d %H:%M}: {w.inline(c.text)}")
            for c in comments
        ],
    )
    return out


def _section(w: Markdown, out: list[str], title: str, lines: list[str]) -> None:
    """A level-2 section of ``lines``; nothing when there are none."""
    if lines:
        out.extend([w.heading(2, title), "", *lines, ""])
