"""Look for super-linear parsers: time per byte of hostile input at ~1 KB vs ~1 MB.

Usage::

    .venv/bin/python bench/fuzz.py [--kind KIND ...] [--large 1048576] [--verbose]

For every registered parser and for the transcript splitter, hostile inputs are
generated from a real sample of what the parser reads (a block of the rebuilt
founding snapshots or of ../shared/corpus that the parser accepts; the sample of
its docstring when there is none) by the patterns of :func:`patterns`: the
sample, its first line, its last line or its own marker tokens repeated; one
endless line; unterminated constructs (``<?``, ``<!--``, quotes, brackets,
fences) and deep nesting after the sample's head. Each input is built at ~1 KB
and ~1 MB; the time per byte is the minimum of a few runs of CPU time
(``time.process_time``, so other processes on the machine matter less), the
small input looped until a run lasts a few milliseconds. A ratio
large/small above :data:`MAX_RATIO` is super-linear; a large run over
:data:`LARGE_SECONDS` is stopped (SIGALRM) and reported as such.

tests/collectors/test_fuzz_linear.py runs the whole scan in ``make test``
(within :data:`BUDGET_SECONDS`) and fails on any finding.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import re
import signal
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MAX_RATIO = 3.0
SMALL = 1 << 10
LARGE = 1 << 20
# One run on the large input longer than this is super-linear for any parser
# that reads 1 KB in well under a millisecond.
LARGE_SECONDS = 5.0
BUDGET_SECONDS = 60.0
SPLITTER = "transcript splitter"

# Openers of constructs a parser may look for the end of.
UNTERMINATED = ("<?", "<!--", "<![CDATA[", "<", '"', "```\n", "(", "[")
NESTING = ("<a>", "{{", "<b x='", "  ")


@dataclass(frozen=True)
class Pattern:
    name: str
    prefix: str
    unit: str
    suffix: str = ""

    def build(self, size: int) -> str:
        room = max(size - len(self.prefix) - len(self.suffix), len(self.unit))
        return self.prefix + self.unit * max(1, room // max(1, len(self.unit))) + self.suffix


@dataclass
class Result:
    target: str
    pattern: str
    small_ns_per_byte: float
    large_ns_per_byte: float
    stopped: bool = False

    @property
    def ratio(self) -> float:
        if self.stopped:
            return float("inf")
        return self.large_ns_per_byte / max(self.small_ns_per_byte, 1e-3)

    @property
    def super_linear(self) -> bool:
        return self.ratio > MAX_RATIO

    def __str__(self) -> str:
        large = "stopped" if self.stopped else f"{self.large_ns_per_byte:9.1f}"
        return (
            f"{self.target:24} {self.pattern:28} {self.small_ns_per_byte:9.1f} {large:>9} "
            f"{self.ratio:7.2f}{'  SUPER-LINEAR' if self.super_linear else ''}"
        )


# ----------------------------------------------------------------------------- seeds


def _setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def _sample_files() -> list[Path]:
    files = sorted((ROOT / "tests" / "fixtures" / "seeds").glob("*/*/*.txt"))
    corpus = ROOT.parent / "shared" / "corpus"
    if corpus.is_dir():
        files += sorted(p for p in corpus.rglob("*") if p.is_file() and p.suffix not in (".json", ".md"))
    return files


def _docstring_sample(func: Callable) -> str:
    """The ``Sample input::`` block of a parser's docstring, or the first
    string its doctest passes to the parser."""
    doc = func.__doc__ or ""
    m = re.search(r"::\n\n((?:[ \t]+\S.*\n|[ \t]*\n)+)", doc)
    if m:
        return textwrap.dedent(m.group(1)).strip("\n") + "\n"
    m = re.search(r">>> \w+ = \w+\(\s*((?:\"[^\"]*\"\s*(?:\.\.\.\s*)?)+)", doc)
    if m:
        return "".join(re.findall(r"\"([^\"]*)\"", m.group(1))).encode().decode("unicode_escape")
    return ""


@functools.lru_cache(maxsize=1)
def seeds() -> dict[str, str]:
    """kind -> a real sample its parser accepts (at most ~4 KB). Cached: do
    not modify the answer."""
    from collectors import parsers
    from collectors.decoding import decode_bytes
    from collectors.transcript import detect_kind, split_transcript

    registry = parsers.load_all()
    found: dict[str, str] = {}

    def offer(kind: str | None, text: str) -> None:
        if not kind or kind in found or kind not in registry or not text.strip():
            return
        text = text[:4096]
        try:
            registry[kind].func(text)
        except Exception:
            return
        found[kind] = text

    for path in _sample_files():
        if len(found) == len(registry):
            break
        try:
            text = decode_bytes(path.read_bytes()[: 64 << 10]).text
        except OSError:
            continue
        offer(detect_kind(text), text)
        for block in split_transcript(text):
            offer(block.kind, block.text)
    for kind, spec in registry.items():
        if kind not in found:
            found[kind] = _docstring_sample(spec.func) or f"{kind}\n"
    return found


# -------------------------------------------------------------------------- patterns


def _tokens(seed: str) -> list[str]:
    """The sample's own markers: words with punctuation, keys, tags (distinct,
    first seen first)."""
    seen: dict[str, None] = {}
    for tok in re.findall(r"[^\s\w]+\w*|\w+[^\s\w]+|\w+", seed[:2048]):
        seen.setdefault(tok, None)
    return list(seen)[:24]


def patterns(seed: str) -> list[Pattern]:
    lines = [line for line in seed.split("\n") if line.strip()] or [seed]
    head = "\n".join(lines[:3]) + "\n"
    body = "\n".join(lines[:-1]) + "\n" if len(lines) > 1 else ""
    out = [
        Pattern("repeat sample", "", seed if seed.endswith("\n") else seed + "\n"),
        Pattern("repeat first line", "", lines[0] + "\n"),
        Pattern("repeat last line", body, lines[-1] + "\n"),
        Pattern("repeat markers", head, " ".join(_tokens(seed)) + "\n"),
        Pattern("markers on one line", head, " ".join(_tokens(seed)) + " "),
        Pattern("one endless line", lines[0].rstrip("\n"), " x9:"),
    ]
    out += [Pattern(f"unterminated {tok.strip()!s}", head, tok) for tok in UNTERMINATED]
    out += [Pattern(f"nesting {tok.strip() or 'indent'}", head, tok) for tok in NESTING]
    return out


def splitter_patterns(samples: dict[str, str]) -> list[Pattern]:
    """Prompts, fences and recognised headers repeated, unterminated fences,
    endless lines: what the splitter looks at line by line."""
    heads = [s.split("\n", 1)[0] + "\n" for s in samples.values()]
    mixed = "".join(f"$ {h}" for h in heads[:12])
    return [
        Pattern("prompts", "", "[root@db1 ~]# numactl -H\n"),
        Pattern("prompts, no output", "", "$ \n"),
        Pattern("prompt on one line", "", "[root@db1 ~]# "),
        Pattern("fences", "", "```\n"),
        Pattern("unterminated fence", "```\n", "node 0 cpus: 0 1\n"),
        Pattern("detected headers", "", "".join(heads)),
        Pattern("commands and headers", "", mixed),
        Pattern("sql prompts", "", "MariaDB [db]> show variables;\n"),
        Pattern("one endless line", "", "node 0 cpus: 0 1 "),
        Pattern("prose with digits", "", "the server version is 10.4.14-MariaDB-log and \n"),
        Pattern("blank lines", "", "\n"),
    ]


# ------------------------------------------------------------------------- measuring


def _cpu_seconds(func: Callable[[str], object], text: str, *, min_seconds: float, repeats: int) -> float:
    """Minimum CPU seconds of one call over ``repeats`` runs; each run loops
    until it lasts ``min_seconds`` (so a 1 KB parse is not lost in the clock)."""
    best = float("inf")
    for _ in range(repeats):
        calls = 0
        start = time.process_time()
        while True:
            # ParseError (or a parser bug): the time is what counts
            with contextlib.suppress(Exception):
                func(text)
            calls += 1
            elapsed = time.process_time() - start
            if elapsed >= min_seconds:
                break
        best = min(best, elapsed / calls)
    return best


class _OutOfTime(BaseException):
    pass


@contextlib.contextmanager
def _cpu_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`_OutOfTime` after ``seconds`` of this process's CPU time
    (``ITIMER_PROF``: other processes on a busy machine do not count)."""

    def on_limit(signum, frame):
        raise _OutOfTime

    previous = signal.signal(signal.SIGPROF, on_limit)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def _per_byte(
    func: Callable[[str], object], text: str, *, repeats: int, limit: float = LARGE_SECONDS
) -> float | None:
    """CPU ns per byte of one call (minimum of ``repeats``); None when a call
    runs over ``limit`` CPU seconds."""
    try:
        with _cpu_limit(limit * repeats):
            return _cpu_seconds(func, text, min_seconds=0, repeats=repeats) / len(text) * 1e9
    except _OutOfTime:
        return None


