"""Issue 27, acceptance 4: publishing a case that matches 20 of 2,000 stored
hosts lists exactly those 20 on the case page within a minute and tells
their teams, with a real Celery worker (and a real gunicorn and Redis: the
harness of ``harness.py``).

The 2,000 hosts are stored as an analysis leaves them: a few real seed
snapshots (ZStack host, Kunpeng nodes, OceanBase observer, Percona server,
OpenStack compute node and guest, MariaDB guest) are uploaded and analysed
in this process, then their rows (stored facts included) are copied in bulk
under 2,000 host names spread over ten teams; 20 hosts carry the ZStack
host's facts, whose warnings the case's signature holds. The case is sent to
review here and approved through the web form by a second person; the
worker's retro-scan does the rest. Run with
``DATABASE_URL=postgres://postgres@127.0.0.1:5432/casebook_retro``.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from accounts.models import Membership, Team
from bench.pipeline import WebClient, session_key_for
from desk.models import InboxItem
from integrations import services as integrations
from integrations.models import Event
from kb.models import Case, HostMatch, RetroScan
from kb.services import save_case
from tests.conftest import FIXTURES
from tests.integrations.receiver import Receiver
from tests.processes.harness import wait_for
from triage import analysis, uploads
from triage.models import Snapshot

pytestmark = [
    pytest.mark.services,
    pytest.mark.worker,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

ALLOW = "127.0.0.1/32"
SEEDS = FIXTURES / "seeds"
MATCHING = SEEDS / "zstack-mariadb-v2v" / "before" / "zstack-9.txt"
OTHERS = [
    SEEDS / "kunpeng-stream-zone-reclaim" / "before" / "gp-sdw01.txt",
    SEEDS / "kunpeng-stream-zone-reclaim" / "before" / "gp-sdw03.txt",
    SEEDS / "oceanbase-bmsql-tuning" / "before" / "obs-197.txt",
    SEEDS / "percona-numa-interleave-startup" / "before" / "db-3301.txt",
    SEEDS / "openstack-kvm-crm-cpu" / "before" / "cmp-node07.txt",
    SEEDS / "openstack-kvm-crm-cpu" / "before" / "od01crmapp05.txt",
    SEEDS / "zstack-mariadb-v2v" / "before" / "infoplus-db.txt",
]
HOSTS, MATCHES, TEAMS = 2000, 20, 10
# Warnings of the ZStack host that none of the other seed hosts has.
SIGNATURE = ["kvm.emulator_unpinned", "kvm.guest_numa_missing", "kvm.vcpus_unpinned"]
SLUG = "retro-unpinned-kvm-guests"
# Copied from the analysed templates to every stored host.
COPIED = (
    *("kind", "original_filename", "size", "file", "status", "engine_version"),
    *("queued_at", "started_at", "finished_at", "errors", "skipped", "checked", "not_checked"),
    *("fleet_facts", "extra_hosts"),
)


def host_name(i: int) -> str:
    return f"node-{i:04d}"


def matching_hosts() -> set[int]:
    """20 hosts spread over the fleet (97 is prime to 2,000: all distinct)."""
    return {(i * 97 + 13) % HOSTS for i in range(MATCHES)}


def analysed(owner, path) -> Snapshot:
    snap = uploads.create_snapshot(owner=owner, data=path.read_bytes(), filename=path.name, label=path.stem)
    analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    snap.refresh_from_db()
    assert snap.status == "done", snap.last_error
    return snap


def store_fleet(members: list, templates: dict[str, list[Snapshot]]) -> None:
    """2,000 stored hosts, member ``i % 10`` (of team ``i % 10``) uploading host ``i``."""
    chosen = matching_hosts()
    rows = []
    for i in range(HOSTS):
        sources = templates["matching"] if i in chosen else templates["others"]
        source = sources[i % len(sources)]
        facts = {**source.facts, "hostname": host_name(i)}
        member = members[i % TEAMS]
        rows.append(
            Snapshot(
                owner=member,
                team=member.memberships.get().team,
                label=host_name(i),
                host_key=host_name(i),
                sha256=f"{i:064x}",
                facts=facts,
                **{name: getattr(source, name) for name in COPIED},
            )
        )
    Snapshot.objects.bulk_create(rows, batch_size=250)


@pytest.fixture
def world(stack, django_user_model, settings, tmp_path, monkeypatch):
    settings.MEDIA_ROOT = stack.workdir / "data" / "uploads"
    settings.CASEBOOK_WEBHOOK_ALLOW = [ALLOW]
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    teams = [Team.objects.create(name=f"Team {t}", slug=f"team-{t}") for t in range(TEAMS)]
    members = []
    for t, team in enumerate(teams):
        user = django_user_model.objects.create_user(f"eng{t}", password="eng-pass-12345")
        Membership.objects.create(user=user, team=team)
        members.append(user)
    reviewer = django_user_model.objects.create_user("reviewer", password="reviewer-pass-123")
    Membership.objects.create(
        user=reviewer, team=Team.objects.create(name="Support", slug="support"), role="support"
    )
    receiver = Receiver().start()
    hooks = {
        team.slug: integrations.create_webhook(team=team, url=receiver.url, events=[Event.CASE_MATCHES_HOSTS])
        for team in teams
    }
    templates = {
        "matching": [analysed(members[0], MATCHING)],
        "others": [analysed(members[0], path) for path in OTHERS],
    }
    for snap in templates["matching"]:
        assert set(SIGNATURE) <= set(snap.current_findings().values_list("rule", flat=True))
    for snap in templates["others"]:
        assert not set(SIGNATURE) & set(snap.current_findings().values_list("rule", flat=True)), snap
    store_fleet(members, templates)
    Snapshot.objects.filter(pk__in=[s.pk for group in templates.values() for s in group]).delete()
    InboxItem.objects.all().delete()  # the templates' "critical finding" items
    assert Snapshot.objects.count() == HOSTS
    yield {"teams": teams, "members": members, "reviewer": reviewer, "receiver": receiver, "hooks": hooks}
    receiver.stop()


def case_in_review(author) -> None:
    for language, title in (("en", "Unpinned KVM guests"), ("zh", "未绑核的 KVM 虚拟机")):
        case = Case(
            slug=SLUG,
            language=language,
            title=title,
            symptom="guest database twice slower after migration",
            cause="vCPUs, emulator and memory float over both NUMA nodes",
            state=Case.State.IN_REVIEW,
            author=author,
            signature={"rules": SIGNATURE, "features": ["role:physical"]},
        )
        save_case(case)


def listed_hosts(html: str) -> list[str]:
    section = html.split('id="matching-hosts"', 1)[1].split("</section>", 1)[0]
    return sorted(re.findall(r'<tr data-host="([^"]+)">', section))


def test_publishing_a_case_lists_its_20_of_2000_hosts_within_a_minute_and_tells_their_teams(
    stack,
    world,
):
    worker = stack.start_worker("w-retro", CASEBOOK_WEBHOOK_ALLOW=ALLOW)
    case_in_review(world["members"][0])
    web = WebClient(stack.base_url, session_key_for(world["reviewer"]))
    expected = sorted(host_name(i) for i in matching_hosts())

    started = time.monotonic()
    response = web.http.post(
        f"{stack.base_url}/cases/{SLUG}/review/",
        data={"csrfmiddlewaretoken": web.csrf(), "action": "approve", "comment": ""},
        headers={"Referer": f"{stack.base_url}/cases/{SLUG}/"},
        allow_redirects=False,
        timeout=30,
    )
    assert response.status_code == 302, response.text[:500]
    assert Case.objects.filter(slug=SLUG, state="published").count() == 2

    def listed():
        page = web.http.get(f"{stack.base_url}/cases/{SLUG}/en/", timeout=30)
        return 'data-scan-status="done"' in page.text and listed_hosts(page.text)

    hosts = wait_for(listed, 60, interval=0.5)
    elapsed = time.monotonic() - started
    assert hosts == expected, worker.text()[-4000:]
    assert elapsed < 60
    scan = RetroScan.objects.get(kind="case", target=SLUG)
    assert (scan.status, scan.hosts_total, scan.hosts_scanned, scan.hosts_matched) == (
        "done",
        HOSTS,
        HOSTS,
        MATCHES,
    )
    assert sorted(HostMatch.objects.filter(target=SLUG).values_list("host_key", flat=True)) == expected

    # Every team with a matching host is told once, of its own hosts, and nobody else.
    by_team: dict[str, list[str]] = {}
    for i in matching_hosts():
        by_team.setdefault(f"team-{i % TEAMS}", []).append(host_name(i))
    receiver = world["receiver"]
    assert wait_for(lambda: len(receiver.received) >= len(by_team), 60 - (time.monotonic() - started), 0.2)
    told = time.monotonic() - started
    time.sleep(1)  # a duplicate, if any, would arrive meanwhile
    payloads = [json.loads(r.body) for r in receiver.received]
    assert sorted(p["event"] for p in payloads) == [Event.CASE_MATCHES_HOSTS] * len(by_team)
    assert {p["team"]["slug"]: sorted(h["host"] for h in p["data"]["hosts"]) for p in payloads} == {
        slug: sorted(hosts) for slug, hosts in by_team.items()
    }
    inbox = InboxItem.objects.filter(kind=InboxItem.Kind.HOSTS_MATCHED)
    members = {f"team-{t}": f"eng{t}" for t in range(TEAMS)}
    assert sorted(inbox.values_list("user__username", flat=True)) == sorted(members[t] for t in by_team)

    # A team's engineer sees their own team's hosts only.
    team, hosts_of_team = next(iter(sorted(by_team.items())))
    engineer = WebClient(stack.base_url, session_key_for(world["members"][int(team.split("-")[1])]))
    page = engineer.http.get(f"{stack.base_url}/cases/{SLUG}/en/", timeout=30)
    assert listed_hosts(page.text) == sorted(hosts_of_team)

    done_after = (scan.finished_at - scan.created_at).total_seconds()
    print(
        f"\nretro-scan of {HOSTS} stored hosts: {scan.seconds:.1f} s of worker time in {scan.batches} "
        f"batches, {done_after:.1f} s from publishing to done; case page listing the {MATCHES} hosts "
        f"{elapsed:.1f} s and every team told {told:.1f} s after the approval"
    )
