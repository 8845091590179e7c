"""A detector's ``needles`` (``ParserSpec.needles``) are literals of which every
head it accepts holds one, so ``detect_kind`` does not ask it about a head that
holds none. Checked on every file of the shared corpus, tests/evaluation*,
tests/fixtures (and the members of their tar archives), this machine's /proc
and /sys text files and the members of bench/pipeline.py's collector archive:
each detector with needles fires on no head without one (nor a regex of
``GUARDED`` matches without its literal), and ``detect_kind``
finds what it found before the pre-test, on each file and on heads every few
lines into it."""

from __future__ import annotations

import io
import os
import tarfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from collectors import parsers
from collectors.decoding import decode_bytes
from collectors.parsers import numastat
from collectors.transcript import _detectors, detect_kind
from tests.conftest import CORPUS, FIXTURES, ROOT

READ_BYTES = 64 << 10  # the head is 8 KiB; the rest gives heads further in
PROC_SKIP = {"kmsg", "kcore", "sysrq-trigger", "pagemap", "mem", "kpagecount", "kpageflags", "kpagecgroup"}
SYS_SKIP = ("/sys/kernel/debug", "/sys/kernel/tracing", "/sys/kernel/security", "/sys/firmware")


def detect_kind_before(text: str) -> str | None:
    """``detect_kind`` before the pre-test: every detector asked in order."""
    head = text[:8192]
    for spec in _detectors():
        if spec.detect is None:
            continue
        try:
            hit = spec.detect(head)
        except Exception:  # noqa: S112 - as detect_kind: a detector that raises is passed over
            continue
        if hit:
            return spec.kind
    return None


def _read(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        return os.read(fd, READ_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)


def _text(data: bytes | None) -> str | None:
    if not data:
        return None
    decoded = decode_bytes(data)
    return None if decoded.binary or not decoded.text.strip() else decoded.text


def _files(*roots: Path) -> Iterator[bytes]:
    for root in roots:
        for path in sorted(root.rglob("*")):
            if not path.is_file() or path.is_symlink():
                continue
            data = path.read_bytes()
            yield data[:READ_BYTES]
            yield from _tar_members(data)


def _tar_members(data: bytes) -> Iterator[bytes]:
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for member in tar:
                fh = tar.extractfile(member) if member.isfile() else None
                if fh is not None:
                    yield fh.read(READ_BYTES)
    except (tarfile.TarError, EOFError, OSError, ValueError):
        return


def _system_files() -> Iterator[bytes]:
    for name in sorted(os.listdir("/proc")):
        path = f"/proc/{name}"
        if name not in PROC_SKIP and not name.isdigit() and os.path.isfile(path):
            yield _read(path) or b""
    for top in ("/proc/sys", "/proc/self/net", "/sys"):
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = [d for d in sorted(dirnames) if not f"{dirpath}/{d}".startswith(SYS_SKIP)]
            for name in sorted(filenames):
                path = f"{dirpath}/{name}"
                if os.path.isfile(path) and not os.path.islink(path):
                    yield _read(path) or b""


def _bench_archive() -> Iterator[bytes]:
    from bench.pipeline import collector_archive

    yield from _tar_members(collector_archive())


# a regex a detector looks for only once the literal is in the head
GUARDED = [(numastat._NODE_HEADER, "Total")]

SOURCES = {
    "corpus": lambda: _files(CORPUS),
    "evaluation": lambda: _files(*sorted(ROOT.glob("tests/evaluation*"))),
    "fixtures": lambda: _files(FIXTURES),
    "proc and sys": _system_files,
    "bench archive": _bench_archive,
}


def _heads(text: str) -> Iterator[str]:
    """The text, and heads starting every few lines into it (as the transcript
    splitter asks about blocks)."""
    yield text
    lines = text.split("\n")
    step = max(7, len(lines) // 40)
    for start in range(step, min(len(lines), 2000), step):
        yield "\n".join(lines[start : start + 60])


@pytest.mark.slow
@pytest.mark.parametrize("source", list(SOURCES))
def test_needles_change_no_detection(source):
    parsers.load_all()
    with_needles = [spec for spec in _detectors() if spec.detect is not None and spec.needles]
    assert len(with_needles) >= 15
    texts = [text for text in map(_text, SOURCES[source]()) if text]
    assert len(texts) > 5
    wrong: list[tuple[str, str]] = []
    changed: list[tuple[str | None, str | None, str]] = []
    for text in texts:
        for head in _heads(text):
            head = head[:8192]
            for spec in with_needles:
                try:
                    hit = spec.detect(head)
                except Exception:  # noqa: S112 - a detector that raises is passed over either way
                    continue
                if hit and not any(needle in head for needle in spec.needles):
                    wrong.append((spec.kind, head[:200]))
            for regex, literal in GUARDED:
                if literal not in head and regex.search(head):
                    wrong.append((literal, head[:200]))
            before, now = detect_kind_before(head), detect_kind(head)
            if before != now:
                changed.append((before, now, head[:200]))
    assert not wrong, wrong[:5]
    assert not changed, changed[:5]


def test_a_head_without_the_needles_is_not_asked(monkeypatch):
    parsers.load_all()
    asked: list[str] = []

    def detect(head: str) -> bool:
        asked.append(head)
        return True

    spec = parsers.ParserSpec(kind="test_needles", func=str, detect=detect, needles=("zzq",), priority=99)
    monkeypatch.setitem(parsers.REGISTRY, "test_needles", spec)
    assert detect_kind("MemTotal:       16 kB\n") == "meminfo"
    assert detect_kind("a zzq line\n") == "test_needles"
    assert asked == ["a zzq line\n"]


@pytest.mark.parametrize(
    ("kind", "head"),
    [  # detectors no file above fires on
        ("oracle_pfile", "*.db_name='ORCL'\n*.db_block_size=8192\n*.memory_target=3G\n"),
        (
            "scaling_governor",
            "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor:powersave\n"
            "/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor:powersave\n",
        ),
    ],
)
def test_a_head_a_detector_fires_on_holds_its_needle(kind, head):
    parsers.load_all()
    spec = parsers.REGISTRY[kind]
    assert spec.detect(head)
    assert any(needle in head for needle in spec.needles)
    assert detect_kind(head) == detect_kind_before(head) == kind
