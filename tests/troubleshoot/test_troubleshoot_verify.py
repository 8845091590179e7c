"""Issue 25 point 1: the verify step says "cleared" only for a rule the
after-snapshot checked (DESIGN.md "What a result claims")."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.troubleshoot.conftest import SEEDS
from triage import analysis
from troubleshoot import apply, effectiveness, lifecycle, planning, snapshots, verify

pytestmark = pytest.mark.django_db
KUNPENG = SEEDS / "kunpeng-stream-zone-reclaim"


def lscpu_and_numactl_only(path: Path) -> str:
    """The host's after-snapshot as the engineer pasted it: lscpu and numactl -H
    alone (memory unchanged, nothing else)."""
    text = path.read_text(encoding="utf-8")
    start = text.index("[root@gp-sdw03 ~]# lscpu")
    end = text.index("[root@gp-sdw03 ~]# cat /sys/devices/system/node/node0/meminfo")
    return text[start:end]


def kunpeng_session(teams, *, after_text: str | None = None):
    alice = teams["alice"]
    session = lifecycle.create_session(
        owner=alice,
        title="STREAM slow on gp-sdw03",
        symptom="STREAM 6000 MB/s against 15000 on other hosts",
        metric_name="STREAM Triad",
        metric_unit="MB/s",
        metric_baseline=6000.0,
    )
    before = KUNPENG / "before" / "gp-sdw03.txt"
    snap = snapshots.upload_snapshot(
        session=session,
        user=alice,
        uploaded_file=SimpleUploadedFile(before.name, before.read_bytes()),
        phase="before",
    )
    analysis.analyze_snapshot_now(snapshot_id=snap.pk, force=True)
    text = after_text if after_text is not None else lscpu_and_numactl_only(before)
    after = snapshots.upload_snapshot(
        session=session,
        user=alice,
        uploaded_file=SimpleUploadedFile("gp-sdw03.txt", text.encode()),
        phase="after",
    )
    analysis.analyze_snapshot_now(snapshot_id=after.pk, force=True)
    session.refresh_from_db()
    return session, after


def test_rules_the_after_snapshot_could_not_check_are_not_cleared(teams, founding_cases, media, no_queue):
    session, after = kunpeng_session(teams)
    result = verify.verification(session)
    cleared = {f.rule for f in result["cleared"]}
    unverified = {item["rule"]: item for item in result["unverified"]}
    assert "numa.local_node_pagecache_pressure" in unverified
    assert "numa.local_node_pagecache_pressure" not in cleared
    item = unverified["numa.local_node_pagecache_pressure"]
    assert item["snapshot"].pk == after.pk
    assert "cat /sys/devices/system/node/node*/meminfo" in item["commands"]
    assert "sysctl vm.zone_reclaim_mode" in item["commands"]
    # nothing is cleared that the after-snapshot did not check
    for rule in cleared:
        assert rule in after.checked


def test_a_rule_checked_again_and_quiet_is_cleared(teams, founding_cases, media, no_queue):
    after_text = (KUNPENG / "after" / "gp-sdw03.txt").read_text(encoding="utf-8")
    session, _after = kunpeng_session(teams, after_text=after_text)
    result = verify.verification(session)
    assert "numa.local_node_pagecache_pressure" in {f.rule for f in result["cleared"]}
    assert not result["unverified"]


def test_effectiveness_counts_only_real_clears(teams, founding_cases, media, no_queue):
    session, _after = kunpeng_session(teams)
    alice = teams["alice"]
    pm = planning.plan_measure(session=session, user=alice, slug="zone-reclaim-mode")
    apply.record_application(session=session, user=alice, pm=pm, status="applied", metric_after=15000.0)
    lifecycle.close_session(
        session=session, user=alice, outcome="resolved", root_cause="page cache", lessons=""
    )
    stats = effectiveness.effectiveness(with_clears=True)["zone-reclaim-mode"]
    assert stats["cleared"] == 0 and stats["not_rechecked"] == 1
