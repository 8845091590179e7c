"""The snapshot list, the dashboard and the wizard's snapshots step load only
the columns they show: at 512 snapshots with real facts JSON, no query selects
the facts and rendering stays within +20 MB (tracemalloc). Timings are in
bench/pages.py and docs/performance.md, not here."""

from __future__ import annotations

import hashlib
import tracemalloc

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from config.pagination import PER_PAGE
from tests.conftest import FIXTURES
from triage import analysis, uploads
from triage.models import Snapshot

pytestmark = pytest.mark.django_db

TRANSCRIPT = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before"
COUNT = 512
# (not_checked is read: at most one short entry per rule, and the list shows its count)
HEAVY_COLUMNS = ("facts", "similar_cases", "extra_hosts", "skipped")


@pytest.fixture
def engineer(django_user_model, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return django_user_model.objects.create_user("many", password="pw-many-12345")


@pytest.fixture
def many_snapshots(engineer):
    """512 snapshots carrying the facts of a real analysed host (a founding
    incident), each padded with the host's own facts repeated: ~200 KB of JSON."""
    source = sorted(TRANSCRIPT.iterdir())[0]
    first = uploads.create_snapshot(owner=engineer, data=source.read_bytes(), filename=source.name)
    analysis.analyze_snapshot_now(snapshot_id=first.pk, force=True)
    first.refresh_from_db()
    assert first.status == Snapshot.Status.DONE and first.facts
    facts = {**first.facts, "padding": [first.facts] * 8}
    rows = []
    for i in range(1, COUNT):
        rows.append(
            Snapshot(
                owner=engineer,
                label=f"host-{i:03d}",
                cluster=f"rack-{i % 16}",
                original_filename=source.name,
                sha256=hashlib.sha256(f"{i}".encode()).hexdigest(),
                size=first.size,
                file=first.file.name,
                status=Snapshot.Status.DONE,
                engine_version=first.engine_version,
                facts=facts,
                similar_cases=first.similar_cases,
            )
        )
    Snapshot.objects.bulk_create(rows, batch_size=64)
    return Snapshot.objects.filter(owner=engineer)


def _render(client, url):
    """The page, its SQL, and the peak Python memory it took."""
    client.get(url)  # warm: templates, translations, URL resolvers
    tracemalloc.start()
    try:
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert response.status_code == 200
    return response, [q["sql"] for q in queries.captured_queries], peak


def _selects_heavy_columns(sql_list):
    return [
        sql
        for sql in sql_list
        if "triage_snapshot" in sql and any(f'"triage_snapshot"."{c}"' in sql for c in HEAVY_COLUMNS)
    ]


def test_snapshot_list_reads_no_facts(client, engineer, many_snapshots):
    client.force_login(engineer)
    response, sql, peak = _render(client, reverse("triage:snapshot_list"))
    html = response.content.decode()
    # One full page (the list is paged now, not cut at 200) and the way to the others.
    assert html.count("<tr>") == PER_PAGE + 1  # the header row and one row a snapshot
    assert f"Page 1 of {-(-COUNT // PER_PAGE)} ({COUNT} in all)" in html
    assert not _selects_heavy_columns(sql)
    assert peak < 20 << 20, f"{peak / 2**20:.1f} MiB"


def test_dashboard_reads_no_facts(client, engineer, many_snapshots):
    client.force_login(engineer)
    _response, sql, peak = _render(client, reverse("dashboard"))
    assert not _selects_heavy_columns(sql)
    assert peak < 20 << 20, f"{peak / 2**20:.1f} MiB"


def test_wizard_snapshots_step_reads_no_facts(client, engineer, many_snapshots):
    from troubleshoot import lifecycle, snapshots

    session = lifecycle.create_session(owner=engineer, title="512 hosts")
    for snap in many_snapshots.order_by("pk")[:24]:
        snapshots.attach_snapshot(session=session, user=engineer, snapshot=snap)
    client.force_login(engineer)
    url = reverse("troubleshoot:step", args=[session.pk, "snapshots"])
    response, sql, peak = _render(client, url)
    html = response.content.decode()
    assert html.count("<option") >= COUNT - 24  # the attach picker lists the others
    assert html.count("data-snapshot=") >= 24
    assert not _selects_heavy_columns(sql)
    assert peak < 20 << 20, f"{peak / 2**20:.1f} MiB"
