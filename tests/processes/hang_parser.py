"""A test-only parser whose parsing never ends, registered in a real worker by
``CASEBOOK_TEST_PARSER_MODULES=tests.processes.hang_parser`` (triage/tasks.py
imports it in every pool process). It reads artifacts that start with
:data:`MARKER` and nothing else, so every other upload analyses as usual."""

from __future__ import annotations

from collectors.parsers import register

MARKER = "casebook-test: this artifact never finishes parsing"


def _detect(head: str) -> bool:
    return head.startswith(MARKER)


@register("test_never_ends", detect=_detect, priority=1000)
def parse_never_ends(text: str):
    """Loops forever, swallowing every Exception (as a buggy parser might).

    Sample input::

        casebook-test: this artifact never finishes parsing
    """
    n = 0
    while True:
        try:
            n = (n + len(text)) % 1_000_003
        except Exception:  # a buggy parser's catch-all: the time limit must still stop it
            n = 0


STUBBORN_MARKER = "casebook-test: this artifact ignores the soft time limit"


def _detect_stubborn(head: str) -> bool:
    return head.startswith(STUBBORN_MARKER)


@register("test_ignores_soft_limit", detect=_detect_stubborn, priority=1000)
def parse_ignoring_soft_limit(text: str):
    """Stuck in one long C call (no bytecode boundary, so no Python signal
    handler runs): only the hard time limit (the pool process killed) stops it.

    Sample input::

        casebook-test: this artifact ignores the soft time limit
    """
    return sum(range(10**13 + len(text)))
