"""Retro-scans (issue 27): a published case or a new or changed rule is
matched against the newest stored snapshot of every host, from the stored
facts, in bounded batches that resume after a dead worker; the case and rule
pages list the hosts the reader may see; the teams are told once."""

from __future__ import annotations

import pytest
from django.urls import reverse

from accounts.models import Membership, Team
from desk.models import InboxItem
from integrations import services as integrations
from integrations.models import Delivery, Event
from kb import retroscans
from kb.models import Case, HostMatch, RetroScan, RuleCatalogue
from kb.services import save_case
from tests.conftest import FIXTURES
from triage import analysis, leases, retroscan, uploads
from triage.models import Snapshot

pytestmark = pytest.mark.django_db

ZSTACK = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before" / "zstack-9.txt"
KUNPENG = FIXTURES / "seeds" / "kunpeng-stream-zone-reclaim" / "before" / "gp-sdw01.txt"
# Rules the ZStack host's stored facts fire (warnings) and the Kunpeng host's do not.
KVM_RULES = ["kvm.emulator_unpinned", "kvm.guest_numa_missing", "kvm.vcpus_unpinned"]
SLUG = "retro-kvm-unpinned"


@pytest.fixture(autouse=True)
def media(settings, tmp_path, monkeypatch):
    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    sent: list = []
    monkeypatch.setattr(retroscan, "enqueue", lambda name, *args: sent.append((name, *args)))
    return sent


@pytest.fixture
def people(django_user_model):
    teams = {slug: Team.objects.create(name=slug.upper(), slug=slug) for slug in ("db", "net", "support")}
    users = {}
    for name, team, role in (
        ("alice", "db", "engineer"),
        ("ann", "db", "engineer"),
        ("bob", "net", "engineer"),
        ("sam", "support", "support"),
    ):
        users[name] = django_user_model.objects.create_user(name, password=f"{name}-password-1")
        Membership.objects.create(user=users[name], team=teams[team], role=role)
    return users


def upload(owner, path, host: str) -> Snapshot:
    """A real upload of ``path`` as host ``host``, analysed as a worker would."""
    original = path.stem
    snap = uploads.create_snapshot(
        owner=owner,
        data=path.read_text(encoding="utf-8").replace(original, host).encode(),
        filename=f"{host}.txt",
        label=host,
    )
    analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    snap.refresh_from_db()
    assert snap.status == "done" and snap.host_key == host, snap.last_error
    return snap


@pytest.fixture
def fleet(people):
    """db: two ZStack hosts and a Kunpeng one; net: one ZStack host."""
    return {
        "db-kvm1": upload(people["alice"], ZSTACK, "db-kvm1"),
        "db-kvm2": upload(people["ann"], ZSTACK, "db-kvm2"),
        "db-arm1": upload(people["alice"], KUNPENG, "db-arm1"),
        "net-kvm1": upload(people["bob"], ZSTACK, "net-kvm1"),
    }


def publish_case(slug: str = SLUG, rules=KVM_RULES, *, applies_to=None) -> None:
    for language in ("en", "zh"):
        case = Case(
            slug=slug,
            language=language,
            title=f"Unpinned KVM guest ({language})",
            symptom="slow guest",
            cause="vCPUs float",
            state=Case.State.PUBLISHED,
            signature={"rules": list(rules), "features": []},
            applies_to=applies_to or {},
        )
        save_case(case)


def the_scan(kind: str = "case", target: str = SLUG) -> RetroScan:
    return RetroScan.objects.get(kind=kind, target=target, status__in=["queued", "running"])


def matched(kind: str = "case", target: str = SLUG) -> list[str]:
    return sorted(HostMatch.objects.filter(kind=kind, target=target).values_list("host_key", flat=True))


def test_the_zstack_hosts_fire_the_case_rules_and_the_kunpeng_host_does_not(fleet):
    for name, snap in fleet.items():
        rules = set(snap.current_findings().values_list("rule", flat=True))
        assert set(KVM_RULES) <= rules if "kvm" in name else not rules & set(KVM_RULES), name


def test_publishing_a_case_queues_one_scan_for_both_languages(fleet, media):
    publish_case()
    scan = the_scan()
    assert scan.reason == "published" and scan.hosts_total == 4 and scan.cursor == 0
    assert RetroScan.objects.filter(target=SLUG).count() == 1


def test_a_case_with_nothing_to_match_on_queues_no_scan(fleet):
    publish_case(slug="no-signature", rules=[])
    assert not RetroScan.objects.filter(target="no-signature").exists()


