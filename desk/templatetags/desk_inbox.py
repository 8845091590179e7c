from django import template

from desk.inbox import unread_count

register = template.Library()


@register.simple_tag
def inbox_unread(user) -> int:
    """Unread inbox items of ``user``, for the navigation."""
    return unread_count(user)
