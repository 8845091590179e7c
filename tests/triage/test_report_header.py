"""Issue 13: the report leads with the answer. The ZStack host and its guest,
rebuilt from the founding incident and analysed by the real engine, get a
header naming the best matching case, its cause, the measures that fixed it
with their measured effect and why it matched, the top findings, and a button
that starts a troubleshooting session with the host and its cluster sibling.
A pasted ticket no rule matches gets "cases that sound like this"."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import translation

from collectors.facts import ReadArtifact, Reading, UnrecognisedBlock
from kb.models import Case, Measure
from tests.conftest import FIXTURES
from triage import analysis, reports, selectors, uploads
from triage.models import Snapshot

pytestmark = pytest.mark.django_db

ZSTACK_BEFORE = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before"
TICKETS = FIXTURES / "tickets"


@pytest.fixture
def alice(settings, tmp_path, monkeypatch):
    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    from kb.services import load_all

    load_all()
    return get_user_model().objects.create_user("alice", password="pw-alice-123")


def upload(owner, path, *, cluster=""):
    snap = uploads.create_snapshot(
        owner=owner, data=path.read_bytes(), filename=path.name, label=path.stem, cluster=cluster
    )
    assert analysis.analyze_snapshot_now(snapshot_id=snap.pk).status == "done"
    return Snapshot.objects.get(pk=snap.pk)


@pytest.fixture
def zstack(alice):
    guest = upload(alice, ZSTACK_BEFORE / "infoplus-db.txt", cluster="zstack-v2v")
    host = upload(alice, ZSTACK_BEFORE / "zstack-9.txt", cluster="zstack-v2v")
    return host, guest


def _header(html: str) -> str:
    start = html.index('id="report-header"')
    return html[start : html.index("</section>", start)]


def test_header_leads_with_the_case_its_fix_and_why(client, alice, zstack):
    host, _guest = zstack
    client.force_login(alice)
    html = client.get(host.get_absolute_url()).content.decode()
    # The answer comes before the findings and the similar-cases list.
    assert (
        html.index('id="report-header"')
        < html.index('id="findings-heading"')
        < html.index('id="similar-heading"')
    )
    header = _header(html)
    case = Case.objects.get(slug="zstack-mariadb-v2v", language="en")
    assert 'data-slug="zstack-mariadb-v2v"' in header and f">{case.title}</a>" in header
    assert "Best matching case" in header and "Cause:" in header
    # The measures that fixed it, by title, linked to the catalogue, in the case's order.
    applied = list(case.steps.filter(status="applied").select_related("measure"))
    positions = []
    for step in applied:
        link = f'href="/cases/measures/{step.measure.slug}/" data-measure="{step.measure.slug}"'
        assert link in header, step.measure.slug
        assert f">{step.measure.title_en}</a>" in header
        positions.append(header.index(link))
    assert positions == sorted(positions)
    assert "pin-iothreads" not in header  # tried, no effect: not part of the fix
    # Its measured effect and why it matched (the shared findings, in words).
    assert re.search(r"120 → 58 s <span class=\"effect-change\">\(-52 %\)</span>", header)
    why = host.similar_cases[0]
    assert why["slug"] == "zstack-mariadb-v2v"
    assert "Why it matched:" in header and "Shares the findings" in header
    # The top findings by impact, linked to their cards.
    top = host.current_findings().order_by("-impact", "id")[:3]
    for f in top:
        assert f'href="#finding-{f.pk}"' in header
    # Start a session from here, with the cluster sibling named.
    start = reverse("troubleshoot:session_new") + f"?snapshot={host.pk}"
    assert f'id="start-session" href="{start}"' in header
    assert "with this snapshot and the other host of cluster zstack-v2v" in header


def test_header_in_chinese(client, alice, zstack):
    host, _guest = zstack
    client.force_login(alice)
    with translation.override("zh-hans"):
        html = client.get(host.get_absolute_url(), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    header = _header(html)
    case = Case.objects.get(slug="zstack-mariadb-v2v", language="zh")
    assert f">{case.title}</a>" in header
    assert f">{Measure.objects.get(slug='pin-vcpus').title_zh}</a>" in header
    assert "最匹配的案例" in header and "开始排障会话" in header


def test_finding_measures_are_titles_linked_to_the_catalogue(client, alice, zstack):
    host, _guest = zstack
    client.force_login(alice)
    html = client.get(host.get_absolute_url()).content.decode()
    card = html[html.index('data-rule="kvm.vcpu_hotplug_enabled"') :]
    card = card[: card.index("</article>")]
    title = Measure.objects.get(slug="disable-cpu-hotplug").title_en
    assert 'href="/cases/measures/disable-cpu-hotplug/" data-measure="disable-cpu-hotplug"' in card
    assert f">{title}</a>" in card


def test_starting_a_session_brings_the_cluster(client, alice, zstack):
    from troubleshoot.models import Session, SessionSnapshot

    host, guest = zstack
    client.force_login(alice)
    start = reverse("troubleshoot:session_new") + f"?snapshot={host.pk}"
    form = client.get(start).content.decode()
    assert f'name="snapshot" value="{host.pk}"' in form
    assert f'class="mono starting-snapshot" data-snapshot="{guest.pk}"' in form
    response = client.post(
        reverse("troubleshoot:session_new"),
        {
            "snapshot": host.pk,
            "title": "zstack-9 slow",
            "symptom": "CREATE INDEX 120 s",
            "metric_direction": "lower",
        },
    )
    session = Session.objects.get(title="zstack-9 slow")
    assert response.status_code == 302 and response["Location"].endswith(f"/{session.pk}/step/snapshots/")
    attached = SessionSnapshot.objects.filter(session=session)
    assert {(a.snapshot_id, a.phase) for a in attached} == {(host.pk, "before"), (guest.pk, "before")}
    assert session.step == "snapshots"


def test_markdown_report_leads_with_the_answer(alice, zstack):
    host, _guest = zstack
    text = reports.render_markdown(host, language="en", base_url="https://casebook.example")
    assert text.index("## Answer") < text.index("## Findings")
    answer = text[text.index("## Answer") : text.index("## Findings")]
    case = Case.objects.get(slug="zstack-mariadb-v2v", language="en")
    assert (
        f"**Best matching case**: [{case.title}](https://casebook.example/cases/zstack-mariadb-v2v/en/)"
        in answer
    )
    pin = Measure.objects.get(slug="pin-vcpus")
    assert f"[{pin.title_en}](https://casebook.example/cases/measures/pin-vcpus/) (`pin-vcpus`)" in answer
    assert "120 → 58 s (-52 %)" in answer and "- Why it matched: Shares the findings" in answer
    # Each finding's measures by title too, the slug kept as code.
    hotplug = Measure.objects.get(slug="disable-cpu-hotplug")
    assert f"- [{hotplug.title_en}](https://casebook.example/cases/measures/disable-cpu-hotplug/)" in text
    zh = reports.render_markdown(host, language="zh")
    assert "## 结论" in zh and Case.objects.get(slug="zstack-mariadb-v2v", language="zh").title in zh


def test_a_pasted_ticket_gets_cases_that_sound_like_it(client, alice):
    snap = upload(alice, TICKETS / "v2v-mariadb-slow.txt")
    assert not snap.current_findings().exists() and snap.similar_cases == []
    client.force_login(alice)
    html = client.get(snap.get_absolute_url()).content.decode()
    assert 'id="no-known-problem"' in html
    section = html[html.index('id="sounds-like"') :]
    assert 'data-slug="zstack-mariadb-v2v"' in section
    assert '<span class="mono term">mariadb</span>' in section
    header = _header(html)
    assert "Sounds like this known case" in header and 'data-slug="zstack-mariadb-v2v"' in header
    assert "its write-up shares these terms with the text:" in header and "mariadb" in header
    text = reports.render_markdown(snap, language="en")
    assert "**Sounds like this known case**" in text and "### Cases that sound like this" in text
    # The JSON API keeps its shape: these are not similar cases.
    api = client.get(f"/api/v1/snapshots/{snap.pk}/").json()
    assert api["similar_cases"] == []
    (sounds,) = api["sounds_like"]  # an added field
    assert sounds["slug"] == "zstack-mariadb-v2v" and "mariadb" in sounds["shared_terms"]
    assert sounds["url"].endswith("/api/v1/cases/zstack-mariadb-v2v/") and 0.25 <= sounds["score"] <= 1


def test_an_unrelated_ticket_sounds_like_nothing(client, alice):
    snap = upload(alice, TICKETS / "password-reset.txt")
    client.force_login(alice)
    html = client.get(snap.get_absolute_url()).content.decode()
    assert 'id="no-known-problem"' in html and 'id="sounds-like"' not in html and 'id="best-case"' not in html


def test_command_output_is_not_prose():
    text = "MariaDB got slow after v2v\n$ uptime\n 10:00 up 1 day\n\nthanks"
    reading = Reading(artifacts=[ReadArtifact("uptime", 3, 3, True, command="uptime")])
    assert selectors.prose_text(text, reading) == "MariaDB got slow after v2v\nthanks"
    unrecognised = Reading(unrecognised=[UnrecognisedBlock(1, 1, "MariaDB got slow after v2v")])
    assert selectors.prose_text(text, unrecognised) == "$ uptime\n 10:00 up 1 day\nthanks"
