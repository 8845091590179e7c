"""A Kunpeng cluster of N hosts for the rule-page tests: the founding
``gp-sdw01`` transcript (tests/fixtures/seeds/kunpeng-stream-zone-reclaim,
rebuilt from seed 001, whose cluster had 18 such nodes) uploaded once per
host with its prompts naming that host (``gp-sdw01`` -> ``gp-sdwNN``), each
analysed by the real loader and engine."""

from __future__ import annotations

from tests.conftest import FIXTURES

SDW01 = FIXTURES / "seeds" / "kunpeng-stream-zone-reclaim" / "before" / "gp-sdw01.txt"
# what every host's transcript shows: remote/local NUMA distance 32/10
RULE = "numa.high_remote_distance"


def host_name(i: int) -> str:
    return f"gp-sdw{i:02d}"


def upload_fleet(owner, n: int, *, cluster: str = "kunpeng-stream") -> list:
    """``n`` hosts uploaded to ``cluster``; every upload is analysed (the
    cluster analysis of the last one sees all of them)."""
    from triage import analysis, uploads
    from triage.models import Snapshot

    text = SDW01.read_text(encoding="utf-8")
    snaps = []
    for i in range(1, n + 1):
        name = host_name(i)
        snap = uploads.create_snapshot(
            owner=owner,
            data=text.replace("gp-sdw01", name).encode(),
            filename=f"{name}.txt",
            label=name,
            cluster=cluster,
        )
        snaps.append(snap)
    for snap in snaps:
        analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    return list(Snapshot.objects.filter(pk__in=[s.pk for s in snaps]).order_by("pk"))
