"""Fixtures of the wizard tests: engineers in teams, support staff, the founding
cases, and sessions whose snapshots are the rebuilt founding incidents,
analysed by the real loader and engine."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.conftest import FIXTURES
from triage import analysis, uploads

SEEDS = FIXTURES / "seeds"


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


@pytest.fixture
def founding_cases(db):
    from kb.services import load_all

    load_all()


@pytest.fixture
def teams(db, django_user_model):
    """alice and bob in team "db", carol in team "net", sam support in "support"."""
    from accounts.models import Membership, Team

    db_team = Team.objects.create(name="DB", slug="db")
    net_team = Team.objects.create(name="Net", slug="net")
    support_team = Team.objects.create(name="Support", slug="support")
    users = {}
    for name, team, role in (
        ("alice", db_team, "engineer"),
        ("bob", db_team, "engineer"),
        ("carol", net_team, "engineer"),
        ("sam", support_team, "support"),
    ):
        users[name] = django_user_model.objects.create_user(name, password=f"{name}-password-1")
        Membership.objects.create(user=users[name], team=team, role=role)
    return users


def upload_folder(session, user, folder: Path, phase: str):
    """Upload every host file of a fixture folder into the session and analyse
    them in this process, the way the eager Celery task would."""
    from troubleshoot import snapshots

    snaps = []
    for path in sorted(folder.iterdir()):
        upload = SimpleUploadedFile(path.name, path.read_bytes())
        snaps.append(snapshots.upload_snapshot(session=session, user=user, uploaded_file=upload, phase=phase))
    for snap in snaps:
        analysis.analyze_snapshot_now(snapshot_id=snap.pk, force=True)
    return snaps


@pytest.fixture
def no_queue(monkeypatch):
    """Analysis runs where the test says, not on commit."""
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)


@pytest.fixture
def zstack_session(teams, founding_cases, media, no_queue):
    from troubleshoot import lifecycle

    alice = teams["alice"]
    session = lifecycle.create_session(
        owner=alice,
        title="MariaDB slow after v2v migration",
        symptom="CREATE INDEX takes about 120 s in the migrated guest, expected 30-60 s",
        workload="MariaDB 10.4 OLTP",
        platform="ZStack 4.2.16",
        database="MariaDB 10.4.14",
        metric_name="CREATE INDEX duration",
        metric_unit="s",
        metric_baseline=120.0,
        metric_expected="30-60 s",
    )
    upload_folder(session, alice, SEEDS / "zstack-mariadb-v2v" / "before", "before")
    session.refresh_from_db()
    return session
