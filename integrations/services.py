"""Writes and outbound calls of the integrations app: webhooks (signed JSON
POSTs), opt-in e-mail notifications and the shared counters of ``/metrics``.

The other apps call :func:`emit` (through :func:`analysis_finished`,
:func:`session_closed`, :func:`case_published`) at the point where the event
happens; nothing is sent before the surrounding transaction commits, and a
receiver that is down never slows an analysis: each delivery is a Celery task
(``integrations.tasks``) that POSTs once and is retried with exponential
back-off. Payloads, the signature header and the retry policy are documented
in docs/integrations.md.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import http.client
import ipaddress
import json
import logging
import secrets
import socket
import ssl
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage, get_connection
from django.db import transaction
from django.db.models import F
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from accounts.access import home_team
from config.enqueue import enqueue
from desk.hosts import host_path
from engine.severity import SEVERITIES
from kb.models import RetroScan
from triage.models import Snapshot
from triage.retroscan import news_by_scope, subject_of
from troubleshoot.models import Session

from .models import TEST_EVENT, Counter, Delivery, Event, NotificationPreference, PersonalEvent, Webhook

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Casebook-Signature"
USER_AGENT = "Casebook-Webhook/1"
# What the delivery log keeps of a receiver's answer: its status line, never its body.
RESPONSE_REASON = 100
# Answers worth trying again; any other 4xx is the receiver refusing the payload.
RETRY_STATUSES = {408, 425, 429}


class InvalidWebhookURL(ValueError):
    """The URL is not http(s), does not resolve, or points at a blocked network."""


# ------------------------------------------------------------------ URL checks (SSRF)


def _blocked_networks() -> list:
    return [ipaddress.ip_network(n, strict=False) for n in settings.CASEBOOK_WEBHOOK_BLOCKED_NETWORKS]


def _allow_list() -> tuple[list, set[str]]:
    """(networks, host names) of ``CASEBOOK_WEBHOOK_ALLOW``: the internal
    receivers an operator listed, exempt from every block."""
    networks, hosts = [], set()
    for entry in settings.CASEBOOK_WEBHOOK_ALLOW:
        entry = entry.strip()
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
        except ValueError:
            hosts.add(entry.lower().rstrip("."))
    return networks, hosts


_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, Teredo, NAT64):
    judged as that IPv4 address, or ``::ffff:127.0.0.1`` would pass."""
    if ip.ipv4_mapped:
        return ip.ipv4_mapped
    if ip.sixtofour:
        return ip.sixtofour
    if ip.teredo:
        return ip.teredo[1]
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def address_blocked(address: str, *, host: str = "") -> bool:
    """True for every address that is not a public unicast one (loopback,
    private, CGNAT, link-local with the cloud metadata, multicast,
    unspecified, reserved) and for the networks of
    ``CASEBOOK_WEBHOOK_BLOCKED_NETWORKS`` (metadata addresses that look
    public), unless the address or the URL's ``host`` is listed in
    ``CASEBOOK_WEBHOOK_ALLOW``."""
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        ip = _embedded_ipv4(ip) or ip
    networks, hosts = _allow_list()
    if (host and host.lower().rstrip(".") in hosts) or any(
        ip.version == net.version and ip in net for net in networks
    ):
        return False
    return (
        not ip.is_global
        or ip.is_multicast
        or ip.is_loopback
        or ip.is_private
        or ip.is_link_local
        or ip.is_unspecified
        or ip.is_reserved
        or any(ip.version == net.version and ip in net for net in _blocked_networks())
    )


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str
    addresses: tuple[str, ...]  # the checked addresses, the only ones a connection is made to


