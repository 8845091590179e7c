"""The browser tests' shared page fixture (tests/chromium.py)."""

from tests.chromium import browser_page  # noqa: F401
