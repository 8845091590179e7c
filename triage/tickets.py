"""Ticket references: a snapshot or a troubleshooting session linked to an
external ticket (``OPS-123``, optionally its URL).
"""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from triage.models import Snapshot, TicketRef

TICKET_KEY = re.compile(r"^[A-Za-z0-9][\w.:#/-]{0,63}$")


class TicketRejected(ValueError):
    """Not a ticket reference Casebook accepts (shown to the user)."""


def clean_ticket(key: str, url: str = "") -> tuple[str, str]:
    """A ticket key (``OPS-123``, ``INC0012345``: no spaces, 64 characters at
    most) and an optional http(s) URL, or :class:`TicketRejected`."""
    key, url = (key or "").strip(), (url or "").strip()
    if "\x00" in url:  # PostgreSQL refuses NUL in text; URLValidator lets it through a path
        raise TicketRejected("the ticket URL must be an http(s) address")
    if not TICKET_KEY.match(key):
        raise TicketRejected("a ticket key is a word like OPS-123 (no spaces, at most 64 characters)")
    if url:
        try:
            URLValidator(schemes=["http", "https"])(url)
        except ValidationError as exc:
            raise TicketRejected("the ticket URL must be an http(s) address") from exc
        if len(url) > 500:
            raise TicketRejected("the ticket URL is longer than 500 characters")
    return key, url


def add_ticket(*, user, key: str, url: str = "", snapshot: Snapshot | None = None, session=None) -> TicketRef:
    """Link a snapshot or a session to an external ticket (idempotent per key)."""
    key, url = clean_ticket(key, url)
    owner = {"snapshot": snapshot} if snapshot is not None else {"session": session}
    ticket, created = TicketRef.objects.get_or_create(
        key=key, **owner, defaults={"url": url, "added_by": user}
    )
    if not created and url and ticket.url != url:
        ticket.url = url
        ticket.save(update_fields=["url"])
    return ticket
