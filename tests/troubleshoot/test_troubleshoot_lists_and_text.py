"""Issue 13 in the wizard: the sessions list is newest first and paged; a
session whose problem text no rule explains gets "cases that sound like this"
from its words (the same comparison as a pasted write-up on a report); the
measures of the wizard's steps are named by title."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.urls import reverse
from django.utils import timezone

from config.pagination import PER_PAGE
from tests.conftest import FIXTURES
from troubleshoot import findings, lifecycle
from troubleshoot.models import Session

pytestmark = pytest.mark.django_db

TICKETS = FIXTURES / "tickets"


def test_session_list_is_newest_first_and_paged(client, teams):
    alice = teams["alice"]
    base = timezone.now() - dt.timedelta(days=1)
    for i in range(PER_PAGE + 5):
        session = lifecycle.create_session(owner=alice, title=f"session-{i:03d}")
        Session.objects.filter(pk=session.pk).update(updated_at=base + dt.timedelta(minutes=(i * 7) % 55))
    client.force_login(alice)
    first = client.get(reverse("troubleshoot:session_list")).content.decode()
    second = client.get(reverse("troubleshoot:session_list"), {"page": 2}).content.decode()
    titles = re.findall(r">(session-\d{3})</a>", first) + re.findall(r">(session-\d{3})</a>", second)
    assert len(titles) == PER_PAGE + 5 and len(set(titles)) == PER_PAGE + 5
    stamps = dict(Session.objects.values_list("title", "updated_at"))
    assert [stamps[t] for t in titles] == sorted(stamps.values(), reverse=True)
    assert 'rel="next"' in first and 'rel="next"' not in second


def test_a_session_no_rule_explains_sounds_like_its_case(client, teams, founding_cases):
    alice = teams["alice"]
    ticket = (TICKETS / "v2v-mariadb-slow.txt").read_text()
    session = lifecycle.create_session(
        owner=alice, title="Database VM slower after migration", symptom=ticket
    )
    assert findings.similar_cases(session) == []
    cases = findings.sounds_like_cases(session)
    assert [c["slug"] for c in cases] == ["zstack-mariadb-v2v"]
    client.force_login(alice)
    html = client.get(reverse("troubleshoot:step", args=[session.pk, "findings"])).content.decode()
    section = html[html.index('id="sounds-like"') :]
    assert 'data-slug="zstack-mariadb-v2v"' in section and '<span class="mono term">mariadb</span>' in section


def test_an_unrelated_session_sounds_like_nothing(client, teams, founding_cases):
    alice = teams["alice"]
    text = (TICKETS / "password-reset.txt").read_text()
    session = lifecycle.create_session(owner=alice, title="Cannot log in", symptom=text)
    assert findings.sounds_like_cases(session) == []
    client.force_login(alice)
    html = client.get(reverse("troubleshoot:step", args=[session.pk, "findings"])).content.decode()
    assert 'id="sounds-like"' not in html


def test_serious_findings_leave_it_to_the_rules(zstack_session):
    # The ZStack snapshots have warning/critical findings: no text-only guess.
    assert findings.sounds_like_cases(zstack_session) == []


def test_wizard_names_measures_by_title(client, zstack_session):
    from kb.models import Measure

    client.force_login(zstack_session.owner)
    html = client.get(reverse("troubleshoot:step", args=[zstack_session.pk, "findings"])).content.decode()
    title = Measure.objects.get(slug="disable-cpu-hotplug").title_en
    assert 'href="/cases/measures/disable-cpu-hotplug/" data-measure="disable-cpu-hotplug"' in html
    assert f">{title}</a>" in html


def test_attach_picker_is_newest_first_with_time_and_cluster(client, teams, media, no_queue):
    from triage import uploads
    from triage.models import Snapshot

    alice = teams["alice"]
    base = timezone.now() - dt.timedelta(hours=3)
    for i, name in enumerate(["collect.tar.gz", "collect.tar.gz", "zstack-9.txt"]):
        snap = uploads.create_snapshot(
            owner=alice, data=f"$ uptime {i}\n".encode(), filename=name, cluster="rack-1" if i else ""
        )
        Snapshot.objects.filter(pk=snap.pk).update(created_at=base + dt.timedelta(hours=i))
    session = lifecycle.create_session(owner=alice, title="picker")
    client.force_login(alice)
    html = client.get(reverse("troubleshoot:step", args=[session.pk, "snapshots"])).content.decode()
    # the snapshot picker's options (the page also has the assignee picker)
    picker = re.search(r'<select name="snapshot"[^>]*>(.*?)</select>', html, re.S)
    assert picker is not None
    options = re.findall(r'<option value="\d+">([^<]+)</option>', picker.group(1))
    stamps = [(base + dt.timedelta(hours=i)).strftime("%Y-%m-%d %H:%M") for i in range(3)]
    assert options == [
        f"zstack-9.txt · {stamps[2]} · rack-1",
        f"collect.tar.gz · {stamps[1]} · rack-1",
        f"collect.tar.gz · {stamps[0]}",
    ]
