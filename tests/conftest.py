"""Shared fixtures.

Service-backed tests ask for ``postgres_url`` / ``redis_url``. When the service
is unreachable they skip on a developer machine, and FAIL when ``CI=true``:
CI must never go green by skipping what it was meant to prove.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from pytest_django.plugin import blocking_manager_key

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus"
SEEDS = SHARED / "seeds"
FIXTURES = ROOT / "tests" / "fixtures"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")

# The tests are written against the five founding cases: loading the published
# library too (90 case versions instead of 10) would make each of the suite's
# ~60 case loads several seconds slower. Its own tests load it explicitly
# (load_all(library=True)); CASEBOOK_KB_LIBRARY in the environment wins.
if "CASEBOOK_KB_LIBRARY" not in os.environ:
    settings.CASEBOOK_KB_LIBRARY = False


def service_unavailable(message: str) -> None:
    """Skip locally, fail in CI."""
    if IN_CI:
        pytest.fail(f"required service unavailable in CI: {message}", pytrace=False)
    pytest.skip(message)


def port_open(host: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


# Dead rows a table of this worker's test database may hold before it is vacuumed.
VACUUM_DEAD_ROWS = 2000
_test_databases_ready = False


# One id per `pytest` run, shared by its xdist workers (they inherit the
# environment): test database names carry it, so two runs on one PostgreSQL
# (two checkouts, two CI jobs) never collide.
RUN_ID = os.environ.setdefault("CASEBOOK_TEST_RUN", f"r{os.getpid()}")


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix) -> None:
    """pytest-django's ``test_<name>_gw<N>`` names, plus this run's id."""
    from pytest_django.fixtures import _set_suffix_to_test_databases

    _set_suffix_to_test_databases(suffix=RUN_ID)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup):
    """pytest-django's test databases; remembered so that
    :func:`pytest_runtest_setup` touches a database only once it exists."""
    global _test_databases_ready
    _test_databases_ready = True
    yield


# Seconds per test file in a recent CI run (tools/test_durations.py writes it).
DURATIONS = ROOT / "tests" / "durations.json"
UNKNOWN_FILE_SECONDS = 1.0  # a file added since: most take about that


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest test files first. ``--dist loadfile`` hands whole files to
    the xdist workers in collection order; in path order the real-process and
    browser files came last, and one worker ran them alone for minutes while
    the other sat idle. Longest first (LPT) leaves the short files to even the
    workers out at the end. A file's tests keep their order."""
    try:
        seconds = json.loads(DURATIONS.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return
    first_seen: dict[str, int] = {}
    for index, item in enumerate(items):
        first_seen.setdefault(item.nodeid.split("::", 1)[0], index)

    def weight(item: pytest.Item) -> tuple[float, int]:
        path = item.nodeid.split("::", 1)[0]
        return -seconds.get(path, UNKNOWN_FILE_SECONDS), first_seen[path]

    items.sort(key=weight)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """VACUUM (ANALYZE) the tables of this worker's PostgreSQL test database
    that rolled-back tests left full of dead rows, as autovacuum would in
    production. Every test rolls its writes back, so the dead rows pile up
    over a run (thousands of search postings and term counts per loading of
    the founding cases); on a server with autovacuum off (or behind), the
    term lookups crawl through them and the trigram index's pending list,
    and tests slow down by tens of seconds. Runs before a test's fixtures
    (before its transaction), never inside a transaction (a file's shared
    transaction, tests/kb/test_kb_search.py); does nothing on SQLite or
    before the test database exists."""
    if not _test_databases_ready or connection.vendor != "postgresql" or connection.in_atomic_block:
        return
    with item.config.stash[blocking_manager_key].unblock(), connection.cursor() as cursor:
        cursor.execute("SELECT relname FROM pg_stat_user_tables WHERE n_dead_tup > %s", [VACUUM_DEAD_ROWS])
        for (table,) in cursor.fetchall():
            cursor.execute(f"VACUUM (ANALYZE) {connection.ops.quote_name(table)}")


def _tables_with_rows(connection, tables) -> list[str]:
    """Those of ``tables`` holding at least one row, in one query."""
    quote = connection.ops.quote_name
    query = " UNION ALL ".join(
        f"(SELECT %s FROM {quote(table)} LIMIT 1)"  # noqa: S608 (Django's own table names)
        for table in tables
    )
    with connection.cursor() as cursor:
        cursor.execute(query, list(tables))
        return [row[0] for row in cursor.fetchall()]


@pytest.fixture(scope="session", autouse=True)
def _flush_by_delete():
    """On PostgreSQL, the flush that ends every transactional test (live
    server, real processes, browser) deletes the rows of the tables that have
    any instead of TRUNCATE-ing all of them: TRUNCATE makes new files for every
    table and index, and took 1.2-2 s per test (1.3 s for a test that made one
    user), the DELETEs a few hundredths. The foreign keys Django creates are
    DEFERRABLE INITIALLY DEFERRED, so the order of the DELETEs does not matter:
    they are checked when the flush commits, with every referencing row gone
    too. Sequences are not reset either way (reset_sequences=True, which no
    test asks for, keeps TRUNCATE ... RESTART IDENTITY). The database is left
    as empty as before; the dead rows are vacuumed by pytest_runtest_setup."""
    from django.db.backends.postgresql.operations import DatabaseOperations

    truncate = DatabaseOperations.sql_flush

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences or allow_cascade or not tables:
            return truncate(self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade)
        filled = _tables_with_rows(self.connection, tables)
        if not filled:
            return []
        return ["SET CONSTRAINTS ALL DEFERRED;"] + [
            f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(self.quote_name(t))};" for t in filled
        ]

    DatabaseOperations.sql_flush = sql_flush
    try:
        yield
    finally:
        DatabaseOperations.sql_flush = truncate