def measure(
    target: str,
    func: Callable[[str], object],
    pattern: Pattern,
    *,
    large: int = LARGE,
    screen: int | None = None,
    screen_ratio: float = 1.3,
    limit: float = LARGE_SECONDS,
    max_ratio: float = MAX_RATIO,
) -> Result:
    """Time per byte at 1 KB and at ``large``. With ``screen`` (a size between
    the two), an input whose time per byte at ``screen`` is within
    ``screen_ratio`` of the 1 KB one is taken as linear without the costly large
    run (its result carries the screen figure); the others are measured at
    ``large``."""
    small_text = pattern.build(SMALL)
    small = _cpu_seconds(func, small_text, min_seconds=0.001, repeats=3) / len(small_text) * 1e9
    if screen:
        mid = _per_byte(func, pattern.build(screen), repeats=1)
        if mid is not None and mid / max(small, 1e-3) <= screen_ratio:
            return Result(target, pattern.name, small, mid)
    large_text = pattern.build(large)
    # Past ``max_ratio`` times the small input's time per byte the verdict is
    # in: stop there (never later than ``limit``).
    limit = min(limit, max(0.05, max_ratio * small * len(large_text) * 1e-9 * 1.1))
    first = _per_byte(func, large_text, repeats=1, limit=limit)
    if first is None:
        # Stopped: as for a suspicious ratio below, measure once more (both
        # sizes, the small one at its best) before calling it super-linear; a
        # run on a busy machine (cache and frequency contention) can be slow once.
        small = min(
            small, _cpu_seconds(func, small_text, min_seconds=0.01, repeats=3) / len(small_text) * 1e9
        )
        limit = max(limit, max_ratio * small * len(large_text) * 1e-9 * 1.1)
        first = _per_byte(func, large_text, repeats=1, limit=limit)
    if first is None:
        return Result(target, pattern.name, small, float("inf"), stopped=True)
    result = Result(target, pattern.name, small, first)
    if result.ratio > max_ratio / 2:
        # Suspicious: measure again (both sizes) and keep the minimum.
        small = min(
            small, _cpu_seconds(func, small_text, min_seconds=0.01, repeats=3) / len(small_text) * 1e9
        )
        again = _per_byte(func, large_text, repeats=2, limit=limit)
        result = Result(target, pattern.name, small, min(first, again if again is not None else first))
    return result


