"""Growth check for parsers on hostile input (issue 15: no super-linear loops)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

from collectors.facts import ParseError


def cpu_seconds(func: Callable[[str], object], text: str) -> float:
    start = time.process_time()
    with contextlib.suppress(ParseError):
        func(text)
    return time.process_time() - start


def assert_linear(func: Callable[[str], object], make: Callable[[int], str], *, n: int = 20_000) -> None:
    """``func`` on ``make(16 * n)`` costs at most ~40x ``make(n)`` (a quadratic
    loop costs 256x). CPU time, best of three, with a 20 ms floor so that timer
    noise on tiny inputs cannot fail the check."""
    small = min(cpu_seconds(func, make(n)) for _ in range(3))
    large = min(cpu_seconds(func, make(16 * n)) for _ in range(3))
    assert large <= 40 * max(small, 0.02), (small, large)
