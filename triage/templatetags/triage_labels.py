"""``{% load triage_labels %}{{ "warning"|severity_label }}``: a severity as the
reader's language names it (the labels of ``Finding.Severity``), for pages that
hold a severity as a plain string (rule specs, stored finding dicts).
``{{ f|title_in:language }}`` and ``{{ f|explanation_in:language }}``: a
finding's text in the reader's language (``localized_title`` of a stored
finding or of one merged across hosts).
``{{ reason|skip_reason }}``: why a rule was skipped (``engine.run`` stores
``missing <facts>`` or ``error: <exception>`` in English) in the reader's
language, the fact names and the error kept verbatim in ``<code>``."""

from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

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


@register.filter
def skip_reason(reason: str) -> SafeString:
    """>>> str(skip_reason("missing disks"))
    'missing <code>disks</code>'
    """
    reason = str(reason or "")
    if reason.startswith("missing "):
        facts = reason.removeprefix("missing ")
        template_ = _("missing %(facts)s") % {"facts": "{}"}
        return format_html(template_, format_html("<code>{}</code>", facts))
    if reason.startswith("error: "):
        template_ = _("error: %(error)s") % {"error": "{}"}
        return format_html(template_, format_html("<code>{}</code>", reason.removeprefix("error: ")))
    return format_html("{}", reason)
