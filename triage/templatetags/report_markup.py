"""Escaping filters of the snapshot report (``templates/triage/report.txt``):
``{{ text|inline:w }}`` and ``{{ text|code:w }}``, where ``w`` is the report's
markup writer (``triage.reports.Markdown`` or ``JiraWiki``). The report
template renders with autoescape off: user-provided text reaches it only
through these filters (or as pieces ``triage.reports`` already escaped)."""

from typing import Any

from django import template

register = template.Library()


@register.filter
def inline(text: Any, writer: Any) -> str:
    """One line of text, escaped for the writer's markup."""
    return writer.inline(text)


@register.filter
def code(text: Any, writer: Any) -> str:
    """Text as inline code in the writer's markup (``—`` when empty)."""
    return writer.code(text)


@register.filter
def codes(values: Any, writer: Any) -> str:
    """Several values as inline code, comma-separated."""
    return ", ".join(writer.code(v) for v in values or [])
