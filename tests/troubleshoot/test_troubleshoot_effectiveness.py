"""Measure effectiveness: measures applied together are one step with one
metric and one entry; a step is measured against the value before it, shown
with n and a 95 % t interval, and reorders plans only from MIN_SESSIONS
closed sessions on. Existing rows are grouped by the data migration."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps as django_apps
from django.urls import reverse

from kb.services import load_catalogue
from troubleshoot import apply, effectiveness, lifecycle, planning, verify
from troubleshoot.models import AuditEntry, PlannedMeasure, Session
from troubleshoot.stats import mean_interval, t_quantile_975

pytestmark = pytest.mark.django_db

# The ZStack write-up (seed 000): five measures in one guest restart, CREATE
# INDEX 120 s -> 58 s; the iothread pin afterwards changed nothing (58.4 s).
TOGETHER = [
    "disable-cpu-hotplug",
    "pin-vcpus",
    "guest-numa-topology",
    "numatune-memory-binding",
    "pin-emulator",
]
GROUP_KEY = " + ".join(sorted(TOGETHER))


@pytest.fixture
def catalogue(db):
    load_catalogue()


def zstack_like(user, *, title="zstack", baseline=120.0, together=58.0, iothread=58.4, outcome="resolved"):
    session = lifecycle.create_session(owner=user, title=title, metric_baseline=baseline, metric_unit="s")
    lifecycle.update_session(session=session, user=user, changes={"guest_reboot_allowed": True})
    pms = [planning.plan_measure(session=session, user=user, slug=slug) for slug in TOGETHER]
    apply.apply_together(
        session=session, user=user, pms=pms, metric_after=together, change_made="virsh define"
    )
    io = planning.plan_measure(session=session, user=user, slug="pin-iothreads", tier=2)
    apply.record_application(
        session=session,
        user=user,
        pm=io,
        status="applied",
        metric_after=iothread,
        notes="no measurable change: IO was not the bottleneck",
    )
    lifecycle.close_session(session=session, user=user, outcome=outcome, root_cause="unpinned", lessons="")
    return session


def test_measures_applied_together_are_one_entry(teams, catalogue):
    session = zstack_like(teams["alice"])
    assert [s["slugs"] for s in apply.applied_steps(session)] == [
        sorted(TOGETHER, key=lambda slug: TOGETHER.index(slug)),
        ["pin-iothreads"],
    ]
    assert set(session.measures.filter(step=1).values_list("metric_after", flat=True)) == {58.0}

    stats = effectiveness.effectiveness()
    assert set(stats) == {GROUP_KEY, "pin-iothreads"}  # no entry for pin-vcpus etc. on their own
    group = stats[GROUP_KEY]
    assert group["together"] and group["n"] == 1 and group["sessions"] == 1 and group["resolved"] == 1
    assert group["mean_improvement"] == pytest.approx((120 - 58) / 120)
    assert group["ci_low"] is None and not group["ranks"]  # one session: no interval, no ranking
    # The iothread pin is measured against the 58 s before it, not the 120 s baseline.
    assert stats["pin-iothreads"]["mean_improvement"] == pytest.approx((58 - 58.4) / 58)


def test_n_and_the_t_interval_over_sessions(teams, catalogue):
    alice = teams["alice"]
    results = [(120.0, 58.0), (100.0, 60.0), (90.0, 45.0)]
    for i, (baseline, after) in enumerate(results):
        zstack_like(alice, title=f"s{i}", baseline=baseline, together=after, iothread=after)
    group = effectiveness.effectiveness()[GROUP_KEY]
    gains = [(b - a) / b for b, a in results]
    mean, low, high = mean_interval(gains)
    assert group["n"] == 3 and group["ranks"]
    assert (group["mean_improvement"], group["ci_low"], group["ci_high"]) == pytest.approx((mean, low, high))
    assert low < mean < high
    page = effectiveness.effectiveness_ranking()
    assert page[0]["key"] == GROUP_KEY  # ranked (3 sessions) before the unranked


def test_a_step_without_a_metric_is_measured_with_the_next(teams, catalogue):
    alice = teams["alice"]
    s = lifecycle.create_session(owner=alice, title="t", metric_baseline=6000.0, metric_direction="higher")
    zone = planning.plan_measure(session=s, user=alice, slug="zone-reclaim-mode")
    balancing = planning.plan_measure(session=s, user=alice, slug="enable-numa-balancing")
    apply.record_application(session=s, user=alice, pm=zone, status="applied")
    apply.record_application(session=s, user=alice, pm=balancing, status="applied", metric_after=15000.0)
    lifecycle.close_session(session=s, user=alice, outcome="resolved", root_cause="r", lessons="")
    stats = effectiveness.effectiveness()
    assert list(stats) == ["enable-numa-balancing + zone-reclaim-mode"]
    assert stats["enable-numa-balancing + zone-reclaim-mode"]["mean_improvement"] == pytest.approx(1.5)


def test_open_sessions_do_not_count(teams, catalogue):
    alice = teams["alice"]
    s = lifecycle.create_session(owner=alice, title="open", metric_baseline=100.0)
    pm = planning.plan_measure(session=s, user=alice, slug="remove-netem")
    apply.record_application(session=s, user=alice, pm=pm, status="applied", metric_after=10.0)
    assert effectiveness.effectiveness() == {}


def test_a_metric_recorded_on_one_member_is_the_whole_steps(teams, catalogue):
    alice, bob = teams["alice"], teams["bob"]
    s = lifecycle.create_session(owner=alice, title="t", metric_baseline=120.0)
    lifecycle.update_session(session=s, user=alice, changes={"guest_reboot_allowed": True})
    pms = [planning.plan_measure(session=s, user=alice, slug=slug) for slug in ("pin-vcpus", "pin-emulator")]
    apply.apply_together(session=s, user=alice, pms=pms, metric_after=61.0)
    apply.record_application(session=s, user=bob, pm=pms[0], metric_after=58.0)  # corrected
    assert list(s.measures.values_list("metric_after", flat=True)) == [58.0, 58.0]
    trail = AuditEntry.objects.filter(session=s, action="metric", user=bob)
    assert sorted(trail.values_list("target", "old", "new")) == [
        ("pin-emulator", "61", "58"),
        ("pin-vcpus", "61", "58"),
    ]
    assert AuditEntry.objects.get(session=s, action="measure.step").target == "pin-vcpus + pin-emulator"
    # rolled back: out of the step
    apply.record_application(session=s, user=bob, pm=pms[1], status="rolled back")
    assert PlannedMeasure.objects.get(pk=pms[1].pk).step is None
    assert [st["slugs"] for st in apply.applied_steps(s)] == [["pin-vcpus"]]


def test_plans_reorder_only_from_three_sessions(zstack_session, teams):
    alice = teams["alice"]
    lifecycle.update_session(session=zstack_session, user=alice, changes={"guest_reboot_allowed": True})
    before = [c.measure.slug for c in planning.candidates(zstack_session)]
    tier_of = {c.measure.slug: c.tier for c in planning.candidates(zstack_session)}
    # the last measure of the first tier, measured as a big success
    slug = [s for s in before if tier_of[s] == tier_of[before[0]]][-1]
    for i in range(3):
        s = lifecycle.create_session(owner=alice, title=f"past {i}", metric_baseline=100.0)
        lifecycle.update_session(session=s, user=alice, changes={"guest_reboot_allowed": True})
        pm = planning.plan_measure(session=s, user=alice, slug=slug)
        apply.record_application(session=s, user=alice, pm=pm, status="applied", metric_after=20.0 + i)
        lifecycle.close_session(session=s, user=alice, outcome="resolved", root_cause="r", lessons="")
        order = [c.measure.slug for c in planning.candidates(zstack_session)]
        if i < 2:
            assert order == before, f"reordered after {i + 1} session(s)"
    assert order.index(slug) < before.index(slug)
    assert order[0] == slug


def test_apply_together_form_and_effectiveness_page(zstack_session, teams, client):
    alice = teams["alice"]
    client.force_login(alice)
    lifecycle.update_session(session=zstack_session, user=alice, changes={"guest_reboot_allowed": True})
    pms = [planning.plan_measure(session=zstack_session, user=alice, slug=slug) for slug in TOGETHER]
    url = reverse("troubleshoot:step", args=[zstack_session.pk, "apply"])
    assert 'id="apply-together"' in client.get(url).content.decode()
    too_few = client.post(url, {"action": "together", "together-measures": [pms[0].pk]})
    assert "choose at least two measures" in too_few.content.decode()
    response = client.post(
        url,
        {"action": "together", "together-measures": [pm.pk for pm in pms], "together-metric_after": "58"},
    )
    assert response.status_code == 302
    assert set(zstack_session.measures.values_list("step", "metric_after", "status")) == {
        (1, 58.0, "applied")
    }
    page = client.get(url).content.decode()
    assert page.count('class="together" data-step="1"') == len(TOGETHER)

    lifecycle.close_session(
        session=zstack_session, user=alice, outcome="resolved", root_cause="r", lessons=""
    )
    page = client.get(reverse("troubleshoot:effectiveness")).content.decode()
    assert page.count("<tr data-key=") == 1
    assert f'<tr data-key="{GROUP_KEY}" data-together="yes">' in page
    assert "52 %, n = 1" in page and "too few sessions to rank" in page


def test_migration_groups_existing_rows(teams, catalogue):
    """Rows from before the step column: the measures applied before a
    recorded metric were measured with it."""
    alice = teams["alice"]
    s = lifecycle.create_session(owner=alice, title="legacy", metric_baseline=120.0)
    lifecycle.update_session(session=s, user=alice, changes={"guest_reboot_allowed": True})
    for slug in [*TOGETHER, "pin-iothreads", "zone-reclaim-mode"]:
        planning.plan_measure(session=s, user=alice, slug=slug)
    metrics = {"pin-emulator": 58.0, "pin-iothreads": 58.4}
    for pm in s.measures.select_related("measure").order_by("tier", "position"):
        pm.status, pm.step, pm.metric_after = "applied", None, metrics.get(pm.measure.slug)
        pm.save()
    migration = importlib.import_module("troubleshoot.migrations.0002_planned_measure_applied_step")
    migration.group_applied_measures(django_apps, None)
    rows = {pm.measure.slug: (pm.step, pm.metric_after) for pm in s.measures.select_related("measure")}
    assert {slug: rows[slug] for slug in TOGETHER} == {slug: (1, 58.0) for slug in TOGETHER}
    assert rows["pin-iothreads"] == (2, 58.4)
    assert rows["zone-reclaim-mode"] == (3, None)
    lifecycle.close_session(session=s, user=alice, outcome="resolved", root_cause="r", lessons="")
    assert set(effectiveness.effectiveness()) == {GROUP_KEY, "pin-iothreads", "zone-reclaim-mode"}


def test_t_quantiles_and_interval():
    # Student t 97.5th percentiles (any statistics table; df = 60 and 120 from
    # the Cornish-Fisher expansion used beyond the table).
    assert [t_quantile_975(df) for df in (1, 2, 10, 30)] == [12.706, 4.303, 2.228, 2.042]
    assert t_quantile_975(31) == pytest.approx(2.0395, abs=1e-3)
    assert t_quantile_975(60) == pytest.approx(2.0003, abs=1e-3)
    assert t_quantile_975(120) == pytest.approx(1.9799, abs=1e-3)
    mean, low, high = mean_interval([0.5, 0.4, 0.6])
    # s = 0.1, n = 3: half width 4.303 * 0.1 / sqrt(3)
    assert (mean, high - mean) == pytest.approx((0.5, 4.303 * 0.1 / 3**0.5))
    assert low == pytest.approx(2 * mean - high)
    assert mean_interval([0.3]) == (0.3, None, None)
    with pytest.raises(ValueError):
        t_quantile_975(0)


def test_session_model_keeps_the_direction():
    s = Session(metric_baseline=6000.0, metric_direction="higher")
    assert verify.improvement(s, 15000.0) == pytest.approx(1.5)
    assert verify.improvement(s, 15000.0, reference=12000.0) == pytest.approx(0.25)