def resolve_target(url: str) -> Target:
    """Parse and resolve a webhook URL, refusing blocked addresses. Every
    address the name resolves to must pass (a name resolving to one good and
    one metadata address is refused), and the connection is then made to the
    address that was checked, so a DNS answer that changes between the check
    and the POST cannot redirect it. All of them are kept and tried in
    order, as a connection to the name would (``localhost`` is ``::1`` first
    on Debian, a receiver may listen on 127.0.0.1 only)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InvalidWebhookURL(_("The URL is not valid.")) from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidWebhookURL(_("Only http:// and https:// URLs can receive webhooks."))
    if parts.username or parts.password:
        raise InvalidWebhookURL(_("Put credentials in the secret, not in the URL."))
    port = port or (443 if parts.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise InvalidWebhookURL(_("The host name does not resolve.")) from exc
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        raise InvalidWebhookURL(_("The host name does not resolve."))
    if any(address_blocked(a, host=parts.hostname) for a in addresses):
        raise InvalidWebhookURL(
            _(
                "The URL points at a loopback, private, link-local, metadata or otherwise blocked "
                "address; an operator can allow an internal receiver with CASEBOOK_WEBHOOK_ALLOW."
            )
        )
    path = parts.path or "/"
    if parts.query:
        path = f"{path}?{parts.query}"
    return Target(parts.scheme, parts.hostname, port, path, tuple(addresses))


# ---------------------------------------------------------------------- webhooks


def new_secret() -> str:
    return secrets.token_hex(32)


def sign(secret: str, body: bytes) -> str:
    """The value of ``X-Casebook-Signature``: ``sha256=`` and the hex HMAC-SHA256
    of the raw request body keyed with the webhook's secret."""
    return "sha256=" + hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()


def create_webhook(*, team, url: str, events: list[str], user=None, secret: str = "") -> Webhook:
    resolve_target(url)
    unknown = sorted(set(events) - set(Event.values))
    if unknown or not events:
        raise ValueError(f"unknown or no events: {unknown}")
    return Webhook.objects.create(
        team=team,
        url=url,
        events=sorted(set(events)),
        secret=secret or new_secret(),
        created_by=user,
    )


def create_personal_webhook(*, user, url: str, events: list[str], secret: str = "") -> Webhook:
    """A webhook of ``user`` alone, for their personal events (``inbox.item``):
    the same signed POSTs, retries, address checks and delivery log as a
    team's."""
    resolve_target(url)
    unknown = sorted(set(events) - set(PersonalEvent.values))
    if unknown or not events:
        raise ValueError(f"unknown or no personal events: {unknown}")
    return Webhook.objects.create(
        user=user, url=url, events=sorted(set(events)), secret=secret or new_secret(), created_by=user
    )


def delete_webhook(*, webhook: Webhook) -> None:
    webhook.delete()


def _absolute(path: str) -> str:
    base = settings.CASEBOOK_BASE_URL.rstrip("/")
    return f"{base}{path}" if base else path


def _envelope(*, event: str, team, data: dict) -> dict:
    return {
        "id": str(uuid.uuid4()),
        "event": event,
        "created_at": timezone.now().isoformat(),
        "team": {"slug": team.slug, "name": team.name} if team is not None else None,
        "data": data,
    }


def _enqueue_delivery(delivery_id: int) -> None:
    try:
        enqueue("integrations.tasks.deliver_webhook", delivery_id)
    except Exception:
        # The broker is down: the row stays ``pending`` and shows in the log.
        log.warning("could not enqueue webhook delivery %s", delivery_id, exc_info=True)


def _enqueue_email(event: str, team_id: int, payload: dict) -> None:
    try:
        enqueue("integrations.tasks.send_event_email", event, team_id, payload)
    except Exception:
        log.warning("could not enqueue the %s e-mail", event, exc_info=True)


def emit(*, event: str, team, data: dict) -> list[Delivery]:
    """Record one delivery per active webhook of ``team`` subscribed to
    ``event`` and queue them, and the opt-in e-mails, once the current
    transaction commits. Returns the deliveries (none without a team)."""
    if team is None:
        return []
    payload = _envelope(event=event, team=team, data=data)
    hooks = [h for h in Webhook.objects.filter(team=team, active=True) if event in (h.events or [])]
    deliveries = [Delivery.objects.create(webhook=h, event=event, payload=payload) for h in hooks]
    for delivery in deliveries:
        transaction.on_commit(functools.partial(_enqueue_delivery, delivery.pk))
    if email_recipients(event=event, team_id=team.pk).exists():
        transaction.on_commit(lambda: _enqueue_email(event, team.pk, payload))
    return deliveries


