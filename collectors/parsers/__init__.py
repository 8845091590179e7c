"""Parsers: pure functions ``text -> typed facts`` (see ``collectors.facts``).

Each parser module registers its functions with :func:`register`, naming the
artifact *kind* it reads. ``collectors.archive`` and ``collectors.transcript``
find a parser by kind from an archive path, a transcript command, or the text
itself (``detect``). ``collectors.assemble`` merges the result into a
``HostFacts``. Parsers never touch the database or the file system, and raise
``collectors.facts.ParseError`` (never anything else) on text they cannot read.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import pickle
import pkgutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from collectors.facts import ArtifactError, ParseError

ParserFunc = TypeVar("ParserFunc", bound=Callable[[str], Any])


@dataclass(frozen=True)
class ParserSpec:
    kind: str  # stable artifact kind, e.g. "lscpu", "numactl_hardware"
    func: Callable[[str], Any]
    # regexes matched (re.search) against a transcript command line, e.g. r"^numactl\s+(-H|--hardware)"
    commands: tuple[str, ...] = ()
    # regexes matched (re.search) against an archive member path, e.g. r"sos_commands/processor/lscpu$"
    paths: tuple[str, ...] = ()
    # recognises un-prompted text by content; cheap, looks at the first few KiB
    detect: Callable[[str], bool] | None = None
    # literals of which every head detect() accepts holds at least one (as detect
    # matches them: case and all): a head holding none is not asked (detect_kind's
    # pre-test; tests/collectors/test_detect_needles.py). Empty: always asked.
    needles: tuple[str, ...] = ()
    # higher wins when several detect() match
    priority: int = 0
    # regexes (re.fullmatch, on the stripped line) of lines the artifact prints
    # that read like prose ("node distances:"): outside code fences a
    # transcript output ends at the first prose line, so these are declared
    prose_lines: tuple[str, ...] = ()


REGISTRY: dict[str, ParserSpec] = {}

log = logging.getLogger(__name__)

# Lines a parser could not read are reported one by one up to this many; the
# rest are counted in one more error. A hostile paste of a million such lines
# must not make a million error objects (the collector's garbage collection
# made that super-linear: tests/collectors/test_fuzz_linear.py).
MAX_LINE_ERRORS = 20


class UnreadLines:
    """The lines of an output a parser passed over, as errors for its result.

    >>> unread = UnreadLines("row not read")
    >>> for n in range(1, 25):
    ...     unread.add(n, "```")
    >>> [e.message for e in unread.errors()][-2:]
    ["row not read: '```'", 'row not read: 4 more lines']
    """

    def __init__(self, message: str) -> None:
        self.message = message
        self.reported: list[ArtifactError] = []
        self.more = 0
        self.first_more: int | None = None

    def add(self, number: int, line: str) -> None:
        if len(self.reported) < MAX_LINE_ERRORS:
            self.reported.append(ArtifactError("", f"{self.message}: {line.strip()[:80]!r}", number))
        else:
            self.more += 1
            self.first_more = self.first_more or number

    def errors(self) -> list[ArtifactError]:
        if not self.more:
            return list(self.reported)
        plural = "line" if self.more == 1 else "lines"
        summary = ArtifactError("", f"{self.message}: {self.more} more {plural}", self.first_more)
        return [*self.reported, summary]


def skipped_lines(what: str, form: str, skipped: list[int]) -> list[ArtifactError]:
    """The lines (numbers) a parser passed over as one error at the first of them,
    "WHAT: N lines not in FORM form"; none when there were none.

    >>> [e.message for e in skipped_lines("channels", "'NAME: COUNT'", [4, 9])]
    ["channels: 2 lines not in 'NAME: COUNT' form"]
    """
    if not skipped:
        return []
    plural = "line" if len(skipped) == 1 else "lines"
    return [ArtifactError("", f"{what}: {len(skipped)} {plural} not in {form} form", skipped[0])]


def register(
    kind: str,
    *,
    commands: tuple[str, ...] = (),
    paths: tuple[str, ...] = (),
    detect: Callable[[str], bool] | None = None,
    needles: tuple[str, ...] = (),
    priority: int = 0,
    prose_lines: tuple[str, ...] = (),
) -> Callable[[ParserFunc], ParserFunc]:
    """Register ``func`` as the parser of artifacts of ``kind``."""

    def decorator(func: ParserFunc) -> ParserFunc:
        if kind in REGISTRY and REGISTRY[kind].func is not func:
            raise RuntimeError(f"parser kind {kind!r} registered twice")
        REGISTRY[kind] = ParserSpec(
            kind=kind,
            func=func,
            commands=commands,
            paths=paths,
            detect=detect,
            needles=needles,
            priority=priority,
            prose_lines=prose_lines,
        )
        return func

    return decorator


# Modules whose parsers come first in the registry. The loader imported them
# before the others ever since detection existed, so ties between detectors of
# equal priority went their way (a numastat table over an lscpu around it, a
# virsh nodeinfo over lscpu, a domain XML over top); keeping them first keeps
# what every input was detected as.
FIRST_MODULES = ("numastat", "libvirt", "virsh")


def load_all() -> dict[str, ParserSpec]:
    """Import every parser module so that their ``register`` calls run, and put
    the registry in its one order: the modules of :data:`FIRST_MODULES`, then
    the others by name, each module's parsers in the order they are defined.
    Detection keeps the first of detectors of equal priority, so the order must
    not depend on which module some caller happened to import first (a test
    importing ``collectors.parsers.mysql`` changed what a whole transcript was
    taken for)."""
    names = [module.name for module in pkgutil.iter_modules(__path__)]
    for name in names:
        importlib.import_module(f"{__name__}.{name}")
    first = {name: i for i, name in enumerate(FIRST_MODULES)}
    modules = sorted(names, key=lambda name: first.get(name, len(first)))  # stable: the others stay by name
    rank = {f"{__name__}.{name}": i for i, name in enumerate(modules)}

    def place(spec: ParserSpec) -> tuple[int, int]:
        code = getattr(spec.func, "__code__", None)
        return rank.get(getattr(spec.func, "__module__", ""), len(rank)), code.co_firstlineno if code else 0

    ordered = sorted(REGISTRY.values(), key=place)
    if [spec.kind for spec in ordered] != list(REGISTRY):
        REGISTRY.clear()
        REGISTRY.update((spec.kind, spec) for spec in ordered)
    return REGISTRY


# ------------------------------------------------------------------ one parse per text

_local = threading.local()


@contextlib.contextmanager
def parse_cache() -> Iterator[None]:
    """Inside the block, a parser that already read the very same text (with
    the same arguments) is not run again by :func:`parse`: a paste repeats
    its outputs (one lscpu or domain XML under several prompts), and the
    transcript splitter checks and probes blocks it later parses. Parsers are
    pure, so the result is the same; each call gets its own copy (unpickled),
    since callers stamp provenance into it. A ``ParseError`` is replayed
    likewise; anything else (a parser bug, a timeout) is not kept. Nested
    blocks share the outermost cache, which ends with it."""
    if getattr(_local, "cache", None) is not None:
        yield
        return
    _local.cache = {}
    try:
        yield
    finally:
        _local.cache = None


def parse(spec: ParserSpec, text: str, **kwargs: Any) -> Any:
    """``spec.func(text, **kwargs)``, through the cache of :func:`parse_cache` when one is open."""
    cache: dict[Any, tuple[bool, bytes]] | None = getattr(_local, "cache", None)
    if cache is None:
        return spec.func(text, **kwargs)
    key = (spec.kind, text, *sorted(kwargs.items()))
    try:
        hit = cache.get(key)
    except TypeError:  # an unhashable argument
        return spec.func(text, **kwargs)
    if hit is not None:
        raised, blob = hit
        copy = pickle.loads(blob)  # noqa: S301 - bytes this process pickled above, never input
        if raised:
            raise copy
        return copy
    try:
        result = spec.func(text, **kwargs)
    except ParseError as exc:
        _keep(cache, key, True, exc)
        raise
    _keep(cache, key, False, result)
    return result


def _keep(cache: dict[Any, tuple[bool, bytes]], key: Any, raised: bool, value: Any) -> None:
    """Store ``value`` pickled, before any caller changes it (one that cannot
    be pickled is not kept: parsed again next time)."""
    try:
        cache[key] = (raised, pickle.dumps(value, pickle.HIGHEST_PROTOCOL))
    except Exception:  # an unpicklable result
        log.debug("a %s result not cached", key[0], exc_info=True)
