"""Issue 13: lists are newest first everywhere and paged instead of cut at a
cap. With 250 snapshots (more than the old 200-row cap), the snapshot list
pages through all of them newest first, the dashboard's "Recent snapshots"
shows the newest uploads, and a filter keeps its parameters across pages.
A query with aggregates (the findings counts) ignores ``Meta.ordering``,
which once listed them oldest first; these tests would catch it again."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone

from config.pagination import PER_PAGE
from triage.models import Finding, Snapshot

pytestmark = pytest.mark.django_db

COUNT = 250
BASE = timezone.make_aware(dt.datetime(2026, 1, 1, 8, 0))


@pytest.fixture
def alice(settings):
    return get_user_model().objects.create_user("alice", password="pw-alice-123")


def add_snapshots(owner, *, base, count: int = COUNT) -> None:
    """``count`` finished snapshots ``host-000`` ... uploaded a minute apart
    from ``base``, inserted in a shuffled order so neither the primary key nor
    the insertion order gives the newest first; clusters "even" and "odd";
    every tenth one has a critical finding (counted by the list)."""
    order = [(i * 97) % count for i in range(count)]  # a permutation (97 is prime to 250)
    rows = [
        Snapshot(
            owner=owner,
            label=f"host-{i:03d}",
            cluster="even" if i % 2 == 0 else "odd",
            original_filename=f"host-{i:03d}.txt",
            sha256=f"{i:064x}",
            size=10,
            file=f"snapshots/host-{i:03d}.txt",
            status=Snapshot.Status.DONE,
            engine_version="1",
        )
        for i in order
    ]
    Snapshot.objects.bulk_create(rows)
    for snap in Snapshot.objects.filter(owner=owner, label__startswith="host-"):
        n = int(snap.label.split("-")[1])
        Snapshot.objects.filter(pk=snap.pk).update(created_at=base + dt.timedelta(minutes=n))
        if n % 10 == 0:
            Finding.objects.create(
                snapshot=snap, rule="kvm.vcpus_unpinned", severity="critical", title="t", engine_version="1"
            )


@pytest.fixture
def many(alice):
    add_snapshots(alice, base=BASE)
    return alice


def _labels(html: str) -> list[str]:
    return re.findall(r">(host-\d{3})</a>", html)


def test_snapshot_list_pages_through_all_newest_first(client, many):
    client.force_login(many)
    url = reverse("triage:snapshot_list")
    seen = []
    page = 1
    while True:
        html = client.get(url, {"page": page}).content.decode()
        labels = _labels(html)
        assert len(labels) == min(PER_PAGE, COUNT - len(seen))
        seen += labels
        if 'rel="next"' not in html:
            break
        page += 1
    assert page == 5
    assert seen == [f"host-{i:03d}" for i in reversed(range(COUNT))]
    # Counts still come with the rows (the aggregate that dropped the ordering).
    first = client.get(url).content.decode()
    assert first.count('<span class="badge badge-critical" title="Critical">1</span>') == 5
    assert "Page 1 of 5 (250 in all)" in first


def test_filters_are_kept_across_pages(client, many):
    client.force_login(many)
    url = reverse("triage:snapshot_list")
    html = client.get(url, {"cluster": "odd"}).content.decode()
    assert _labels(html)[:3] == ["host-249", "host-247", "host-245"]
    assert 'href="?cluster=odd&amp;page=2"' in html
    page3 = client.get(url, {"cluster": "odd", "page": 3}).content.decode()
    assert _labels(page3) == [f"host-{i:03d}" for i in reversed(range(1, 50, 2))]
    assert 'rel="next"' not in page3
    # Past the end or malformed: the last or the first page, never an error.
    assert _labels(client.get(url, {"cluster": "odd", "page": 99}).content.decode()) == _labels(page3)
    assert client.get(url, {"page": "x"}).status_code == 200


def test_dashboard_shows_the_newest_uploads(client, many):
    client.force_login(many)
    html = client.get(reverse("dashboard")).content.decode()
    assert _labels(html) == [f"host-{i:03d}" for i in range(249, 239, -1)]
    older = client.get(reverse("dashboard"), {"recent": 2}).content.decode()
    assert _labels(older) == [f"host-{i:03d}" for i in range(239, 229, -1)]


def test_a_new_upload_tops_the_lists(client, many, settings, tmp_path, monkeypatch):
    from triage import uploads

    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    uploads.create_snapshot(owner=many, data=b"$ uptime\n", filename="fresh.txt", label="host-new")
    client.force_login(many)
    for url in (reverse("triage:snapshot_list"), reverse("dashboard")):
        html = client.get(url).content.decode()
        assert re.findall(r">(host-[\w]{3})</a>", html)[0] == "host-new", url