def send_test(*, webhook: Webhook, user=None) -> Delivery:
    """Queue a ``webhook.test`` delivery to this webhook, whatever its events."""
    data = {"message": "Test delivery from Casebook", "requested_by": getattr(user, "username", "")}
    payload = _envelope(event=TEST_EVENT, team=webhook.team, data=data)
    with transaction.atomic():
        delivery = Delivery.objects.create(webhook=webhook, event=TEST_EVENT, payload=payload)
        transaction.on_commit(lambda: _enqueue_delivery(delivery.pk))
    return delivery


def _connect_checked(addresses: tuple[str, ...], port: int, timeout: float | None) -> socket.socket:
    """A connection to the first of the checked ``addresses`` that accepts one
    (the error of the last when none does)."""
    error: OSError = OSError("no address to connect to")
    for address in addresses:
        try:
            return socket.create_connection((address, port), timeout)
        except OSError as exc:
            error = exc
    raise error


class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to a checked address; the Host header keeps the name."""

    def __init__(self, host: str, addresses: tuple[str, ...], **kwargs):
        super().__init__(host, **kwargs)
        self._addresses = addresses

    def connect(self):
        self.sock = _connect_checked(self._addresses, self.port, self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """Connects to a checked address; TLS verifies the certificate for the name."""

    def __init__(self, host: str, addresses: tuple[str, ...], **kwargs):
        super().__init__(host, context=ssl.create_default_context(), **kwargs)
        self._addresses = addresses

    def connect(self):
        sock = _connect_checked(self._addresses, self.port, self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def _post(url: str, body: bytes, headers: dict) -> tuple[int, str]:
    """POST ``body`` once; (status code, status line). Redirects are not
    followed (a receiver answering 3xx is a failed delivery). The answer's
    body is never read into the log: shown to whoever manages the webhook, it
    would turn the webhook into a way to read internal pages."""
    target = resolve_target(url)
    cls = _PinnedHTTPSConnection if target.scheme == "https" else _PinnedHTTPConnection
    conn = cls(target.host, target.addresses, port=target.port, timeout=settings.CASEBOOK_WEBHOOK_TIMEOUT)
    try:
        conn.request("POST", target.path, body=body, headers=headers)
        response = conn.getresponse()
        reason = "".join(ch for ch in (response.reason or "")[:RESPONSE_REASON] if ch.isprintable())
        return response.status, f"HTTP {response.status} {reason}".strip()
    finally:
        conn.close()


def max_attempts() -> int:
    return settings.CASEBOOK_WEBHOOK_RETRIES + 1


PRUNE_BATCH = 5000


def prune_deliveries(*, older_than_days: int | None = None, now=None) -> int:
    """Delete the log of deliveries that ended (``delivered`` or ``failed``)
    more than ``older_than_days`` (``CASEBOOK_DELIVERY_RETENTION_DAYS``) days
    after they were made; pending and retrying ones stay whatever their age.
    Deletes in batches so that a large log never holds a long lock. Returns
    how many rows went."""
    days = settings.CASEBOOK_DELIVERY_RETENTION_DAYS if older_than_days is None else older_than_days
    if days <= 0:  # 0: keep the log forever
        return 0
    cutoff = (now or timezone.now()) - timedelta(days=days)
    ended = Delivery.objects.filter(
        status__in=(Delivery.Status.DELIVERED, Delivery.Status.FAILED), created_at__lt=cutoff
    )
    deleted = 0
    while batch := list(ended.order_by("pk").values_list("pk", flat=True)[:PRUNE_BATCH]):
        deleted += Delivery.objects.filter(pk__in=batch).delete()[0]
    if deleted:
        log.info("pruned %d webhook deliveries older than %d days", deleted, days)
    return deleted


def attempt_delivery(*, delivery_id: int) -> Delivery | None:
    """POST the delivery once and record the attempt: ``delivered`` on 2xx;
    ``retrying`` on a connection error, a time-out, 5xx, 408, 425 or 429
    while attempts remain; ``failed`` otherwise. None when the row is gone."""
    delivery = Delivery.objects.select_related("webhook").filter(pk=delivery_id).first()
    if delivery is None or delivery.status in (Delivery.Status.DELIVERED, Delivery.Status.FAILED):
        return delivery
    webhook = delivery.webhook
    body = json.dumps(delivery.payload, sort_keys=True, ensure_ascii=False).encode("utf-8")
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-Casebook-Event": delivery.event,
        "X-Casebook-Delivery": str(delivery.pk),
        SIGNATURE_HEADER: sign(webhook.secret, body),
    }
    started = time.monotonic()
    code, error, retryable = None, "", True
    try:
        code, status_line = _post(webhook.url, body, headers)
        if 200 <= code < 300:
            retryable = False
        else:
            error = status_line[:2000]
            retryable = code >= 500 or code in RETRY_STATUSES
    except InvalidWebhookURL as exc:
        error, retryable = str(exc), False
    except (OSError, http.client.HTTPException) as exc:
        error = f"{type(exc).__name__}: {exc}"[:2000]
    now = timezone.now()
    delivery.attempts += 1
    delivery.status_code = code
    delivery.error = error
    delivery.last_attempt_at = now
    delivery.attempt_log = [
        *delivery.attempt_log,
        {"at": now.isoformat(), "status_code": code, "error": error[:300], "ms": _ms_since(started)},
    ]
    if not error:
        delivery.status, delivery.delivered_at = Delivery.Status.DELIVERED, now
    elif retryable and delivery.attempts < max_attempts():
        delivery.status = Delivery.Status.RETRYING
    else:
        delivery.status = Delivery.Status.FAILED
    delivery.save()
    return delivery


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


# ----------------------------------------------------------------------- e-mail


def set_notification_events(*, user, events: list[str], email: str | None = None) -> NotificationPreference:
    unknown = sorted(set(events) - set(Event.values) - set(PersonalEvent.values))
    if unknown:
        raise ValueError(f"unknown events: {unknown}")
    with transaction.atomic():
        if email is not None and email != user.email:
            user.email = email
            user.save(update_fields=["email"])
        pref, _created = NotificationPreference.objects.update_or_create(
            user=user, defaults={"events": sorted(set(events))}
        )
    return pref


def email_recipients(*, event: str, team_id: int):
    """Active members of the team with an e-mail address who opted in to ``event``."""
    users = (
        get_user_model()
        .objects.filter(is_active=True, memberships__team_id=team_id, notification_preference__isnull=False)
        .exclude(email="")
    )
    # JSON containment is not portable to SQLite; the opted-in users are few.
    ids = [
        pk
        for pk, events in users.values_list("pk", "notification_preference__events")
        if event in (events or [])
    ]
    return get_user_model().objects.filter(pk__in=ids).order_by("pk")


def _email_text(event: str, payload: dict) -> tuple[str, str]:
    data = payload.get("data") or {}
    team = (payload.get("team") or {}).get("name", "")
    if event in (Event.ANALYSIS_DONE, Event.ANALYSIS_FAILED):
        snap = data.get("snapshot") or {}
        name = snap.get("label") or snap.get("original_filename") or f"#{snap.get('id')}"
        if event == Event.ANALYSIS_DONE:
            subject = _("Analysis done: %(name)s") % {"name": name}
            counts = data.get("findings") or {}
            lines = [
                _("Findings: %(critical)s critical, %(warning)s warning, %(info)s info.")
                % {k: counts.get(k, 0) for k in SEVERITIES}
            ]
        else:
            subject = _("Analysis failed: %(name)s") % {"name": name}
            lines = [_("Error: %(error)s") % {"error": data.get("error", "")}]
        url = snap.get("url", "")
    elif event == Event.SESSION_CLOSED:
        session = data.get("session") or {}
        subject = _("Session closed: %(title)s") % {"title": session.get("title", "")}
        lines = [_("Outcome: %(outcome)s") % {"outcome": session.get("outcome", "")}]
        url = session.get("url", "")
    elif event in (Event.CASE_MATCHES_HOSTS, Event.RULE_MATCHES_HOSTS):
        subject, lines, url = _matches_text(data)
    else:
        case = data.get("case") or {}
        subject = _("Case published: %(title)s") % {"title": case.get("title", "")}
        lines = []
        url = case.get("url", "")
    lines += [
        _("Team: %(team)s") % {"team": team},
        url,
        "",
        _("You receive this because you opted in on %(url)s.")
        % {"url": _absolute(reverse("integrations:index"))},
    ]
    # Subjects are one line whatever the label held.
    return " ".join(subject.split())[:200], "\n".join(lines)


def _matches_text(data: dict) -> tuple[str, list[str], str]:
    """(subject, lines, link) of a ``case.matches_hosts`` / ``rule.matches_hosts`` e-mail."""
    about = data.get("case") or data.get("rule") or {}
    hosts = data.get("hosts") or []
    subject = _("%(count)s of your hosts match: %(title)s") % {
        "count": len(hosts),
        "title": about.get("title", ""),
    }
    lines = [_("Hosts:")] + [f"  {h.get('host')}  {h.get('url', '')}" for h in hosts]
    return subject, lines, about.get("url", "")


def mail_event(*, event: str, team_id: int, payload: dict) -> int:
    """Send the event's e-mail to every opted-in member of the team, one
    message each (no one sees the other recipients). Returns how many were
    sent; SMTP errors propagate so the task retries."""
    recipients = [u.email for u in email_recipients(event=event, team_id=team_id)]
    if not recipients:
        return 0
    with translation.override(settings.CASEBOOK_EMAIL_LANGUAGE):
        subject, body = _email_text(event, payload)
    prefix = settings.EMAIL_SUBJECT_PREFIX
    messages = [EmailMessage(f"{prefix}{subject}", body, to=[address]) for address in recipients]
    with get_connection() as connection:
        return connection.send_messages(messages) or 0


def _opted_in_address(user_id: int, event: str) -> str:
    """The user's address when they are active and opted in to ``event``, else ""."""
    row = (
        get_user_model()
        .objects.filter(pk=user_id, is_active=True, notification_preference__isnull=False)
        .exclude(email="")
        .values_list("email", "notification_preference__events")
        .first()
    )
    return row[0] if row and event in (row[1] or []) else ""


