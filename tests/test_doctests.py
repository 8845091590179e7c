"""Every ``>>>`` example in the app packages' docstrings runs and holds.

Parsers and helpers document themselves with sample input (insights-core's
habit); this keeps those samples true. Each module is imported and its
doctests are run with ``doctest``'s default options plus ELLIPSIS and
NORMALIZE_WHITESPACE; a module without examples is skipped quietly."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

from tests.conftest import ROOT, service_unavailable

PACKAGES = ("accounts", "collectors", "config", "integrations", "kb", "triage", "troubleshoot")
SKIP_PARTS = {"migrations", "management"}
# The optional directory sign-in extra (requirements-ldap.txt, `make install-ldap`): a
# module that imports it (accounts.directory) is reported as skipped without it, not a
# collection error that takes every other module's examples down with it.
OPTIONAL_PACKAGES = {"ldap", "django_auth_ldap"}


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        names.append(package)
        for info in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}."):
            if SKIP_PARTS.isdisjoint(info.name.split(".")):
                names.append(info.name)
    return sorted(names)


def _optional_missing(exc: ModuleNotFoundError) -> bool:
    return (exc.name or "").split(".")[0] in OPTIONAL_PACKAGES


def _with_examples(name: str) -> bool:
    """Whether the module has examples; True for one that needs the missing
    optional extra, so that its test says so (and fails in CI)."""
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if _optional_missing(exc):
            return True
        raise
    finder = doctest.DocTestFinder(exclude_empty=True)
    return any(test.examples for test in finder.find(module))


# config's entry points (settings, wsgi, asgi, celery, urls) build the app when
# imported; of config only its helpers are searched.
CONFIG_HELPERS = {"config.pagination", "config.ldap", "config.language"}
MODULES = [name for name in _modules() if not name.startswith("config.") or name in CONFIG_HELPERS]


@pytest.mark.parametrize("name", [n for n in MODULES if _with_examples(n)])
def test_docstring_examples_hold(name):
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if not _optional_missing(exc):
            raise
        service_unavailable(f"{name} needs the directory sign-in packages ({exc}): run `make install-ldap`")
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testmod(module, optionflags=flags, verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples in {name} failed (see output)"


def test_the_examples_are_found():
    # a guard against the collection above silently finding nothing
    assert sum(_with_examples(n) for n in MODULES) >= 10
