"""One search box for the support desk: a hostname, a ticket key
(``ZSTACK-48375``), a snapshot id (``#42``), a rule id or ticket text finds
hosts, snapshots, sessions, tickets, rules and cases, grouped by kind and
limited to what the reader may see (the snapshots and sessions of their teams,
the cases they may read)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from django.db import connection
from django.db.models import Exists, Max, QuerySet
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from accounts.access import reach
from desk.hosts import host_path
from engine.rules import load_all
from kb.access import case_search_filters
from kb.models import Case
from kb.search import searching
from triage.models import Snapshot, TicketRef
from triage.selectors import visible_snapshots
from troubleshoot.access import visible_sessions
from troubleshoot.models import Session

GROUP_LIMIT = 8
MIN_CHARS = 2
# "#42" or "42": a snapshot or session id.
ID = re.compile(r"^#?(\d{1,12})$")


@dataclass
class Item:
    title: str
    url: str
    detail: str = ""


@dataclass
class Group:
    kind: str
    label: str
    items: list[Item] = field(default_factory=list)


# Each group finds its candidates through an index on what was typed (trigram
# indexes for a part of a name, the upper-cased ticket key, the primary key),
# at most CANDIDATES of them, and only then asks which the reader may see: an
# OR of "matches" and "may see" would read every row of a large fleet.
CANDIDATES = 200
# Trigram indexes need three characters; a shorter part of a name is not looked for.
MIN_SUBSTRING = 3


def _snapshot_id(text: str) -> int | None:
    match = ID.match(text)
    return int(match.group(1)) if match else None


# Rows read for a group's candidates: the matches are read in no order and
# stop there (a name of a 5,000-host fleet has about 20 snapshots).
CANDIDATE_ROWS = 20 * CANDIDATES


def _matching_rows(model, column: str, text: str, value: str, limit: int) -> QuerySet | None:
    """The query of :func:`_matching` in one round trip, where the database can
    limit each part of a UNION (PostgreSQL: the middle is read only when
    ``NOT EXISTS`` a start, a one-time filter); None elsewhere (SQLite)."""
    rows = model.objects.order_by()
    starts = rows.filter(**{f"{column}__istartswith": text})
    first = starts.values_list(value, flat=True)[:limit]
    if len(text) < MIN_SUBSTRING:
        return first
    if not connection.features.supports_slicing_ordering_in_compound:
        return None
    holding = rows.filter(**{f"{column}__icontains": text}).filter(~Exists(starts))
    return first.union(holding.values_list(value, flat=True)[:limit], all=True)


def _matching(model, column: str, text: str, value: str, limit: int) -> list:
    """``value`` of at most ``limit`` rows of ``model`` whose ``column`` starts
    with ``text`` (a btree range on the upper-cased column), else, when none
    does, of those holding it (the trigram index: slower for a long name of
    common trigrams). A name is mostly typed from its start: its middle is
    looked for only when no name starts so. Read in no order, up to ``limit``."""
    rows = _matching_rows(model, column, text, value, limit)
    if rows is not None:
        return list(rows)
    found: list = []
    for lookup in ("istartswith", "icontains"):
        found = found or list(
            model.objects.filter(**{f"{column}__{lookup}": text}).values_list(value, flat=True)[:limit]
        )
    return found


def _host_keys(text: str) -> list[str]:
    """Up to CANDIDATES host keys matching ``text`` (the first of them in
    name order) among CANDIDATE_ROWS matching snapshots; on PostgreSQL the
    database keeps one row per key (a host has many snapshots), in one round
    trip. A list, not a subquery: with the reader's teams in the same query
    the planner reads every snapshot of the team instead of the keys' ones."""
    rows = _matching_rows(Snapshot, "host_key", text, "host_key", CANDIDATE_ROWS)
    if rows is None:
        return sorted(set(_matching(Snapshot, "host_key", text, "host_key", CANDIDATE_ROWS)))[:CANDIDATES]
    sql, params = rows.query.sql_with_params()
    with connection.cursor() as cursor:
        # The compiled SQL of the query above, its values passed as parameters.
        cursor.execute(
            f"SELECT DISTINCT m.host_key FROM ({sql}) AS m ORDER BY m.host_key LIMIT %s",  # noqa: S608
            (*params, CANDIDATES),
        )
        return [row[0] for row in cursor.fetchall()]


def _hosts(snapshots: QuerySet, text: str) -> list[Item]:
    rows = (
        snapshots.filter(host_key__in=_host_keys(text))
        .values("team__slug", "team__name", "host_key")
        .annotate(last=Max("created_at"))
        .order_by("-last", "host_key")[:GROUP_LIMIT]
    )
    return [
        Item(
            title=row["host_key"],
            url=host_path(team_slug=row["team__slug"], host_key=row["host_key"]),
            detail=row["team__name"] or "",
        )
        for row in rows
    ]


def _ticket_owners(text: str) -> list[tuple[int | None, int | None]]:
    """(snapshot id, session id) of the tickets whose key is ``text``: asked
    once for the snapshots and the sessions groups."""
    tickets = TicketRef.objects.filter(key__iexact=text).order_by()
    return list(tickets.values_list("snapshot_id", "session_id")[:CANDIDATES])


