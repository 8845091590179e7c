"""Redis and MongoDB start-up logs (real outputs, tests/fixtures/published/hostside)."""

from __future__ import annotations

import pytest

from collectors.facts import ParseError
from collectors.parsers.service_log import parse_service_log
from tests.conftest import FIXTURES

HOSTSIDE = FIXTURES / "published" / "hostside"


def _parse(name: str):
    return parse_service_log((HOSTSIDE / name).read_text(encoding="utf-8"))


def test_redis_307_log():
    log = _parse("lantern-aws-213-redis307.log")
    assert (log.kind, log.version) == ("redis", "3.0.7")
    assert [(w.code, w.value, w.line) for w in log.warnings] == [
        ("somaxconn", "128", 1),
        ("overcommit_memory", "0", 3),
        ("thp_enabled", None, 4),
    ]


def test_redis_7_log_memory_overcommit_must_be_enabled():
    log = _parse("jemalloc-2756-redis741.log")
    assert (log.kind, log.version) == ("redis", "7.4.1")
    assert [(w.code, w.value) for w in log.warnings] == [("overcommit_memory", None), ("somaxconn", "128")]


def test_redis_syslog_banner_version():
    log = _parse("ansible-redis-138-redis326-syslog.txt")
    assert (log.kind, log.version, log.lines["version"]) == ("redis", "3.2.6", 1)


def test_redis_latency_doctor():
    log = _parse("zalando-1880-redis-latency-doctor.txt")
    assert (log.kind, [w.code for w in log.warnings]) == ("redis", ["anon_huge_pages"])


def test_mongodb_text_log():
    log = _parse("mongo34-thp-always.log")
    assert log.kind == "mongodb"
    assert [(w.code, w.value, w.line) for w in log.warnings] == [
        ("thp_enabled", "always", 2),
        ("thp_defrag", "always", 5),
    ]


def test_mongosh_startup_warning_summary():
    log = _parse("mongodb-k8s-operator-1400-startup-warnings.txt")
    # the summary line of the max_map_count warning prints no value
    assert [(w.code, w.value) for w in log.warnings] == [("thp_enabled", "always"), ("max_map_count", None)]


def test_mongodb_8_thp_sysfs_warning():
    log = _parse("r-universe-509-mongodb8-warnings.txt")
    assert (log.kind, [w.code for w in log.warnings]) == ("mongodb", ["thp_sysfs", "max_map_count"])


def test_mongodb_numa_warning_without_timestamps():
    log = _parse("cyhy-amis-76-mongo-numa.txt")
    assert (log.kind, [w.code for w in log.warnings]) == ("mongodb", ["numa_interleave"])


def test_redis_background_save_gaps_are_forks():
    log = _parse("redis-2820-cluster-bgsave.log")
    assert log.kind == "redis"
    assert log.forks == [(187.0, 2), (190.0, 7)]


def test_redis_log_with_mangled_timestamps_and_pid():
    # redis#9030 quotes lines without the day and the pid ("pid xxx")
    assert _parse("redis-9030-bgsave-fork-97s.log").forks == [(97421.0, 2)]


def test_redis_info_fields():
    from collectors.parsers.service_log import parse_redis_info

    info = parse_redis_info((HOSTSIDE / "redis-1154-latest-fork-usec.txt").read_text(encoding="utf-8"))
    assert info.settings == {"latest_fork_usec": "981432"}
    assert info.lines["latest_fork_usec"] == 17


@pytest.mark.parametrize("text", ["", "hello\nworld\n", "\x00\x01", "WARNING something else entirely"])
def test_garbage_raises_parse_error(text):
    from collectors.parsers.service_log import parse_redis_info

    with pytest.raises(ParseError):
        parse_service_log(text)
    with pytest.raises(ParseError):
        parse_redis_info(text)