def test_the_scan_matches_from_stored_facts_without_reading_an_upload(fleet, monkeypatch):
    publish_case()

    def no_reading(*args, **kwargs):
        raise AssertionError("a retro-scan never reads an upload again")

    monkeypatch.setattr(analysis, "_read_upload", no_reading)
    monkeypatch.setattr("collectors.archive.load", no_reading)
    assert retroscan.run_scan(scan_id=the_scan().pk) == "done"
    assert matched() == ["db-kvm1", "db-kvm2", "net-kvm1"]
    scan = RetroScan.objects.get(target=SLUG)
    assert (scan.status, scan.hosts_scanned, scan.hosts_matched) == ("done", 4, 3)
    match = HostMatch.objects.get(target=SLUG, host_key="db-kvm1")
    assert match.snapshot_id == fleet["db-kvm1"].pk and match.team.slug == "db"
    assert match.shared_rules == KVM_RULES and 0.1 <= match.score <= 1


def test_a_match_scores_as_the_similar_cases_of_a_new_analysis_would(fleet):
    from kb.similarity import similar_cases_for

    publish_case(rules=[*KVM_RULES, "memory.hugepages_absent"])
    retroscan.run_scan(scan_id=the_scan().pk)
    snap = fleet["db-kvm1"]
    offered = similar_cases_for(list(snap.current_findings()), retroscan.stored_facts(snap), limit=50)
    (case,) = [c for c in offered if c["slug"] == SLUG]
    match = HostMatch.objects.get(target=SLUG, host_key="db-kvm1")
    assert match.score == case["score"]
    assert match.shared_rules == [*KVM_RULES, "memory.hugepages_absent"]


def test_only_the_newest_snapshot_of_a_host_is_matched(fleet, people):
    # db-kvm2 was re-snapshotted after its fix: the Kunpeng host's outputs under its name
    upload(people["ann"], KUNPENG, "db-kvm2")
    publish_case()
    retroscan.run_scan(scan_id=the_scan().pk)
    assert matched() == ["db-kvm1", "net-kvm1"]


def test_a_scan_works_in_bounded_batches_and_queues_its_continuation(fleet, media):
    publish_case()
    scan = the_scan()
    one_at_a_time = retroscan.Limits(batch=1, seconds=0, lease=60)
    assert retroscan.run_scan(scan_id=scan.pk, limits=one_at_a_time) == "continued"
    scan.refresh_from_db()
    first = min(s.pk for s in fleet.values())
    assert (scan.cursor, scan.hosts_scanned, scan.batches, scan.lease_owner) == (first, 1, 1, "")
    assert media == [(retroscan.TASK, scan.pk)]
    while retroscan.run_scan(scan_id=scan.pk, limits=one_at_a_time) == "continued":
        pass
    scan.refresh_from_db()
    assert scan.status == "done" and scan.hosts_scanned == 4 and scan.batches == 4
    assert matched() == ["db-kvm1", "db-kvm2", "net-kvm1"]


def test_a_scan_resumes_after_its_worker_died_mid_scan(fleet):
    publish_case()
    scan = the_scan()
    # A worker on another machine took the scan, wrote its first batch and died.
    dead = "other-host:1:4242:deadbeef"
    claimed = retroscans.claim_scan(
        scan_id=scan.pk, owner=dead, lease_seconds=60, holder_gone=lambda o: False
    )
    batch = retroscan.next_batch(claimed.cursor, 2)
    assert retroscans.record_batch(
        scan=claimed,
        owner=dead,
        cursor=batch[-1].pk,
        scanned=2,
        found=retroscan.match_batch(batch, retroscan.matcher_for(claimed)),
        seconds=0.1,
        lease_seconds=60,
    )
    # While its lease runs, nobody else takes the scan, and the sweeper leaves it.
    assert retroscan.run_scan(scan_id=scan.pk) == "skipped"
    assert retroscans.stalled_scans(older_than=0) == []
    # Its lease expired: the sweeper sends the scan again, and it goes on from the cursor.
    RetroScan.objects.filter(pk=scan.pk).update(lease_expires_at=claimed.lease_expires_at.replace(year=2000))
    assert retroscan.requeue_stalled(older_than=0) == [scan.pk]
    assert retroscan.run_scan(scan_id=scan.pk) == "done"
    scan.refresh_from_db()
    assert scan.hosts_scanned == 4 and scan.batches == 2  # the first two hosts were not visited again
    assert matched() == ["db-kvm1", "db-kvm2", "net-kvm1"]


def test_a_dead_pool_process_on_this_machine_loses_its_lease_at_once(fleet):
    publish_case()
    scan = the_scan()
    gone = leases.new_lease_owner().rsplit(":", 2)[0] + ":999999999:feed"  # no such pid here
    assert leases.owner_gone(gone)
    retroscans.claim_scan(scan_id=scan.pk, owner=gone, lease_seconds=600, holder_gone=lambda o: False)
    assert retroscan.run_scan(scan_id=scan.pk) == "done"  # the redelivered task takes over