def _enqueue_inbox_email(payload: dict) -> None:
    try:
        enqueue("integrations.tasks.send_inbox_email", payload)
    except Exception:
        log.warning("could not enqueue the inbox e-mail", exc_info=True)


def personal_webhooks(*, user_id: int, event: str) -> list[Webhook]:
    """The active personal webhooks of the user subscribed to ``event``."""
    hooks = Webhook.objects.filter(user_id=user_id, user__is_active=True, active=True)
    return [h for h in hooks if event in (h.events or [])]


def inbox_item_data(item) -> dict:
    """The ``data`` of an ``inbox.item`` webhook: the item, its kind as a
    stable code and, in ``CASEBOOK_EMAIL_LANGUAGE``, as words."""
    with translation.override(settings.CASEBOOK_EMAIL_LANGUAGE):
        label = str(item.get_kind_display())
    return {
        "user": {"username": item.user.get_username()},
        "item": {
            "id": item.pk,
            "kind": item.kind,
            "kind_label": label,
            "title": item.title,
            "detail": item.detail,
            "actor": item.actor.get_username() if item.actor_id else "",
            "url": _absolute(item.url),
            "created_at": item.created_at.isoformat(),
        },
    }


def inbox_item_created(*, item) -> None:
    """Tell the item's user of a new inbox item through the channels they
    opted in to: an e-mail (``inbox.item`` on their notification
    preferences) and a POST to each of their personal webhooks subscribed to
    ``inbox.item``, once the transaction that wrote it commits. ``item`` is
    desk's ``InboxItem`` (read by its fields: integrations knows desk only by
    its signal). A notification never fails what it reports on: errors are
    logged, and the deliveries are written in a savepoint of their own."""
    event = PersonalEvent.INBOX_ITEM
    try:
        mailed = bool(_opted_in_address(item.user_id, event))
        hooks = personal_webhooks(user_id=item.user_id, event=event)
        if not (mailed or hooks):
            return
        data = inbox_item_data(item)
        fields = data["item"]
        email = {"user_id": item.user_id, "kind": fields["kind_label"]} | {
            k: fields[k] for k in ("title", "detail", "actor", "url")
        }
        payload = _envelope(event=event, team=None, data=data)
        with transaction.atomic():
            deliveries = [Delivery.objects.create(webhook=h, event=event, payload=payload) for h in hooks]
    except Exception:
        log.exception("could not prepare the inbox notifications")
        return
    if mailed:
        transaction.on_commit(lambda: _enqueue_inbox_email(email))
    for delivery in deliveries:
        transaction.on_commit(functools.partial(_enqueue_delivery, delivery.pk))