def targets(samples: dict[str, str]) -> list[tuple[str, Callable[[str], object], list[Pattern]]]:
    from collectors import parsers
    from collectors.transcript import split_transcript

    out = [(kind, spec.func, patterns(samples[kind])) for kind, spec in sorted(parsers.load_all().items())]
    out.append((SPLITTER, split_transcript, splitter_patterns(samples)))
    return out


def scan(
    kinds: list[str] | None = None,
    *,
    large: int = LARGE,
    screen: int | None = None,
    limit: float = LARGE_SECONDS,
    budget: float = BUDGET_SECONDS,
    skip: frozenset[tuple[str, str]] = frozenset(),
    progress: Callable[[Result], None] | None = None,
    max_ratio: float = MAX_RATIO,
) -> tuple[list[Result], float, bool]:
    """Every (target, pattern) measured but those in ``skip`` (see
    :func:`measure` for ``screen``).
    Returns the results, the CPU seconds spent, and whether the budget (CPU
    seconds) ran out before the end."""
    started = time.process_time()
    samples = seeds()
    results: list[Result] = []
    for target, func, pats in targets(samples):
        if kinds and target not in kinds:
            continue
        for pattern in pats:
            if (target, pattern.name) in skip:
                continue
            if time.process_time() - started > budget:
                return results, time.process_time() - started, True
            result = measure(
                target, func, pattern, large=large, screen=screen, limit=limit, max_ratio=max_ratio
            )
            results.append(result)
            if progress:
                progress(result)
    return results, time.process_time() - started, False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", action="append", help="only these parsers (or 'transcript splitter')")
    parser.add_argument("--large", type=int, default=LARGE, help="size of the large input in bytes")
    parser.add_argument(
        "--screen", type=int, default=0, help="screen at this size first (the test uses 65536); 0: off"
    )
    parser.add_argument("--budget", type=float, default=3600.0, help="stop after this many seconds")
    parser.add_argument("--verbose", action="store_true", help="print every measurement")
    args = parser.parse_args(argv)
    _setup_django()

    print(f"{'target':24} {'pattern':28} {'ns/B 1KB':>9} {'ns/B 1MB':>9} {'ratio':>7}")

    def show(result: Result) -> None:
        if args.verbose or result.super_linear:
            print(result, flush=True)

    results, seconds, out_of_time = scan(
        args.kind, large=args.large, screen=args.screen or None, budget=args.budget, progress=show
    )
    bad = [r for r in results if r.super_linear]
    print(f"\n{len(results)} inputs in {seconds:.1f} CPU s; {len(bad)} super-linear (ratio > {MAX_RATIO:g})")
    if out_of_time:
        print("stopped: budget exhausted")
    return 1 if bad or out_of_time else 0


if __name__ == "__main__":
    sys.exit(main())
