"""Celery application. With no REDIS_URL the tasks run in-process (eager).

Also what the web side needs to know about the broker, read from Redis
itself (no Celery broadcast, which would wait for every worker to answer):

- **consumers**: every worker's main process announces, every
  ``CASEBOOK_CONSUMER_SECONDS``, the queues it consumes (a key per queue and
  worker expiring after three periods, deleted at a warm shutdown);
  :func:`queue_consumers` reads them for ``/healthz``;
- **queue lengths**: :func:`queue_lengths` (LLEN, priorities included);
- **messages still waiting**: :func:`mark_waiting` when a message is sent,
  :func:`clear_waiting` when a worker takes it, :func:`still_waiting` for the
  sweeper, which so never sends a second copy of a message that is still in
  the queue. The mark lives in the broker's Redis: a broker that lost its
  messages lost the marks with them.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time

import redis
from celery import Celery
from celery.signals import worker_ready, worker_shutdown
from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("casebook")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

log = logging.getLogger(__name__)

# kombu's Redis transport keeps messages of priority p > 0 in "<queue>\x06\x16<p>".
PRIORITY_SEP = "\x06\x16"
PRIORITIES = (3, 6, 9)
TIMEOUT_SECONDS = 2


def _client() -> redis.Redis | None:
    """The process's client of the broker's Redis, or None without a broker.
    One per URL and process, so its connections are reused: a new connection
    per call (TCP, then redis-py's HELLO, CLIENT MAINT_NOTIFICATIONS and two
    CLIENT SETINFO before the command) cost 3-4 ms on the shared 2-CPU machine
    against 0.07 ms on an open one, twice per upload on the way from the
    row's save to the worker starting the task (:func:`mark_waiting` before
    the message is sent, :func:`clear_waiting` before the snapshot is
    claimed). redis-py's pool is thread-safe and opens new connections in a
    forked child (a prefork pool process)."""
    url = settings.REDIS_URL
    if not url:
        return None
    return _client_for(url)


@functools.lru_cache(maxsize=8)
def _client_for(url: str) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=TIMEOUT_SECONDS, socket_connect_timeout=TIMEOUT_SECONDS)


def _prefix() -> str:
    return settings.CASEBOOK_BROKER_KEY_PREFIX


def _consumer_key(queue: str, worker: str = "*") -> str:
    return f"{_prefix()}:consumers:{queue}:{worker}"


# ------------------------------------------------------------------ consumers


def announce_consumer(*, worker: str, queues: list[str], ttl: float) -> None:
    client = _client()
    if client is None:
        return
    pipe = client.pipeline()
    for queue in queues:
        pipe.set(_consumer_key(queue, worker), str(time.time()), px=int(ttl * 1000))
    pipe.execute()


def withdraw_consumer(*, worker: str, queues: list[str]) -> None:
    client = _client()
    if client is None:
        return
    client.delete(*[_consumer_key(q, worker) for q in queues])


def queue_consumers(queues: list[str]) -> dict[str, list[str]]:
    """The workers consuming each queue now (their announcements not expired)."""
    client = _client()
    if client is None:
        return {}
    found: dict[str, list[str]] = {}
    for queue in queues:
        keys = client.scan_iter(match=_consumer_key(queue), count=500)
        head = len(_consumer_key(queue, ""))
        found[queue] = sorted(k.decode()[head:] for k in keys)
    return found


def queue_lengths(queues: list[str]) -> dict[str, int]:
    """Messages waiting in each queue (LLEN, priorities included), or {}
    without a broker."""
    client = _client()
    if client is None:
        return {}
    queues = list(dict.fromkeys(queues))
    pipe = client.pipeline()
    for queue in queues:
        pipe.llen(queue)
        for p in PRIORITIES:
            pipe.llen(f"{queue}{PRIORITY_SEP}{p}")
    counts = pipe.execute()
    step = 1 + len(PRIORITIES)
    return {queue: sum(counts[i * step : (i + 1) * step]) for i, queue in enumerate(queues)}


class _Presence:
    """The worker main process's announcing thread."""

    thread: threading.Thread | None = None
    stop = threading.Event()
    worker = ""
    queues: list[str] = []


def _announce_loop(interval: float) -> None:
    while True:
        try:
            announce_consumer(worker=_Presence.worker, queues=_Presence.queues, ttl=3 * interval)
        except Exception:  # the broker is down: the worker says so in its own log
            log.warning("could not announce the queues this worker consumes", exc_info=True)
        if _Presence.stop.wait(interval):
            return


@worker_ready.connect
def _start_presence(sender=None, **_kwargs) -> None:
    if sender is None or not settings.REDIS_URL:
        return
    _Presence.worker = getattr(sender, "hostname", "") or "unknown"
    _Presence.queues = sorted(sender.app.amqp.queues.consume_from)
    _Presence.stop.clear()
    interval = max(0.2, float(settings.CASEBOOK_CONSUMER_SECONDS))
    _Presence.thread = threading.Thread(
        target=_announce_loop, args=(interval,), name="queue-presence", daemon=True
    )
    _Presence.thread.start()


@worker_shutdown.connect
def _stop_presence(**_kwargs) -> None:
    if _Presence.thread is None:
        return
    _Presence.stop.set()
    _Presence.thread.join(timeout=TIMEOUT_SECONDS + 1)
    _Presence.thread = None
    try:
        withdraw_consumer(worker=_Presence.worker, queues=_Presence.queues)
    except Exception:
        log.warning("could not withdraw this worker's queue announcements", exc_info=True)


# ---------------------------------------------------------- waiting messages


def _waiting_key(name: str) -> str:
    return f"{_prefix()}:waiting:{name}"


def mark_waiting(name: str) -> None:
    """A message for ``name`` (e.g. ``analysis:42``) was sent and waits in
    the broker; best effort (never fails the sender)."""
    client = _client()
    if client is None:
        return
    try:
        client.set(_waiting_key(name), str(time.time()), ex=int(settings.CASEBOOK_WAITING_MARK_SECONDS))
    except redis.RedisError:
        log.warning("could not mark %s as waiting in the broker", name, exc_info=True)


def clear_waiting(name: str) -> None:
    """A worker took the message for ``name``."""
    client = _client()
    if client is None:
        return
    try:
        client.delete(_waiting_key(name))
    except redis.RedisError:
        log.warning("could not clear the waiting mark of %s", name, exc_info=True)


def still_waiting(names: list[str], *, queue: str) -> set[str]:
    """Those of ``names`` whose message is still waiting in ``queue``: it was
    marked when sent, no worker has taken it, and the queue is not empty (an
    empty queue holds no message, whatever the marks say: a purge, a lost
    broker). Nothing when the broker cannot be asked."""
    client = _client()
    if client is None or not names:
        return set()
    try:
        if not queue_lengths([queue]).get(queue):
            return set()
        marks = client.mget([_waiting_key(n) for n in names])
    except redis.RedisError:
        log.warning("could not read the waiting marks", exc_info=True)
        return set()
    return {name for name, mark in zip(names, marks, strict=True) if mark is not None}