def test_a_worker_that_lost_the_scan_writes_nothing(fleet):
    publish_case()
    scan = the_scan()
    mine = retroscans.claim_scan(
        scan_id=scan.pk, owner="a:1:1:x", lease_seconds=60, holder_gone=lambda o: False
    )
    RetroScan.objects.filter(pk=scan.pk).update(lease_owner="b:1:2:y")  # taken over
    batch = retroscan.next_batch(0, 10)
    found = retroscan.match_batch(batch, retroscan.matcher_for(mine))
    assert found
    assert not retroscans.record_batch(
        scan=mine,
        owner="a:1:1:x",
        cursor=batch[-1].pk,
        scanned=len(batch),
        found=found,
        seconds=0,
        lease_seconds=60,
    )
    assert not HostMatch.objects.exists()
    assert RetroScan.objects.get(pk=scan.pk).cursor == 0


def test_publishing_again_while_a_scan_runs_restarts_it(fleet):
    publish_case()
    first = the_scan()
    retroscan.run_scan(scan_id=first.pk, limits=retroscan.Limits(batch=1, seconds=0, lease=60))
    second = retroscan.start_scan(kind="case", target=SLUG, reason=RetroScan.Reason.REQUESTED)
    assert second.pk != first.pk
    assert RetroScan.objects.get(pk=first.pk).status == "stopped"
    assert retroscan.run_scan(scan_id=first.pk) == "skipped"
    assert retroscan.run_scan(scan_id=second.pk) == "done"
    assert matched() == ["db-kvm1", "db-kvm2", "net-kvm1"]


def test_a_case_matches_a_host_by_its_version_ranges(fleet):
    kernel = fleet["db-arm1"].host_facts().kernel
    assert kernel is not None and kernel.release
    publish_case(slug="arm-kernel", rules=[], applies_to={"kernel": kernel.release.split("-")[0]})
    retroscan.run_scan(scan_id=the_scan(target="arm-kernel").pk)
    match = HostMatch.objects.get(target="arm-kernel", host_key="db-arm1")
    assert match.score is None and match.version_matches[0]["kind"] == "kernel"


# --- the teams are told -----------------------------------------------------------------------


