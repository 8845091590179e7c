"""The one upload rate limit (config.ratelimit): a sliding log shared by the
API, the web form and the wizard, atomic under concurrency."""

from __future__ import annotations

import secrets
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core.cache import caches

from config import ratelimit


def test_parse_rate_reads_drf_notation():
    assert ratelimit.parse_rate("120/min") == (120, 60)
    assert ratelimit.parse_rate("5/s") == (5, 1)
    assert ratelimit.parse_rate("1000/day") == (1000, 86400)
    with pytest.raises(ValueError):
        ratelimit.parse_rate("fast")


def test_local_log_allows_the_rate_then_refuses_with_retry_after():
    decisions = [ratelimit.hit("t", "u1", "3/min") for _ in range(4)]
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert 55 <= decisions[-1].retry_after <= 60
    assert ratelimit.hit("t", "u2", "3/min").allowed  # another ident has its own log


def test_local_log_slides(monkeypatch):
    now = [1_000_000.0]
    monkeypatch.setattr(ratelimit.time, "time", lambda: now[0])
    assert all(ratelimit.hit("t", "u", "2/min").allowed for _ in range(2))
    now[0] += 30
    refused = ratelimit.hit("t", "u", "2/min")
    assert not refused.allowed and refused.retry_after == 30
    now[0] += 30.5  # the first two left the window
    assert ratelimit.hit("t", "u", "2/min").allowed


def _concurrent_hits(n: int, rate: str) -> list[ratelimit.Decision]:
    start = threading.Barrier(n)

    def one(_):
        start.wait()
        return ratelimit.hit("burst", "same-user", rate)

    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(one, range(n)))


def test_local_log_is_atomic_across_threads():
    decisions = _concurrent_hits(40, "10/min")
    assert sum(d.allowed for d in decisions) == 10
    assert all(d.retry_after > 0 for d in decisions if not d.allowed)


@pytest.fixture
def redis_cache(redis_url, settings):
    """The production cache: Redis (DB 13, apart from other test runs)."""
    location = redis_url.rsplit("/", 1)[0] + "/13"
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": location,
            # A prefix of its own: nothing to clear (no FLUSHDB on a shared Redis).
            "KEY_PREFIX": f"casebook-test-ratelimit-{secrets.token_hex(4)}",
        }
    }
    yield caches["default"]
    caches["default"].delete("ratelimit:burst:same-user")


def test_redis_log_is_atomic_and_refuses_with_retry_after(redis_cache):
    decisions = _concurrent_hits(40, "10/min")
    assert sum(d.allowed for d in decisions) == 10
    assert {d.retry_after for d in decisions if not d.allowed} <= set(range(55, 61))
    key = redis_cache.make_and_validate_key("ratelimit:burst:same-user")
    client = redis_cache._cache.get_client(key)
    assert client.zcard(key) == 10 and 0 < client.pttl(key) <= 60_000


def test_upload_ident_is_per_user_then_per_address(django_user_model, db):
    user = django_user_model.objects.create_user("rl", password="pw-rl-12345")
    assert ratelimit.upload_ident(user, "10.0.0.1") == f"user:{user.pk}"
    from django.contrib.auth.models import AnonymousUser

    assert ratelimit.upload_ident(AnonymousUser(), "10.0.0.1") == "addr:10.0.0.1"


def test_a_cache_outage_does_not_refuse_uploads(settings, caplog):
    from bench.pipeline import free_port

    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{free_port()}/0",  # nothing listens there
        }
    }
    assert ratelimit.hit("t", "u", "1/min") == ratelimit.Decision(True, 0)
    assert "rate limit not checked" in caplog.text


def test_a_weighted_request_counts_as_many(monkeypatch):
    """The byte-weighted mode: an upload counts ``weight`` times; one that does
    not fit is refused until enough of the window's entries have left it, and
    takes nothing."""
    now = [1_000_000.0]
    monkeypatch.setattr(ratelimit.time, "time", lambda: now[0])
    assert ratelimit.hit("w", "u", "10/min", weight=4).allowed  # 4 of 10
    now[0] += 10
    assert ratelimit.hit("w", "u", "10/min", weight=5).allowed  # 9 of 10
    now[0] += 10
    refused = ratelimit.hit("w", "u", "10/min", weight=3)  # 12 > 10: wait for the first 4 to leave
    assert not refused.allowed and refused.retry_after == 40
    assert ratelimit.hit("w", "u", "10/min").allowed  # the refused one took nothing: 10 of 10
    assert not ratelimit.hit("w", "u", "10/min").allowed
    # heavier than the whole rate: it takes a whole (empty) window, never refused for ever
    assert ratelimit.hit("w", "v", "10/min", weight=50).allowed
    assert not ratelimit.hit("w", "v", "10/min").allowed


def test_redis_log_weighs_requests_atomically(redis_cache):
    start = threading.Barrier(12)

    def one(i):
        start.wait()
        return ratelimit.hit("burst", "same-user", "10/min", weight=3)

    with ThreadPoolExecutor(max_workers=12) as pool:
        decisions = list(pool.map(one, range(12)))
    assert sum(d.allowed for d in decisions) == 3  # 9 of 10 taken; a fourth needs 12
    key = redis_cache.make_and_validate_key("ratelimit:burst:same-user")
    assert redis_cache._cache.get_client(key).zcard(key) == 9
    assert {d.retry_after for d in decisions if not d.allowed} <= set(range(55, 61))


def test_uploads_are_weighed_by_declared_size_only_when_asked(settings, django_user_model, db):
    user = django_user_model.objects.create_user("big", password="pw-big-12345")
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"uploads": "10/min"}}
    # off (the default): ten uploads of 100 MiB pass
    assert all(ratelimit.hit_uploads(user, size=100 << 20).allowed for _ in range(10))
    caches["default"].clear()
    settings.CASEBOOK_UPLOAD_WEIGHT_BYTES = 50 << 20
    assert [ratelimit.hit_uploads(user, size=100 << 20).allowed for _ in range(6)] == [True] * 5 + [False]
