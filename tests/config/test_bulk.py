"""config.bulk.insert_rows: COPY on PostgreSQL (the suite's database in CI),
bulk_create elsewhere; the rows read back are those bulk_create writes, text
that COPY's format must escape (tabs, newlines, backslashes, ``\\N``) and JSON
included."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from config.bulk import insert_rows
from desk.models import InboxItem
from triage import uploads
from triage.models import Finding, Snapshot

pytestmark = pytest.mark.django_db

AWKWARD = "tab\there\nnew line \\ backslash \\N null marker, 中文, 'quote' \"double\""


def _finding(snapshot, n: int) -> Finding:
    return Finding(
        snapshot=snapshot,
        rule="kvm.host_contention",
        severity="warning",
        host=f"vm-{n}",
        title=AWKWARD,
        title_zh="宿主机 CPU 争用",
        explanation=AWKWARD * 3,
        evidence=[{"fact": "domains", "value": AWKWARD, "lines": [1, 2], "none": None}],
        measures=["pin-vcpus"],
        impact=0.25 * n,
        engine_version="6",
    )


def _columns(rows):
    names = [
        f.attname for f in Finding._meta.concrete_fields if not f.primary_key and f.attname != "snapshot_id"
    ]
    return sorted(tuple(getattr(r, n) for n in names) for r in rows)


def test_rows_read_back_as_bulk_create_writes_them(settings, tmp_path, monkeypatch):
    settings.MEDIA_ROOT = tmp_path
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    owner = get_user_model().objects.create_user("bulk", password="pw-bulk-12345")
    a = uploads.create_snapshot(owner=owner, data=b"$ nproc\n4\n", filename="a.txt")
    b = uploads.create_snapshot(owner=owner, data=b"$ nproc\n8\n", filename="b.txt")
    assert insert_rows(Finding, [_finding(a, n) for n in range(50)]) == 50
    Finding.objects.bulk_create([_finding(b, n) for n in range(50)])
    assert _columns(Finding.objects.filter(snapshot=a)) == _columns(Finding.objects.filter(snapshot=b))
    assert Finding.objects.filter(snapshot=a, title=AWKWARD).count() == 50
    assert insert_rows(Finding, []) == 0
    assert Snapshot.objects.count() == 2


def test_auto_now_add_is_filled(django_user_model):
    user = django_user_model.objects.create_user("inbox", password="pw-inbox-12345")
    insert_rows(InboxItem, [InboxItem(user=user, kind="mention", title="t", url="/", key="k")])
    assert InboxItem.objects.get().created_at is not None
