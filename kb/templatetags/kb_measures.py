"""``{% load kb_measures %}{% measure_link slug %}``: a measure shown by its
title in the reader's language, linked to its page in the measures
catalogue, wherever a measure is named (the report, its header, the wizard,
case pages). The slug stays in ``data-measure`` and the tooltip for people
who know it by that name; an unknown slug is shown as it is, unlinked."""

from __future__ import annotations

from django import template
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html
from django.utils.translation import get_language

from kb.models import Measure

register = template.Library()


def _catalogue(context) -> dict[str, Measure]:
    """slug -> measure (slug and titles only) of the whole catalogue, read
    once per request: the catalogue is a few dozen rows."""
    request = context.get("request")
    cached = getattr(request, "_measure_catalogue", None)
    if cached is None:
        cached = {m.slug: m for m in Measure.objects.only("slug", "title_en", "title_zh")}
        if request is not None:
            request._measure_catalogue = cached
    return cached


def measure_title(context, slug: str, language: str = "") -> str:
    measure = _catalogue(context).get(slug)
    if measure is None:
        return slug
    return measure.title_for((language or get_language() or "en").lower()) or slug


@register.simple_tag(takes_context=True)
def measure_link(context, measure, language: str = ""):
    """``measure``: a slug or a :class:`~kb.models.Measure`; ``language``
    overrides the reader's (a case page shows its own language)."""
    slug = str(getattr(measure, "slug", measure) or "")
    title = measure_title(context, slug, language)
    try:
        url = reverse("kb:measure_detail", args=[slug]) if slug in _catalogue(context) else ""
    except NoReverseMatch:
        url = ""
    if not url:
        return format_html('<span class="measure-link" data-measure="{}">{}</span>', slug, title)
    return format_html(
        '<a class="measure-link" href="{}" data-measure="{}" title="{}">{}</a>', url, slug, slug, title
    )
