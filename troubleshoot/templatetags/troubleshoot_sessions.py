from django import template

from troubleshoot.access import visible_sessions

register = template.Library()


@register.inclusion_tag("troubleshoot/_dashboard_sessions.html", takes_context=True)
def recent_sessions(context, limit: int = 8):
    """The dashboard's list of open sessions the reader may see, newest first."""
    user = context["request"].user
    sessions = visible_sessions(user).filter(state="open").select_related("owner")
    sessions = sessions.order_by("-updated_at", "-id")[:limit]
    return {"sessions": sessions, "request": context["request"]}