def mail_inbox_item(*, payload: dict) -> int:
    """Send one inbox item to its user, if they still want it. Returns 0 or 1;
    SMTP errors propagate so the task retries."""
    address = _opted_in_address(payload["user_id"], PersonalEvent.INBOX_ITEM)
    if not address:
        return 0
    with translation.override(settings.CASEBOOK_EMAIL_LANGUAGE):
        subject = f"{payload['kind']}: {payload['title']}"
        lines = []
        if payload.get("actor"):
            lines.append(_("From: %(actor)s") % {"actor": payload["actor"]})
        if payload.get("detail"):
            lines += [payload["detail"], ""]
        lines += [
            payload["url"],
            "",
            _("Your inbox: %(url)s") % {"url": _absolute(reverse("desk:inbox"))},
            _("You receive this because you opted in on %(url)s.")
            % {"url": _absolute(reverse("integrations:index"))},
        ]
    subject = " ".join(subject.split())[:200]
    message = EmailMessage(f"{settings.EMAIL_SUBJECT_PREFIX}{subject}", "\n".join(lines), to=[address])
    with get_connection() as connection:
        return connection.send_messages([message]) or 0


# ------------------------------------------------------------------- event points


def analysis_payload(snapshot) -> dict:
    findings = snapshot.current_findings()
    if snapshot.status != Snapshot.Status.DONE:
        findings = findings.none()
    counts = dict.fromkeys(SEVERITIES, 0)
    rules = set()
    for rule, severity in findings.values_list("rule", "severity"):
        counts[severity] = counts.get(severity, 0) + 1
        rules.add(rule)
    return {
        "snapshot": {
            "id": snapshot.pk,
            "label": snapshot.label,
            "cluster": snapshot.cluster,
            "kind": snapshot.kind,
            "original_filename": snapshot.original_filename,
            "status": snapshot.status,
            "engine_version": snapshot.engine_version,
            "finished_at": snapshot.finished_at.isoformat() if snapshot.finished_at else None,
            "url": _absolute(reverse("triage:snapshot_detail", args=[snapshot.pk])),
            "api_url": _absolute(reverse("api-snapshot-detail", args=[snapshot.pk])),
        },
        "findings": counts,
        "rules": sorted(rules),
        "error": snapshot.last_error if snapshot.status == Snapshot.Status.FAILED else "",
    }