# The columns a group's items show (a snapshot row also holds its facts and
# history: large JSON never read here).
SNAPSHOT_COLUMNS = ("id", "label", "original_filename", "created_at")
SESSION_COLUMNS = ("id", "title", "step", "state")


def _snapshots(snapshots: QuerySet, text: str, owners: list) -> list[Item]:
    ids = {snapshot for snapshot, _ in owners if snapshot}
    number = _snapshot_id(text)
    if number is not None:
        ids.add(number)
    ids.update(_matching(Snapshot, "label", text, "pk", CANDIDATES))
    if re.fullmatch(r"[0-9a-fA-F]{8,64}", text):
        ids.update(
            Snapshot.objects.filter(sha256__startswith=text.lower()).values_list("pk", flat=True)[:CANDIDATES]
        )
    if not ids:
        return []
    qs = snapshots.filter(pk__in=ids).only(*SNAPSHOT_COLUMNS).order_by("-created_at", "-id")[:GROUP_LIMIT]
    return [
        Item(title=f"#{s.pk} {s.display_name}", url=s.get_absolute_url(), detail=f"{s.created_at:%Y-%m-%d}")
        for s in qs
    ]


def _sessions(sessions: QuerySet, text: str, owners: list) -> list[Item]:
    ids = {session for _, session in owners if session}
    number = _snapshot_id(text)
    if number is not None:
        ids.add(number)
    if len(text) >= MIN_SUBSTRING:
        ids.update(Session.objects.filter(title__icontains=text).values_list("pk", flat=True)[:CANDIDATES])
    if not ids:
        return []
    qs = sessions.filter(pk__in=ids).only(*SESSION_COLUMNS).order_by("-updated_at", "-id")[:GROUP_LIMIT]
    return [Item(title=s.title, url=s.get_absolute_url(), detail=s.get_state_display()) for s in qs]


def _visible(rows: QuerySet, ids, columns: tuple[str, ...]) -> dict:
    """Those of ``ids`` (None skipped) among ``rows`` (what the reader may
    see) by id, with ``columns`` only; no query for none."""
    wanted = {i for i in ids if i}
    return {row.pk: row for row in rows.filter(pk__in=wanted).only(*columns)} if wanted else {}


def _tickets(snapshots: QuerySet, sessions: QuerySet, text: str) -> list[Item]:
    """Tickets whose key starts with ``text``, on a snapshot or session the
    user may see: the keys first (no row of their owners), then the owners
    the reader may see, each read once with the columns an item shows."""
    candidates = list(
        TicketRef.objects.filter(key__istartswith=text)
        .order_by("key", "-id")
        .values_list("key", "snapshot_id", "session_id")[:CANDIDATES]
    )
    seen_snapshots = _visible(snapshots, (t[1] for t in candidates), SNAPSHOT_COLUMNS)
    seen_sessions = _visible(sessions, (t[2] for t in candidates), SESSION_COLUMNS)
    items = []
    for key, snapshot_id, session_id in candidates:
        owner = seen_snapshots.get(snapshot_id) or seen_sessions.get(session_id)
        if owner is not None:
            items.append(Item(title=key, url=owner.get_absolute_url(), detail=str(owner)))
        if len(items) >= GROUP_LIMIT:
            break
    return items


def _rules(text: str, zh: bool) -> list[Item]:
    needle = text.lower()
    found = []
    for spec in load_all().values():
        if needle in spec.id or needle in spec.title.lower() or needle in spec.title_zh:
            found.append(
                Item(
                    title=spec.id,
                    url=reverse("triage:rule_detail", args=[spec.id]),
                    detail=spec.text("title", zh),
                )
            )
    found.sort(key=lambda item: (not item.title.startswith(needle), item.title))
    return found[:GROUP_LIMIT]


def _cases(user, text: str, language: str) -> list[Item]:
    filters = case_search_filters(user, {"state": Case.State.PUBLISHED})
    cases = searching.best_cases(text, filters=filters, limit=GROUP_LIMIT, language=language)
    return [
        Item(
            title=case.title,
            url=reverse("kb:case_detail_lang", kwargs={"slug": case.slug, "language": case.language}),
            detail=case.get_language_display(),
        )
        for case in cases
    ]


# Control characters are never part of a name, key or id, and PostgreSQL's text
# cannot hold a NUL at all (a query with one answered 500 before).
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def global_search(user, text: str, *, language: str) -> list[Group]:
    """The groups that have a hit, in a fixed order (hosts first: what a desk types most)."""
    text = _CONTROL.sub("", text or "").strip()[:200]
    if len(text) < MIN_CHARS and not ID.match(text):
        return []
    zh = language == "zh"
    # What the reader may see, asked once (each asks who is support staff).
    scope = reach(user)
    snapshots, sessions = visible_snapshots(user, scope=scope), visible_sessions(user, scope=scope)
    owners = _ticket_owners(text)
    groups = [
        Group("hosts", str(_("Hosts")), _hosts(snapshots, text)),
        Group("tickets", str(_("Tickets")), _tickets(snapshots, sessions, text)),
        Group("snapshots", str(_("Snapshots")), _snapshots(snapshots, text, owners)),
        Group("sessions", str(_("Sessions")), _sessions(sessions, text, owners)),
        Group("rules", str(_("Rules")), _rules(text, zh)),
        Group("cases", str(_("Cases")), _cases(user, text, language)),
    ]
    return [g for g in groups if g.items]
