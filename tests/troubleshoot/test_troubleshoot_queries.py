"""The wizard's query budget: a page computes the session's merged findings,
similar cases and what those cases did once, reads the steps of every similar
case in one query, and asks measured effectiveness only about its candidate
measures; its query count does not grow with the number of similar cases or
of closed sessions."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from kb import services
from kb.models import Case, CaseMeasure, Measure
from troubleshoot import apply, effectiveness, findings, lifecycle, planning

pytestmark = pytest.mark.django_db


def step_url(session, name: str) -> str:
    return reverse("troubleshoot:step", args=[session.pk, name])


@pytest.fixture
def alice_client(client, teams):
    client.force_login(teams["alice"])
    return client


def _page(client, session, step: str) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(step_url(session, step))
    assert response.status_code == 200
    return len(ctx.captured_queries), response.content.decode()


def _more_similar_cases(session, n: int) -> list[str]:
    """``n`` published cases with the session's signature, each with a step
    that addresses one of its serious findings."""
    found = findings.SessionFindings(session)
    serious = set(found.serious)
    measure = next(
        m
        for m in Measure.objects.filter(slug__in={s for f in found.merged for s in f.measures})
        if serious & set(m.rules or [])
    )
    slugs = []
    for i in range(n):
        case = Case(slug=f"like-zstack-{i}", title=f"like zstack {i}", symptom="slow", state="published")
        case.signature = dict(found.signature)
        case = services.save_case(case)
        CaseMeasure.objects.create(case=case, order=1, measure=measure, outcome=f"helped {i}")
        slugs.append(case.slug)
    return slugs


def test_the_findings_page_reads_every_similar_cases_steps_at_once(
    zstack_session, alice_client, django_assert_max_num_queries
):
    queries, page = _page(alice_client, zstack_session, "findings")
    cases = findings.similar_cases(zstack_session)
    added = _more_similar_cases(zstack_session, 4)
    more = findings.similar_cases(zstack_session)  # (and the rule frequencies cached again)
    assert len(more) > len(cases) and {c["slug"] for c in more} & set(added)

    with django_assert_max_num_queries(queries):
        page = alice_client.get(step_url(zstack_session, "findings")).content.decode()
    founding = page[page.index('id="founding-measures"') :]
    assert sum(f">{slug}</td>" in founding for slug in added) >= 1
    # what the page shows is what the services say, case by case
    rows = findings.founding_measures(zstack_session, more)
    assert [r["case"] for r in rows] == [r["case"] for r in findings.SessionFindings(zstack_session).founding]
    for case in more:
        assert f'data-slug="{case["slug"]}"' in page


def test_the_close_page_ranks_the_similar_cases_once(
    zstack_session, alice_client, teams, django_assert_max_num_queries
):
    lifecycle.close_session(
        session=zstack_session, user=teams["alice"], outcome="resolved", root_cause="r", lessons=""
    )
    queries, _page_text = _page(alice_client, zstack_session, "close")
    _more_similar_cases(zstack_session, 4)
    # publishing clears the cached rule frequencies; the page's own count is compared
    assert len(findings.similar_cases(zstack_session)) == 5
    with django_assert_max_num_queries(queries):
        page = alice_client.get(step_url(zstack_session, "close")).content.decode()
    assert "like-zstack-0" in page


def _closed_session(user, slug: str, i: int) -> None:
    s = lifecycle.create_session(owner=user, title=f"past {i}", metric_baseline=100.0)
    lifecycle.update_session(
        session=s,
        user=user,
        changes={"guest_reboot_allowed": True, "host_reboot_allowed": True, "service_restart_allowed": True},
    )
    pm = planning.plan_measure(session=s, user=user, slug=slug)
    apply.record_application(session=s, user=user, pm=pm, status="applied", metric_after=50.0 + i)
    lifecycle.close_session(session=s, user=user, outcome="resolved", root_cause="r", lessons="")


@pytest.mark.parametrize("step", ["constraints", "plan"])
def test_constraints_and_plan_pages_do_not_grow_with_closed_sessions(
    zstack_session, alice_client, teams, step, django_assert_max_num_queries
):
    alice = teams["alice"]
    candidates = [c.measure.slug for c in planning.candidates(zstack_session)]
    _closed_session(alice, candidates[0], 0)
    queries, _page_text = _page(alice_client, zstack_session, step)
    for i in range(1, 6):
        _closed_session(alice, candidates[i % len(candidates)], i)
    with django_assert_max_num_queries(queries):
        alice_client.get(step_url(zstack_session, step))


def test_effectiveness_of_the_candidates_is_that_of_all_sessions(zstack_session, teams):
    alice = teams["alice"]
    candidates = [c.measure.slug for c in planning.candidates(zstack_session)]
    for i in range(4):
        _closed_session(alice, candidates[i % 2], i)
    _closed_session(alice, "remove-netem", 9)  # no candidate of this session
    everything = effectiveness.effectiveness()
    asked = effectiveness.effectiveness(slugs=candidates)
    assert set(asked) == {candidates[0], candidates[1]} and "remove-netem" in everything
    assert all(asked[key] == everything[key] for key in asked)
    assert effectiveness.effectiveness(slugs=[]) == {}
