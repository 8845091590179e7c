"""One upload rate limit for every way in.

The API (``triage.api.UploadThrottle``), the web upload form and the wizard's
uploads (``config.request_limits.UploadGuardMiddleware``) all call
:func:`hit_uploads`, so one user has one counter whichever page or client
they use. The counter lives in the default cache: Redis when ``REDIS_URL`` is
set, so every gunicorn worker and thread shares it; the local-memory cache
otherwise (one process, the embedded default).

The limit is a sliding log, as DRF's own throttles: at most N requests in any
window of the rate's duration. Optionally (``CASEBOOK_UPLOAD_WEIGHT_BYTES``) an
upload counts once per started N bytes of its declared length, so a few large
uploads use up the rate as many small ones do (:func:`upload_weight`).

DRF keeps the log with a cache ``get`` then ``set``, which lets concurrent
requests of several workers all read the same history and all pass (224 of
260 passed against 120/min). Here the check and the append are one atomic
step: a Lua script on Redis, a process-wide lock around the local-memory cache.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError
from rest_framework.settings import api_settings

log = logging.getLogger(__name__)

UPLOAD_SCOPE = "uploads"

# KEYS[1]: the log (a sorted set of request ids scored by time in ms).
# ARGV: window ms, limit, a unique member, the request's weight (entries it
# adds: 1, or more for a large upload in the byte-weighted mode). Redis's own
# clock, so workers on machines with skewed clocks agree. Returns
# {allowed, retry_after_ms}: the wait until enough entries have left the window.
_SLIDING_LOG = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local weight = tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count + weight <= limit then
  for i = 1, weight do
    redis.call('ZADD', KEYS[1], now, ARGV[3] .. ':' .. i)
  end
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, 0}
end
local last = count + weight - limit - 1
local freed = redis.call('ZRANGE', KEYS[1], last, last, 'WITHSCORES')
return {0, tonumber(freed[2]) + window - now}
"""
_LOCAL_LOCK = threading.Lock()
DURATIONS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class Decision:
    allowed: bool
    retry_after: int  # whole seconds until one more request passes; 0 when allowed


def parse_rate(rate: str) -> tuple[int, int]:
    """``"120/min"`` -> ``(120, 60)``: DRF's rate notation (the unit's first
    letter counts: s, m, h, d)."""
    num, _, period = rate.partition("/")
    try:
        count, seconds = int(num), DURATIONS[period.strip()[:1].lower()]
    except (ValueError, KeyError):
        raise ValueError(f"invalid rate {rate!r}: expected e.g. '120/min'") from None
    return count, seconds


def hit(scope: str, ident: str, rate: str, weight: int = 1) -> Decision:
    """Count one request of ``ident`` in ``scope`` as ``weight`` requests if
    the rate allows them all (a weight above the rate's count is taken as the
    count: the heaviest request takes a whole window)."""
    limit, seconds = parse_rate(rate)
    weight = min(max(1, weight), limit)
    key = f"ratelimit:{scope}:{ident}"
    backend = caches["default"]
    if isinstance(backend, RedisCache):
        try:
            return _hit_redis(backend, key, limit, seconds, weight)
        except RedisError as exc:
            # Fail open: a cache outage must not turn every upload into an
            # error of its own (the broker on the same Redis answers for that).
            log.warning("upload rate limit not checked, the cache is unavailable: %s", exc)
            return Decision(True, 0)
    return _hit_local(backend, key, limit, seconds, weight)


def _retry_seconds(ms: float) -> int:
    return max(1, int(-(-ms // 1000)))


def _hit_redis(backend: RedisCache, key: str, limit: int, seconds: int, weight: int) -> Decision:
    # Django's RedisCache has no atomic "check and append"; its client
    # (stable since Django 4.0) gives the redis-py connection of the pool.
    client = backend._cache.get_client(key, write=True)
    script = client.register_script(_SLIDING_LOG)
    allowed, wait_ms = script(
        keys=[backend.make_and_validate_key(key)], args=[seconds * 1000, limit, uuid.uuid4().hex, weight]
    )
    return Decision(True, 0) if int(allowed) else Decision(False, _retry_seconds(float(wait_ms)))


def _hit_local(backend, key: str, limit: int, seconds: int, weight: int) -> Decision:
    """Local memory (or any other cache): atomic within this process, which is
    all the local-memory cache is shared with."""
    with _LOCAL_LOCK:
        now = time.time()
        log = [t for t in backend.get(key, []) if t > now - seconds]
        if len(log) + weight > limit:
            freed = log[len(log) + weight - limit - 1]  # once it leaves, the request fits
            return Decision(False, _retry_seconds((freed + seconds - now) * 1000))
        log.extend([now] * weight)
        backend.set(key, log, seconds)
        return Decision(True, 0)


def upload_rate() -> str:
    """The configured upload rate (``CASEBOOK_UPLOAD_RATE``, DRF's ``uploads``
    scope), read per call so a settings change applies at once."""
    # the stubs type rates as numbers; DRF's are "N/period" strings
    return (api_settings.DEFAULT_THROTTLE_RATES or {})[UPLOAD_SCOPE]  # type: ignore[return-value]


def upload_ident(user, remote_addr: str | None) -> str:
    """Whose counter: the user's, or the address's for anonymous callers."""
    if getattr(user, "is_authenticated", False):
        return f"user:{user.pk}"
    return f"addr:{remote_addr or 'unknown'}"


def upload_weight(size: int) -> int:
    """How many uploads one of ``size`` bytes (its declared length) counts
    for: 1, or in the byte-weighted mode (``CASEBOOK_UPLOAD_WEIGHT_BYTES`` =
    N > 0) one per started N bytes, so the rate bounds the bytes a user sends
    as well as the requests.

    >>> from django.test import override_settings
    >>> with override_settings(CASEBOOK_UPLOAD_WEIGHT_BYTES=8 << 20):
    ...     [upload_weight(n) for n in (1000, 8 << 20, (8 << 20) + 1, 100 << 20)]
    [1, 1, 2, 13]
    >>> upload_weight(100 << 20)  # the mode is off by default
    1
    """
    unit = int(getattr(settings, "CASEBOOK_UPLOAD_WEIGHT_BYTES", 0) or 0)
    if unit <= 0 or size <= 0:
        return 1
    return -(-size // unit)


def hit_uploads(user, remote_addr: str | None = None, size: int = 0) -> Decision:
    """Count an upload of ``size`` declared bytes (:func:`upload_weight`)."""
    return hit(UPLOAD_SCOPE, upload_ident(user, remote_addr), upload_rate(), upload_weight(size))