@pytest.fixture(scope="session")
def redis_url() -> str:
    url = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
    if not port_open("127.0.0.1", 6379):
        service_unavailable("Redis is not listening on 127.0.0.1:6379")
    return url


@pytest.fixture(scope="session")
def postgres_url() -> str:
    url = os.environ.get("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    if not port_open("127.0.0.1", 5432):
        service_unavailable("PostgreSQL is not listening on 127.0.0.1:5432")
    return url


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        service_unavailable(f"shared corpus missing at {CORPUS}")
    return CORPUS


@pytest.fixture
def seeds_dir() -> Path:
    if not SEEDS.is_dir():
        service_unavailable(f"shared seeds missing at {SEEDS}")
    return SEEDS


@pytest.fixture(scope="session", autouse=True)
def _shared_chromium_stops():
    """The browser tests share one Chromium per test process (tests/chromium.py):
    closed, with Playwright's driver, at the end of the session."""
    yield
    chromium = sys.modules.get("tests.chromium")
    if chromium is not None:
        chromium.stop()


FAST_HASHER = "django.contrib.auth.hashers.MD5PasswordHasher"


@pytest.fixture(scope="session", autouse=True)
def _fast_password_hashing():
    """Test users' passwords are hashed with MD5 for the whole run: PBKDF2's
    iterations cost about 0.25 s of CPU per user, a third of some test files'
    time. The real hashers stay listed after it, so their hashes still verify.
    Tests whose users sign in to a server in another process (tests/processes)
    put the real ones back, as that process knows no MD5 (its conftest)."""
    from django.conf import settings
    from django.test.utils import override_settings

    with override_settings(PASSWORD_HASHERS=[FAST_HASHER, *settings.PASSWORD_HASHERS]):
        yield


@pytest.fixture(scope="session", autouse=True)
def _plain_static_file_names():
    """Static files under their plain names for the whole run. The live server
    serves them through the finders, which know nothing of the hashed names a
    manifest left in the data directory by ``make run`` would produce.
    Session-scoped (not the ``settings`` fixture) so Hypothesis tests are not
    given a function-scoped fixture."""
    from django.conf import settings
    from django.test.utils import override_settings

    storages = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    with override_settings(STORAGES=storages):
        yield


@pytest.fixture(autouse=True)
def _fresh_rule_index():
    """Every test starts without an in-memory rule index (kb.rule_index): a
    rolled-back test takes its generations back, which never happens to
    committed ones, so the next test could reuse a number this process read."""
    from kb import rule_index

    rule_index.invalidate()
    yield


@pytest.fixture(autouse=True)
def _fresh_rate_limits():
    """Every test starts with empty upload counters (config.ratelimit): test
    databases reuse user ids, and the local-memory cache outlives a test."""
    from django.core.cache import caches
    from django.core.cache.backends.locmem import LocMemCache

    cache = caches["default"]
    if isinstance(cache, LocMemCache):  # never FLUSHDB a Redis shared with a broker
        cache.clear()
    yield


@pytest.fixture(autouse=True)
def _default_language():
    """Every test starts in the default language: a request of an earlier test
    (a Chinese page, the language switch) leaves its language active in this
    thread, and gettext in a later test would answer in Chinese."""
    from django.conf import settings
    from django.utils import translation

    translation.activate(settings.LANGUAGE_CODE)
    yield
    translation.deactivate()
