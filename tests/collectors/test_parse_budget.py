"""Every parse is bounded: text over the byte budget is skipped before parsing,
and a parse running over the time budget is stopped (SIGALRM on the main
thread) and becomes an artifact error; the rest of the snapshot is still read.

The never-ending parsers are test-only registrations; the hostile libvirt input
is the one of issue 15 (gzip of an unterminated ``<?`` repeated 500,000 times).
"""

from __future__ import annotations

import gzip
import re
import threading
import time

import pytest

from collectors import archive, parsers
from collectors.assemble import artifact_parse_budget, run_parser
from collectors.parsers import ParserSpec

NUMACTL = (
    "available: 1 nodes (0)\n"
    "node 0 cpus: 0 1\n"
    "node 0 size: 1000 MB\n"
    "node 0 free: 10 MB\n"
    "node distances:\n"
    "node   0\n"
    "  0:  10\n"
)


def forever(text: str):
    """Never returns, and swallows every Exception on the way."""
    n = 0
    while True:
        try:
            n += len(text)
        except Exception:  # the point: a parser that swallows everything
            n = 0


def backtracking(text: str):
    """Catastrophic backtracking inside the C regex engine."""
    return re.match(r"(a+)+$", text)


@pytest.fixture
def slow_parsers(monkeypatch):
    parsers.load_all()
    monkeypatch.setitem(parsers.REGISTRY, "test_forever", ParserSpec(kind="test_forever", func=forever))
    monkeypatch.setitem(
        parsers.REGISTRY, "test_backtracking", ParserSpec(kind="test_backtracking", func=backtracking)
    )


def test_a_parse_that_never_ends_becomes_an_artifact_error(slow_parsers, settings):
    settings.CASEBOOK_PARSE_SECONDS = 0.3
    started = time.monotonic()
    results, err = run_parser("test_forever", "x" * 100, artifact="hang.txt")
    elapsed = time.monotonic() - started
    assert results == []
    assert err.artifact == "hang.txt"
    assert err.message == "test_forever: parsing took longer than 0.3 s; skipped"
    assert 0.3 <= elapsed < 2


def test_catastrophic_regex_is_stopped_too(slow_parsers, settings):
    settings.CASEBOOK_PARSE_SECONDS = 0.3
    started = time.monotonic()
    _, err = run_parser("test_backtracking", "a" * 40 + "!", artifact="re.txt")
    assert "took longer than 0.3 s" in err.message
    assert time.monotonic() - started < 2


def test_the_timer_is_disarmed_after_a_parse(settings):
    import signal

    settings.CASEBOOK_PARSE_SECONDS = 5
    results, err = run_parser("numactl_hardware", NUMACTL, artifact="numactl -H")
    assert err is None and results
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.default_int_handler, None)


def test_text_over_the_byte_budget_is_not_parsed(settings, monkeypatch):
    settings.CASEBOOK_PARSE_MAX_BYTES = 64
    called = []
    parsers.load_all()
    monkeypatch.setitem(
        parsers.REGISTRY, "test_count", ParserSpec(kind="test_count", func=lambda text: called.append(text))
    )
    _, err = run_parser("test_count", "y" * 65, artifact="big.txt")
    assert called == []
    assert err.message == "test_count: 65 characters is more than the parse budget (64); skipped"
    _, err = run_parser("test_count", "y" * 64, artifact="ok.txt")
    assert err is None and called == ["y" * 64]


def test_one_budget_for_all_parses_of_one_artifact(slow_parsers, settings):
    """The splitter's checks, the whole-text parse and the blocks of one
    artifact share its budget: once spent, the next parse is skipped at once."""
    settings.CASEBOOK_PARSE_SECONDS = 0.4
    started = time.monotonic()
    with artifact_parse_budget():
        _, first = run_parser("test_forever", "x", artifact="a")
        _, second = run_parser("test_forever", "x", artifact="b")
        _, third = run_parser("numactl_hardware", NUMACTL, artifact="c")
    assert "took longer" in first.message and "took longer" in second.message
    assert third is not None  # the budget of the artifact is spent
    assert time.monotonic() - started < 1.5
    # Outside the artifact, a parse has its own budget again.
    assert run_parser("numactl_hardware", NUMACTL, artifact="d")[1] is None


def test_off_the_main_thread_only_the_byte_budget_applies(settings, monkeypatch):
    """Signals reach the main thread only; a web thread (in-process tasks)
    relies on the Celery limits. The parse is left alone, not broken."""
    settings.CASEBOOK_PARSE_SECONDS = 0.1
    parsers.load_all()
    monkeypatch.setitem(
        parsers.REGISTRY,
        "test_nap",
        ParserSpec(kind="test_nap", func=lambda text: time.sleep(0.3) or []),
    )
    out = {}
    thread = threading.Thread(target=lambda: out.update(r=run_parser("test_nap", "z", artifact="t")))
    thread.start()
    thread.join(5)
    assert out["r"] == ([], None)


def hostile_libvirt() -> bytes:
    """Issue 15: ~1 KB of gzip that pinned a worker for hours."""
    text = "<domain type='kvm'>\n<vcpu>32</vcpu>\n" + "<?" * 500000
    return gzip.compress(text.encode(), 9, mtime=0)


def test_the_1kb_libvirt_upload_is_bounded(settings):
    settings.CASEBOOK_PARSE_SECONDS = 1
    data = hostile_libvirt()
    assert len(data) < 1100
    started = time.monotonic()
    host = archive.load(data, name="hostile.gz", split=False).host
    elapsed = time.monotonic() - started
    assert elapsed < 5, elapsed
    assert host.errors, "the unterminated fragment is reported"
    assert any(e.message.startswith("libvirt_domain:") for e in host.errors), host.errors
