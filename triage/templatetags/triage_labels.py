"""``{% load triage_labels %}{{ "warning"|severity_label }}``: a severity as the
reader's language names it (the labels of ``Finding.Severity``), for pages that
hold a severity as a plain string (rule specs, stored finding dicts).
``{{ f|title_in:language }}`` and ``{{ f|explanation_in:language }}``: a
finding's text in the reader's language (``localized_title`` of a stored
finding or of one merged across hosts)."""

from typing import Any

from django import template

from triage.models import Finding

register = template.Library()


@register.filter
def severity_label(value: str) -> str:
    try:
        return str(Finding.Severity(value).label)
    except ValueError:
        return value


@register.filter
def title_in(finding: Any, language: str) -> str:
    return finding.localized_title(language)


@register.filter
def explanation_in(finding: Any, language: str) -> str:
    return finding.localized_explanation(language)