def test_each_team_is_told_once_of_its_own_hosts(
    fleet, people, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(integrations, "_enqueue_delivery", lambda delivery_id: None)
    monkeypatch.setattr(integrations, "resolve_target", lambda url: None)
    db, net = Team.objects.get(slug="db"), Team.objects.get(slug="net")
    hook = integrations.create_webhook(
        team=db, url="https://hooks.example/db", events=[Event.CASE_MATCHES_HOSTS]
    )
    integrations.create_webhook(team=net, url="https://hooks.example/net", events=[Event.CASE_PUBLISHED])
    publish_case()
    with django_capture_on_commit_callbacks(execute=True):
        retroscan.run_scan(scan_id=the_scan().pk)
    items = InboxItem.objects.filter(kind=InboxItem.Kind.HOSTS_MATCHED)
    assert sorted(items.values_list("user__username", flat=True)) == ["alice", "ann", "bob"]
    alice = items.get(user=people["alice"])
    assert alice.detail == "2: db-kvm1, db-kvm2" and alice.url.endswith("#matching-hosts")
    (delivery,) = Delivery.objects.filter(event=Event.CASE_MATCHES_HOSTS)
    assert delivery.webhook == hook
    hosts = delivery.payload["data"]["hosts"]
    assert [h["host"] for h in hosts] == ["db-kvm1", "db-kvm2"]
    assert hosts[0]["url"] == reverse("desk:host_detail", args=["db", "db-kvm1"])
    assert delivery.payload["data"]["case"]["slug"] == SLUG

    # The same case scanned again finds nothing new: nobody is told twice.
    with django_capture_on_commit_callbacks(execute=True):
        again = retroscan.start_scan(kind="case", target=SLUG, reason=RetroScan.Reason.REQUESTED)
        retroscan.run_scan(scan_id=again.pk)
    assert InboxItem.objects.filter(kind=InboxItem.Kind.HOSTS_MATCHED).count() == 3
    assert Delivery.objects.filter(event=Event.CASE_MATCHES_HOSTS).count() == 1


def test_the_matches_mail_names_the_hosts():
    payload = {
        "team": {"name": "DB"},
        "data": {
            "case": {"title": "Unpinned KVM guest", "url": "/cases/x/"},
            "hosts": [{"host": "db-kvm1", "url": "/hosts/db/db-kvm1/"}],
        },
    }
    subject, body = integrations._email_text(Event.CASE_MATCHES_HOSTS, payload)
    assert subject == "1 of your hosts match: Unpinned KVM guest"
    assert "db-kvm1  /hosts/db/db-kvm1/" in body and "/cases/x/" in body


# --- rules ---------------------------------------------------------------------------------------


def test_the_first_rule_catalogue_is_the_baseline(fleet):
    assert retroscan.check_rule_catalogue() == []
    assert RuleCatalogue.objects.get().digests
    assert retroscan.check_rule_catalogue() == []  # a second worker starting: nothing new


def test_a_changed_or_added_rule_is_scanned(fleet, monkeypatch):
    retroscan.check_rule_catalogue()
    stored = RuleCatalogue.objects.get()
    digests = dict(stored.digests)
    digests["kvm.vcpus_unpinned"] = "0" * 16  # the catalogue before this deploy had another version
    del digests["kvm.emulator_unpinned"]  # ... and no such rule
    RuleCatalogue.objects.filter(pk=stored.pk).update(digests=digests, fingerprint="before")
    scans = retroscan.check_rule_catalogue()
    assert sorted((s.target, s.reason) for s in scans) == [
        ("kvm.emulator_unpinned", "rule-added"),
        ("kvm.vcpus_unpinned", "rule-changed"),
    ]
    for scan in scans:
        assert retroscan.run_scan(scan_id=scan.pk) == "done"
    assert matched("rule", "kvm.vcpus_unpinned") == ["db-kvm1", "db-kvm2", "net-kvm1"]


def test_a_rule_digest_follows_its_definition():
    from dataclasses import replace

    from engine.rules import load_all
    from engine.run import rule_digest

    spec = load_all()["kvm.vcpus_unpinned"]
    assert rule_digest(spec) == rule_digest(replace(spec))
    assert rule_digest(spec) != rule_digest(replace(spec, thresholds={**spec.thresholds, "x": 1}))
    assert rule_digest(spec) != rule_digest(replace(spec, severity="critical"))


# --- the pages ---------------------------------------------------------------------------------


def _page(client, user, url):
    client.force_login(user)
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def _hosts_listed(html: str) -> list[str]:
    import re

    return sorted(re.findall(r'<tr data-host="([^"]+)">', html))


def test_the_case_page_lists_the_hosts_the_reader_may_see(fleet, people, client):
    publish_case()
    retroscan.run_scan(scan_id=the_scan().pk)
    url = reverse("kb:case_detail_lang", args=[SLUG, "en"])
    html = _page(client, people["alice"], url)
    assert _hosts_listed(html) == ["db-kvm1", "db-kvm2"]
    assert reverse("desk:host_detail", args=["db", "db-kvm1"]) in html
    assert 'data-scan-status="done"' in html and "2 stored hosts match" in html
    assert _hosts_listed(_page(client, people["bob"], url)) == ["net-kvm1"]
    assert _hosts_listed(_page(client, people["sam"], url)) == ["db-kvm1", "db-kvm2", "net-kvm1"]


def test_the_case_page_says_a_scan_is_under_way(fleet, people, client):
    publish_case()
    retroscan.run_scan(scan_id=the_scan().pk, limits=retroscan.Limits(batch=1, seconds=0, lease=60))
    html = _page(client, people["sam"], reverse("kb:case_detail", args=[SLUG]))
    assert 'data-scan-status="running"' in html and "1 of 4 so far" in html


def test_the_case_page_in_chinese(fleet, people, client):
    publish_case()
    retroscan.run_scan(scan_id=the_scan().pk)
    client.force_login(people["alice"])
    html = client.get(
        reverse("kb:case_detail_lang", args=[SLUG, "zh"]), HTTP_ACCEPT_LANGUAGE="zh-hans"
    ).content
    html = html.decode()
    assert "台存储的主机匹配" in html and "stored hosts match" not in html


def test_the_rule_page_lists_the_hosts_its_scan_matched(fleet, people, client):
    scan = retroscan.start_scan(kind="rule", target="kvm.vcpus_unpinned", reason=RetroScan.Reason.REQUESTED)
    retroscan.run_scan(scan_id=scan.pk)
    url = reverse("triage:rule_detail", args=["kvm.vcpus_unpinned"])
    html = _page(client, people["bob"], url)
    section = html.split('id="retro-hosts"', 1)[1].split("</section>", 1)[0]
    assert _hosts_listed(section) == ["net-kvm1"]
    html = _page(client, people["sam"], reverse("triage:rule_detail", args=["net.netem_delay"]))
    assert 'data-scan-status="none"' in html
