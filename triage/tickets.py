"""Ticket references: a snapshot or a troubleshooting session linked to an
external ticket (``OPS-123``, optionally its URL).
"""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from triage.models import Snapshot, TicketRef

TICKET_KEY = re.compile(r"^[A-Za-z0-9][\w.:#/-]{0,63}$")
# A team without its own pattern (accounts.models.Team.ticket_pattern): Jira-style
# keys, a project of 2-16 capitals and digits and an issue number of two digits or more.
DEFAULT_KEY_PATTERN = r"\b[A-Z][A-Z0-9]{1,15}-\d{2,9}\b"
# Keys of that shape that name a standard or a public advisory, not a ticket.
NOT_TICKETS = frozenset(
    {"CVE", "CWE", "GHSA", "ISO", "RFC", "UTF", "IEC", "SHA", "TLS", "RHSA", "DSA", "USN"}
)
# A ticket key is looked for in the first non-empty lines of a paste only: further down,
# the same shape is a bug an output quotes (MDEV-18860), not the ticket at hand.
HEAD_LINES = 5


def keys_in(head: str, pattern: str = "") -> list[str]:
    """Ticket keys in the first non-empty lines of a paste, by the team's
    ``pattern`` (its whole match, or its first group) or Jira-style keys.

    >>> keys_in("[ZSTACK-48375] MariaDB in a guest 2x slower\\n$ lscpu")
    ['ZSTACK-48375']
    >>> keys_in("Subject: UTF-8 and CVE-2021-1234 advisories")
    []
    >>> keys_in("Incident INC0012345 - slow host", pattern=r"INC\\d{7}")
    ['INC0012345']
    """
    lines = [line for line in head.splitlines() if line.strip()][:HEAD_LINES]
    try:
        regex = re.compile(pattern or DEFAULT_KEY_PATTERN)
    except re.error:
        return []
    keys: list[str] = []
    for line in lines:
        for match in regex.finditer(line[:1000]):
            key = match.group(1) if regex.groups else match.group(0)
            prefix = key.split("-", 1)[0].upper()
            if key and key not in keys and prefix not in NOT_TICKETS and TICKET_KEY.match(key):
                keys.append(key)
    return keys


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
