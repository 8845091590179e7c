import pytest

from accounts.models import Membership, Team

# The real-process harness of the pipeline tests (gunicorn, redis-server, workers).
from tests.chromium import browser_page  # noqa: F401
from tests.integrations.receiver import Receiver
from tests.processes.harness import stack, web  # noqa: F401


@pytest.fixture
def receiver(settings):
    """The test's own receiver on 127.0.0.1, listed as an internal receiver
    (loopback is refused unless listed: tests/integrations/test_integrations_addresses.py)."""
    settings.CASEBOOK_WEBHOOK_ALLOW = ["127.0.0.1/32"]
    r = Receiver().start()
    yield r
    r.stop()


@pytest.fixture
def people(db, django_user_model, settings):
    """alice, bob and carol of team DB, each with an e-mail address (the inbox tests)."""
    settings.CASEBOOK_BASE_URL = "https://casebook.example.com"
    team = Team.objects.create(name="DB", slug="db")
    users = {}
    for name in ("alice", "bob", "carol"):
        users[name] = django_user_model.objects.create_user(name, f"{name}@example.com", "pass-123-xyz")
        Membership.objects.create(user=users[name], team=team)
    return users
