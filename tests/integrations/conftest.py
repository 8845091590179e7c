import pytest

# The real-process harness of the pipeline tests (gunicorn, redis-server, workers).
from tests.browser.test_login_language import browser_page  # noqa: F401
from tests.integrations.receiver import Receiver
from tests.processes.test_pipeline_worker import stack, web  # noqa: F401


@pytest.fixture
def receiver():
    r = Receiver().start()
    yield r
    r.stop()
