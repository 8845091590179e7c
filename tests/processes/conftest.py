"""The process tests' users sign in to servers in other processes (gunicorn,
Celery workers), which hash with the project's real hashers only: their
passwords are hashed with those, not the fast one of the rest of the suite
(tests/conftest.py). The ``stack`` and ``web`` fixtures of the real-process
harness (tests/processes/harness.py) serve every test of this folder."""

from __future__ import annotations

import pytest

from tests.conftest import FAST_HASHER
from tests.processes.harness import stack, web  # noqa: F401


@pytest.fixture(autouse=True)
def _real_password_hashing(settings):
    settings.PASSWORD_HASHERS = [h for h in settings.PASSWORD_HASHERS if h != FAST_HASHER]
