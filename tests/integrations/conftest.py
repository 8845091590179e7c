import pytest

# The real-process harness of the pipeline tests (gunicorn, redis-server, workers).
from tests.browser.test_login_language import browser_page  # noqa: F401
from tests.integration.test_pipeline_worker import stack, web  # noqa: F401
from tests.integrations.receiver import Receiver


@pytest.fixture
def receiver(settings):
    """The test's own receiver on 127.0.0.1, listed as an internal receiver
    (loopback is refused unless listed: tests/integrations/test_integrations_addresses.py)."""
    settings.CASEBOOK_WEBHOOK_ALLOW = ["127.0.0.1/32"]
    r = Receiver().start()
    yield r
    r.stop()
