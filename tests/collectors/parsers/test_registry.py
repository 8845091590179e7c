"""The parser registry (collectors/parsers/__init__.py): one order, whatever
imported a parser module first. Detection keeps the first of detectors of
equal priority, so that order decides what an ambiguous text is taken for."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

_ORDER = (
    "import os, django; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings'); django.setup()\n"
    "{first}\n"
    "from collectors import parsers\n"
    "print(' '.join(parsers.load_all()))\n"
)


def _registry_order(first: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", _ORDER.format(first=first)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return out.stdout.split()


def test_the_registry_order_does_not_depend_on_which_parser_was_imported_first():
    plain = _registry_order("")
    assert _registry_order("import collectors.parsers.mysql") == plain
    assert _registry_order("import collectors.parsers.sysctl, collectors.parsers.lscpu") == plain


def test_the_registry_is_ordered_by_module_then_definition():
    from collectors import parsers

    registry = parsers.load_all()
    modules = [spec.func.__module__.rsplit(".", 1)[1] for spec in registry.values()]
    first = [m for m in modules if m in parsers.FIRST_MODULES]
    assert modules[: len(first)] == first
    assert first == sorted(first, key=parsers.FIRST_MODULES.index)
    assert modules[len(first) :] == sorted(modules[len(first) :])
