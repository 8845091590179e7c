"""Fleet scale (issue 14): a 2,000-host cluster is compared from stored fleet
profiles. Three drifted hosts among 2,000 are named, by the cluster page and
by the analysis of a new member, and no member's upload is parsed again.

The hosts are seed 001's healthy Kunpeng host under 2,000 hostnames
(``bench/cluster.py`` uploads the same hosts through the real stack); the
members are stored as their analysis stores them (``Snapshot.fleet_facts``)
rather than analysed one by one, which the benchmark does.
"""

from __future__ import annotations

import dataclasses

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from bench.cluster import drifted_indexes, host_name, host_transcript
from collectors.archive import load_host_bytes
from collectors.derived.fleet import FleetSummary, fleet_profile, profile_to_json
from engine import run as engine_run
from triage import analysis, cluster, selectors, uploads
from triage.models import Finding, Snapshot

HOSTS = 2000
CLUSTER = "greenplum"


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast test users
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def user(db):
    return get_user_model().objects.create_user("alice", password="pw-alice-123")


@pytest.fixture
def enqueued(monkeypatch):
    """Record enqueues instead of running the (eager) task."""
    calls: list[int] = []
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: calls.append(snapshot_id) or True)
    return calls


def _profile_json(index: int, template, drifted_template) -> dict:
    base = drifted_template if index in drifted_indexes(HOSTS) else template
    name = host_name(index)
    return profile_to_json(dataclasses.replace(base, label=name, hostname=name))


@pytest.fixture
def members(user):
    """2,000 analysed members of one cluster, three with vm.zone_reclaim_mode = 1."""
    parse = [
        load_host_bytes(host_transcript(i, drifted=d).encode(), name="h.txt")
        for i, d in ((1, False), (2, True))
    ]
    template, drifted = (fleet_profile(h) for h in parse)
    rows = [
        Snapshot(
            owner=user,
            label=host_name(i),
            cluster=CLUSTER,
            sha256=f"{i:064x}",
            size=1,
            file=f"snapshots/missing/{host_name(i)}.txt",  # never read: the upload is gone
            status=Snapshot.Status.DONE,
            engine_version=engine_run.ENGINE_VERSION,
            facts={"hostname": host_name(i)},
            fleet_facts=_profile_json(i, template, drifted),
        )
        for i in range(1, HOSTS + 1)
    ]
    Snapshot.objects.bulk_create(rows, batch_size=500)
    return sorted(host_name(i) for i in drifted_indexes(HOSTS))


@pytest.mark.django_db
def test_the_cluster_page_names_the_three_drifted_hosts_among_2000(user, members):
    view = cluster.load_cluster(selectors.visible_snapshots(user), CLUSTER)
    assert len(view.snapshots) == HOSTS  # no cap below 5,000
    assert view.matrix.differing_hosts() == members
    drift = {f.rule: f for f in view.fleet_findings}["fleet.numa_config_drift"]
    assert f"{HOSTS - 3} of {HOSTS} hosts have 0" in drift.explanation
    # the odd hosts, then one host of the majority as the reference
    assert sorted(e.host for e in drift.evidence[:3]) == members
    assert [e.value for e in drift.evidence] == ["1", "1", "1", "0"]


@pytest.mark.django_db
def test_a_new_member_is_compared_with_2000_stored_profiles_without_parsing_them(
    user, members, enqueued, monkeypatch
):
    parsed = []
    real = analysis._load_hosts_facts

    def spy(snapshot, label, **kw):
        parsed.append(snapshot.pk)
        return real(snapshot, label, **kw)

    monkeypatch.setattr(analysis, "_load_hosts_facts", spy)
    data = host_transcript(HOSTS + 1).encode()
    name = host_name(HOSTS + 1)
    snap = uploads.create_snapshot(
        owner=user,
        uploaded_file=SimpleUploadedFile(f"{name}.txt", data),
        filename=f"{name}.txt",
        label=name,
        cluster=CLUSTER,
    )
    done = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    assert done.status == "done", done.last_error
    assert parsed == [snap.pk]  # only the new upload was read
    drift = done.current_findings().get(rule="fleet.numa_config_drift")
    assert f"{HOSTS + 1 - 3} of {HOSTS + 1} hosts have 0" in drift.explanation
    assert sorted(e["host"] for e in drift.evidence[:3]) == members
    # every member carries the cluster's fleet finding, once
    per_member = Finding.objects.filter(
        rule="fleet.numa_config_drift", engine_version=engine_run.ENGINE_VERSION
    )
    assert per_member.count() == HOSTS + 1
    assert per_member.values("snapshot").distinct().count() == HOSTS + 1
    # the members' own analyses are untouched: no per-host rule ran on them
    assert not Finding.objects.exclude(snapshot=snap).exclude(rule__startswith="fleet.").exists()
    assert done.fleet_facts["drift"]["vm.zone_reclaim_mode"]["value"] == "0"