# What ``analysis_payload`` and ``current_findings`` read of the snapshot: its
# JSON columns (the facts alone are kilobytes) are not read on every analysis.
_PAYLOAD_FIELDS = (
    "label",
    "cluster",
    "kind",
    "original_filename",
    "status",
    "engine_version",
    "finished_at",
    "last_error",
    "owner",
)


def analysis_finished(*, snapshot_id: int) -> None:
    """Emit ``analysis.done`` or ``analysis.failed`` for the snapshot as it
    is once the caller's transaction commits (the findings are then there)."""

    def send():
        snapshot = (
            Snapshot.objects.select_related("team")
            .only(*_PAYLOAD_FIELDS, "team")
            .filter(pk=snapshot_id)
            .first()
        )
        if snapshot is None or snapshot.status not in (Snapshot.Status.DONE, Snapshot.Status.FAILED):
            return
        event = Event.ANALYSIS_DONE if snapshot.status == Snapshot.Status.DONE else Event.ANALYSIS_FAILED
        _emit_safely(event=event, team=snapshot.team, data_of=lambda: analysis_payload(snapshot))

    transaction.on_commit(send)


def _emit_safely(*, event: str, team, data_of) -> None:
    """A notification must never fail what it reports on: errors are logged."""
    if team is None:
        return
    try:
        with transaction.atomic():
            emit(event=event, team=team, data=data_of())
    except Exception:
        log.exception("could not emit %s", event)


