import pytest

from tests.api.world import build_world
from triage import uploads


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def no_queue(monkeypatch):
    """Uploads stay ``queued``: tests analyse in-process where they say so."""
    calls = []
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: calls.append(snapshot_id) or True)
    return calls


@pytest.fixture
def world(db, django_user_model, media, no_queue):
    return build_world(django_user_model)