def _analyse_new_member(user, index: int) -> Snapshot:
    name = host_name(index)
    snap = uploads.create_snapshot(
        owner=user,
        uploaded_file=SimpleUploadedFile(f"{name}.txt", host_transcript(index).encode()),
        filename=f"{name}.txt",
        label=name,
        cluster=CLUSTER,
    )
    done = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    assert done.status == "done", done.last_error
    return done


@pytest.mark.django_db
def test_members_read_the_clusters_latest_fleet_finding_without_it_being_rewritten_on_each(
    user, members, enqueued
):
    _analyse_new_member(user, HOSTS + 1)  # the drift finding appears on every member
    rows = Finding.objects.filter(rule="fleet.numa_config_drift")
    before = dict(rows.values_list("snapshot_id", "pk"))
    newest = _analyse_new_member(user, HOSTS + 2)
    # the other members' rows were not written again: only the new member's is new
    after = dict(rows.values_list("snapshot_id", "pk"))
    assert {k: v for k, v in after.items() if k != newest.pk} == before
    assert len(after) == HOSTS + 2
    # ... and yet each member's report says what the latest analysis found
    member = Snapshot.objects.get(label=host_name(1))
    drift = member.current_findings().get(rule="fleet.numa_config_drift")
    assert f"{HOSTS + 2 - 3} of {HOSTS + 2} hosts have 0" in drift.explanation
    assert sorted(e["host"] for e in drift.evidence[:3]) == members
    assert member.current_findings().count() == 1  # its own fleet finding, once


def _summary_built_anew(snapshot: Snapshot) -> FleetSummary:
    """The fleet summary of the snapshot's cluster as its analysis compares it,
    built anew from the stored profiles."""
    siblings = selectors.siblings_among(selectors.cluster_member_rows(snapshot), own_host=snapshot.host_key)
    labels = selectors.unique_labels([snapshot, *siblings])
    stored = {s.pk: s.fleet_profile() for s in Snapshot.objects.filter(pk__in=[m.pk for m in siblings])}
    summary = FleetSummary()
    for member in siblings:
        summary.add(member.pk, analysis._member_order(member), labels[member.pk], stored[member.pk])
    return summary


def _drifted_named(snapshot: Snapshot) -> list[str]:
    drift = snapshot.current_findings().get(rule="fleet.numa_config_drift")
    return sorted(e["host"] for e in drift.evidence if e["value"] == "1")


@pytest.mark.django_db
def test_a_host_uploaded_again_replaces_it_in_the_kept_summary(user, members, enqueued):
    assert _drifted_named(_analyse_new_member(user, HOSTS + 1)) == members
    # the host in the middle of the run is fixed and uploaded again
    fixed = host_name(HOSTS // 2)
    again = uploads.create_snapshot(
        owner=user,
        uploaded_file=SimpleUploadedFile(f"{fixed}.txt", host_transcript(HOSTS // 2).encode()),
        filename=f"{fixed}.txt",
        label=fixed,
        cluster=CLUSTER,
    )
    done = analysis.analyze_snapshot_now(snapshot_id=again.pk)
    assert _drifted_named(done) == [m for m in members if m != fixed]
    newest = _analyse_new_member(user, HOSTS + 2)
    assert _drifted_named(newest) == [m for m in members if m != fixed]
    kept = analysis._SUMMARIES[(CLUSTER, user.pk, None)]
    assert kept.canonical() == _summary_built_anew(newest).canonical()
    assert len(kept.members) == HOSTS + 1  # the older snapshot of the fixed host is not compared


@pytest.mark.django_db
def test_a_member_finishing_during_an_analysis_is_in_the_summary_of_its_second_round(
    user, members, enqueued, monkeypatch
):
    real = analysis._compute
    late = host_name(HOSTS + 2)

    def compute(snapshot):
        run = real(snapshot)
        if not Snapshot.objects.filter(label=late).exists():
            # another worker finishes a drifted member meanwhile
            template = Snapshot.objects.get(label=host_name(HOSTS // 2))
            profile = dataclasses.replace(template.fleet_profile(), label=late, hostname=late)
            Snapshot.objects.create(
                owner=user,
                label=late,
                cluster=CLUSTER,
                sha256=f"{HOSTS + 2:064x}",
                size=1,
                file=f"snapshots/missing/{late}.txt",
                status=Snapshot.Status.DONE,
                engine_version=engine_run.ENGINE_VERSION,
                facts={"hostname": late},
                fleet_facts=profile_to_json(profile),
                finished_at=timezone.now(),
            )
        return run

    monkeypatch.setattr(analysis, "_compute", compute)
    done = _analyse_new_member(user, HOSTS + 1)
    assert _drifted_named(done) == sorted([*members, late])
    assert (
        f"{HOSTS + 2 - 4} of {HOSTS + 2} hosts have 0"
        in done.current_findings().get(rule="fleet.numa_config_drift").explanation
    )
    assert analysis._SUMMARIES[(CLUSTER, user.pk, None)].canonical() == _summary_built_anew(done).canonical()