def session_closed(*, session) -> None:
    def data():
        return {
            "session": {
                "id": session.pk,
                "title": session.title,
                "outcome": session.outcome,
                "root_cause": session.root_cause,
                "owner": session.owner.get_username(),
                "closed_at": session.closed_at.isoformat() if session.closed_at else None,
                "url": _absolute(reverse("troubleshoot:session_detail", args=[session.pk])),
            }
        }

    transaction.on_commit(lambda: _emit_safely(event=Event.SESSION_CLOSED, team=session.team, data_of=data))


def _case_team(case):
    """The team of the session the case was promoted from, else its author's first team."""
    session = Session.objects.filter(promoted_case=case).exclude(team=None).select_related("team").first()
    if session is not None:
        return session.team
    return home_team(case.author) if case.author_id else None


def case_published(*, case) -> None:
    def data():
        return {
            "case": {
                "slug": case.slug,
                "language": case.language,
                "title": case.title,
                "published_at": case.published_at.isoformat() if case.published_at else None,
                "reviewer": case.reviewer.get_username() if case.reviewer_id else "",
                "url": _absolute(reverse("kb:case_detail_lang", args=[case.slug, case.language])),
                "api_url": _absolute(reverse("kb-api-case", args=[case.slug])),
            }
        }

    transaction.on_commit(
        lambda: _emit_safely(event=Event.CASE_PUBLISHED, team=_case_team(case), data_of=data)
    )


def _scan_about(scan: RetroScan) -> tuple[str, dict]:
    """The event of a retro-scan and what it was about, for its payload."""
    subject = subject_of(scan)
    about = {"title": subject.title, "url": _absolute(subject.url), "reason": scan.reason}
    if scan.kind == RetroScan.Kind.RULE:
        return Event.RULE_MATCHES_HOSTS, {"rule": {"id": scan.target, **about}}
    return Event.CASE_MATCHES_HOSTS, {"case": {"slug": scan.target, **about}}


def hosts_matched(*, scan: RetroScan) -> None:
    """Emit ``case.matches_hosts`` / ``rule.matches_hosts`` to each team whose
    hosts the retro-scan matched first, with those hosts (team-less hosts
    have no webhook: their uploader's inbox tells them)."""
    event, about = _scan_about(scan)
    for team, _owner, matches in news_by_scope(scan):
        hosts = [
            {
                "host": m.host_key,
                "cluster": m.cluster,
                "score": m.score,
                "rules": m.shared_rules,
                "versions": m.version_matches,
                "snapshot": {
                    "id": m.snapshot_id,
                    "url": _absolute(reverse("triage:snapshot_detail", args=[m.snapshot_id])),
                },
                "url": _absolute(host_path(team_slug=team.slug if team else None, host_key=m.host_key)),
            }
            for m in matches
        ]
        data = {**about, "hosts": hosts, "scan": {"id": scan.pk, "hosts_scanned": scan.hosts_scanned}}
        transaction.on_commit(
            functools.partial(_emit_safely, event=event, team=team, data_of=lambda d=data: d)
        )


# --------------------------------------------------------------------- counters


def increment(*, name: str, by: int = 1) -> None:
    """Add ``by`` to a shared counter (created at 0 on first use)."""
    if by <= 0:
        return
    Counter.objects.get_or_create(name=name)
    Counter.objects.filter(name=name).update(value=F("value") + by)
