"""``{% load triage_snapshots %}{% recent_snapshots %}``: the recent-snapshots
panel for pages owned by other apps (the dashboard)."""

from django import template

from triage.views import recent_snapshots_context

register = template.Library()


@register.inclusion_tag("triage/_recent_snapshots.html", takes_context=True)
def recent_snapshots(context, limit: int = 10):
    request = context.get("request")
    user = getattr(request, "user", None) or context.get("user")
    return recent_snapshots_context(request, user, limit=limit)
