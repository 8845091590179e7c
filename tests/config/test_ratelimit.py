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
