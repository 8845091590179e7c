"""Merged findings of a session read every attached snapshot's findings in
one query, whatever the number of hosts (no query per snapshot), and find
what each snapshot's own findings say."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.troubleshoot.conftest import SEEDS, upload_folder
from troubleshoot import findings, snapshots

pytestmark = pytest.mark.django_db


def _queries(session, phase: str) -> tuple[int, list]:
    with CaptureQueriesContext(connection) as ctx:
        merged = findings.merged_findings(session, phase)
    return len(ctx.captured_queries), merged


def test_merged_findings_query_count_does_not_grow_with_the_hosts(zstack_session, teams):
    before_queries, before = _queries(zstack_session, "before")
    upload_folder(zstack_session, teams["alice"], SEEDS / "zstack-mariadb-v2v" / "after", "after")
    assert len(snapshots.snapshots_of(zstack_session)) == 4
    all_queries, merged = _queries(zstack_session, "")
    assert all_queries == before_queries == 2  # the attachments, then their findings

    # the same rules, hosts and snapshots as each snapshot's own current findings
    own = [f for snap in snapshots.snapshots_of(zstack_session) for f in snap.current_findings()]
    assert {m.rule for m in merged} == {f.rule for f in own}
    for m in merged:
        assert set(m.snapshot_ids) == {f.snapshot_id for f in own if f.rule == m.rule}
        assert set(m.hosts) == {f.host or f.snapshot.host_label for f in own if f.rule == m.rule}
    assert {m.rule for m in before} <= {m.rule for m in merged}
