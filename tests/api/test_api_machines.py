"""The report and the API say what a paste could not claim (issue 25): the
machines the loader split off, and the domain XML the paste cut."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.collectors.test_machines import two_numactl_paste
from tests.engine.test_partial import cut_after_vcpupin_23
from triage import analysis, uploads

pytestmark = pytest.mark.django_db


def test_split_paste_and_cut_xml_in_api_and_report(world, no_queue):
    owner = world.users["engineer_a"]
    api = world.api("engineer_a")
    snap = uploads.create_snapshot(owner=owner, data=two_numactl_paste(), filename="page.txt", label="page")
    analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    data = api.get(f"/api/v1/snapshots/{snap.pk}/").json()
    assert len(data["hosts"]) == 2
    first, second = data["hosts"]
    assert first["split_reason"] is None and first["conflicts"] == [] and first["cut_domains"] == []
    assert "NUMA nodes differ" in second["split_reason"]
    assert "numa.high_remote_distance" in [f["rule"] for f in data["findings"]]

    cut = uploads.create_snapshot(
        owner=owner, data=cut_after_vcpupin_23().encode(), filename="cut.txt", label="cut"
    )
    analysis.analyze_snapshot_now(snapshot_id=cut.pk)
    data = api.get(f"/api/v1/snapshots/{cut.pk}/").json()
    (host,) = data["hosts"]
    assert host["cut_domains"] == [
        {
            "domain": "8c1f5e2a0d9b4c6e9f3a7b2d1e4c6a80",
            "cut_in": "cputune",
            "truncated_after": "vcpupin vcpu='23' cpuset='47'",
        }
    ]
    reasons = {n["rule"]: n["reason"] for n in data["not_checked"]}
    assert "is cut after <cputune>" in reasons["kvm.emulator_unpinned"]
    assert "kvm.emulator_unpinned" not in [f["rule"] for f in data["findings"]]
    web = Client()
    web.force_login(owner)
    page = web.get(f"/snapshots/{cut.pk}/").content.decode()
    assert "is cut by the paste (inside &lt;cputune&gt;)" in page
