"""``{% load triage_labels %}{{ "warning"|severity_label }}``: a severity as the
reader's language names it (the labels of ``Finding.Severity``), for pages that
hold a severity as a plain string (rule specs, stored finding dicts)."""

from django import template

from triage.models import Finding

register = template.Library()


@register.filter
def severity_label(value: str) -> str:
    try:
        return str(Finding.Severity(value).label)
    except ValueError:
        return value
