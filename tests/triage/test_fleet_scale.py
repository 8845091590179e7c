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
from collectors.archive import load
from collectors.derived.fleet import FleetSummary, fleet_profile, profile_to_json
from engine import run as engine_run
from triage import analysis, cluster, selectors, uploads
from triage.models import Finding, Snapshot

HOSTS = 2000
CLUSTER = "greenplum"


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
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
        load(host_transcript(i, drifted=d).encode(), name="h.txt", split=False).host
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
    real = analysis._read_upload

    def spy(snapshot, label, **kw):
        parsed.append(snapshot.pk)
        return real(snapshot, label, **kw)

    monkeypatch.setattr(analysis, "_read_upload", spy)
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
    # the new member has the majority's value: the finding is not its (issue 25)
    assert not done.current_findings().filter(rule="fleet.numa_config_drift").exists()
    odd = Snapshot.objects.get(label=members[0])
    drift = odd.current_findings().get(rule="fleet.numa_config_drift")
    assert f"{HOSTS + 1 - 3} of {HOSTS + 1} hosts have 0" in drift.explanation
    assert sorted(e["host"] for e in drift.evidence[:3]) == members
    # the three drifted members carry the cluster's fleet finding, once each
    per_member = Finding.objects.filter(
        rule="fleet.numa_config_drift", engine_version=engine_run.ENGINE_VERSION
    )
    assert sorted(per_member.values_list("snapshot__label", flat=True)) == members
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
def test_members_read_the_clusters_latest_fleet_finding_and_only_the_drifted_ones_hold_it(
    user, members, enqueued
):
    _analyse_new_member(user, HOSTS + 1)  # the drift finding appears on the drifted members
    rows = Finding.objects.filter(rule="fleet.numa_config_drift")
    drifted = set(Snapshot.objects.filter(label__in=members).values_list("pk", flat=True))
    assert set(rows.values_list("snapshot_id", flat=True)) == drifted
    newest = _analyse_new_member(user, HOSTS + 2)
    # the rows stay the drifted members' only: not the new member's, nor the others'
    assert set(rows.values_list("snapshot_id", flat=True)) == drifted
    assert newest.pk not in drifted
    # ... and each drifted member's report says what the latest analysis found
    member = Snapshot.objects.get(label=members[0])
    drift = member.current_findings().get(rule="fleet.numa_config_drift")
    assert f"{HOSTS + 2 - 3} of {HOSTS + 2} hosts have 0" in drift.explanation
    assert sorted(e["host"] for e in drift.evidence[:3]) == members
    assert member.current_findings().count() == 1  # its own fleet finding, once
    # a member with the majority's value has none
    assert not Snapshot.objects.get(label=host_name(1)).current_findings().exists()


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
    """The hosts the drift finding of ``snapshot``'s analysis names (read from
    a member it blames: the finding is theirs, issue 25)."""
    newest = Finding.objects.filter(rule="fleet.numa_config_drift", snapshot__cluster=snapshot.cluster)
    holder = newest.order_by("-pk").first().snapshot
    drift = holder.current_findings().get(rule="fleet.numa_config_drift")
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
    real = analysis._read_and_run_rules
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

    monkeypatch.setattr(analysis, "_read_and_run_rules", compute)
    done = _analyse_new_member(user, HOSTS + 1)
    assert _drifted_named(done) == sorted([*members, late])
    holder = Snapshot.objects.get(label=late)
    assert (
        f"{HOSTS + 2 - 4} of {HOSTS + 2} hosts have 0"
        in holder.current_findings().get(rule="fleet.numa_config_drift").explanation
    )
    assert analysis._SUMMARIES[(CLUSTER, user.pk, None)].canonical() == _summary_built_anew(done).canonical()
