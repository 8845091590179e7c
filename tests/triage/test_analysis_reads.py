"""Issue 24, "one read of each upload": an analysis opens each stored file
once (the upload, each added artifact), keeps what it needs of them (cited
lines, prose, the archive's kind) from that read, and calls the storage
never while it writes (inside the transaction that holds the cluster's
advisory lock and the row locks)."""

from __future__ import annotations

import io
import tarfile
from collections import Counter

import pytest
from django.contrib.auth import get_user_model
from django.db import connection

from tests.conftest import FIXTURES, ROOT
from tests.triage.founding_gaps import GAPS
from tests.triage.test_analysis import RemoteLikeStorage
from triage import analysis, uploads
from triage.models import Snapshot

pytestmark = pytest.mark.django_db

ZSTACK = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before" / "zstack-9.txt"


class CountingStorage(RemoteLikeStorage):
    """A remote-like storage (no local paths) that counts the files opened
    and fails when it is called inside a transaction opened after it was
    ``armed`` (the test's own transaction is the baseline)."""

    opens: Counter[str] = Counter()
    armed_at: int | None = None

    def _check(self, what: str, name: str) -> None:
        base = CountingStorage.armed_at
        if base is not None and len(connection.atomic_blocks) > base:
            raise AssertionError(f"storage {what}({name!r}) inside a transaction")

    def _open(self, name, mode="rb"):
        self._check("open", name)
        if CountingStorage.armed_at is not None:
            CountingStorage.opens[name] += 1
        return super()._open(name, mode)

    def exists(self, name):
        self._check("exists", name)
        return super().exists(name)

    def size(self, name):
        self._check("size", name)
        return super().size(name)


@pytest.fixture
def storage(settings):
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {"BACKEND": f"{__name__}.CountingStorage"},
    }
    CountingStorage.opens = Counter()
    CountingStorage.armed_at = None
    yield CountingStorage
    CountingStorage.armed_at = None


@pytest.fixture
def user(db, settings):
    return get_user_model().objects.create_user("alice", password="pw-alice-123")


@pytest.fixture(autouse=True)
def enqueued(monkeypatch):
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)


def analyse(storage, snapshot_id: int) -> Snapshot:
    storage.opens = Counter()
    storage.armed_at = len(connection.atomic_blocks)
    try:
        done = analysis.analyze_snapshot_now(snapshot_id=snapshot_id)
    finally:
        storage.armed_at = None
    assert done is not None and done.status == "done", done and done.last_error
    return done


def test_a_transcript_is_opened_once_and_its_cited_lines_kept(storage, user):
    snap = uploads.create_snapshot(owner=user, data=ZSTACK.read_bytes(), filename="zstack-9.txt")
    done = analyse(storage, snap.pk)
    assert dict(storage.opens) == {snap.file.name: 1}
    hotplug = done.findings.get(rule="kvm.vcpu_hotplug_enabled")
    assert any(row["hit"] for row in hotplug.evidence[0]["excerpt"])


def test_an_upload_and_its_added_evidence_are_each_opened_once(storage, user):
    gap = GAPS[4]
    text, block = gap.split()
    snap = uploads.create_snapshot(owner=user, data=text.encode(), filename=gap.host_file)
    analyse(storage, snap.pk)
    artifact = uploads.add_artifact(snapshot=snap, user=user, data=block.encode())
    done = analyse(storage, snap.pk)
    assert dict(storage.opens) == {snap.file.name: 1, artifact.file.name: 1}
    assert gap.rule in set(done.current_findings().values_list("rule", flat=True))


def test_an_archive_is_told_a_sosreport_from_the_one_read(storage, user):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        data = b"CPU(s): 4\nSocket(s): 1\n"
        info = tarfile.TarInfo("sosreport-db1/sos_commands/processor/lscpu")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    snap = uploads.create_snapshot(owner=user, data=buf.getvalue(), filename="db1.tar.gz")
    assert snap.kind == Snapshot.Kind.COLLECTOR  # from its name and first bytes
    done = analyse(storage, snap.pk)
    assert done.kind == Snapshot.Kind.SOSREPORT
    assert dict(storage.opens) == {snap.file.name: 1}


def test_a_prose_upload_is_matched_by_its_text_from_the_one_read(storage, user):
    text = (ROOT / "tests" / "evaluation" / "36-oceanbase-cpu-quota-prose-zh" / "question.txt").read_bytes()
    snap = uploads.create_snapshot(owner=user, data=text, filename="question.txt")
    analyse(storage, snap.pk)
    assert dict(storage.opens) == {snap.file.name: 1}
