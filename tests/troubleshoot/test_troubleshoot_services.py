"""The wizard's services on the rebuilt ZStack incident (seed 000): merged
findings, similar cases, constraints, the measure ledger, verification,
promotion to a draft case and the audit trail (effectiveness:
test_troubleshoot_effectiveness.py)."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied

from engine.severity import SEVERITIES
from kb import services as kb_services
from kb.models import Case
from tests.troubleshoot.conftest import SEEDS, upload_folder
from troubleshoot import access, apply, lifecycle, planning, promotion, verify
from troubleshoot import findings as session_findings
from troubleshoot.models import AuditEntry

pytestmark = pytest.mark.django_db

PINNING = [
    "disable-cpu-hotplug",
    "pin-vcpus",
    "guest-numa-topology",
    "numatune-memory-binding",
    "pin-emulator",
    "pin-iothreads",
]


def test_merged_findings_cover_guest_and_host(zstack_session):
    findings = session_findings.merged_findings(zstack_session)
    rules = [f.rule for f in findings]
    for rule in (
        "kvm.vcpu_hotplug_enabled",
        "kvm.vcpus_unpinned",
        "kvm.emulator_unpinned",
        "kvm.guest_numa_missing",
    ):
        assert rule in rules
    # Worst severity first, one entry per rule.
    order = [SEVERITIES.index(f.severity) for f in findings]
    assert order == sorted(order)
    assert len(rules) == len(set(rules))
    hotplug = next(f for f in findings if f.rule == "kvm.vcpu_hotplug_enabled")
    assert "disable-cpu-hotplug" in hotplug.measures


def test_zstack_is_the_top_similar_case_with_why(zstack_session):
    cases = session_findings.similar_cases(zstack_session)
    assert cases[0]["slug"] == "zstack-mariadb-v2v"
    assert "kvm.vcpu_hotplug_enabled" in cases[0]["shared_rules"]
    assert "hypervisor:kvm" in cases[0]["matched_features"]
    founding = session_findings.founding_measures(zstack_session, cases[:1])
    applied = {m["measure"] for m in founding if m["status"] == "applied"}
    assert {"disable-cpu-hotplug", "pin-vcpus", "pin-emulator"} <= applied


def test_host_reboot_measures_are_blocked_with_the_constraint(zstack_session, teams):
    alice = teams["alice"]
    lifecycle.update_session(
        session=zstack_session,
        user=alice,
        changes={"guest_reboot_allowed": True, "host_reboot_allowed": False},
    )
    by_slug = {c.measure.slug: c for c in planning.candidates(zstack_session)}
    for slug in ("isolate-host-cpus", "static-hugepages"):
        assert slug in by_slug, slug
        assert "host reboot not allowed" in by_slug[slug].blocked
    for slug in PINNING:
        assert by_slug[slug].blocked is None, slug
    lifecycle.update_session(
        session=zstack_session,
        user=alice,
        changes={"other_workloads": True, "change_approval": True, "maintenance_window": "Wed 22:00"},
    )
    by_slug = {c.measure.slug: c for c in planning.candidates(zstack_session)}
    assert "other workloads" in by_slug["rebalance-host-load"].caution
    assert by_slug["disable-cpu-hotplug"].caution == "change approval needed; maintenance window: Wed 22:00"
    assert by_slug["pin-vcpus"].caution is None  # online, and only the guest
    with pytest.raises(ValueError, match="host reboot"):
        planning.plan_measure(session=zstack_session, user=alice, slug="static-hugepages")
    # Without a guest reboot, the guest-reboot measures are blocked too.
    lifecycle.update_session(session=zstack_session, user=alice, changes={"guest_reboot_allowed": False})
    by_slug = {c.measure.slug: c for c in planning.candidates(zstack_session)}
    assert "guest reboot not allowed" in by_slug["disable-cpu-hotplug"].blocked
    assert by_slug["pin-vcpus"].blocked is None  # online


def test_pinning_is_filled_in_for_node_1(zstack_session, teams):
    lifecycle.update_session(
        session=zstack_session, user=teams["alice"], changes={"guest_reboot_allowed": True}
    )
    pm = planning.plan_measure(session=zstack_session, user=teams["alice"], slug="pin-vcpus")
    # The remediation planner's placement (tests/troubleshoot/test_troubleshoot_fill.py
    # checks it equals the remediation page): node 1, the node with more free
    # memory, as in the write-up; vCPU pairs on SMT siblings (1/37, 3/39 ...).
    assert "<vcpupin vcpu='0' cpuset='1'/>" in pm.commands
    assert "<vcpupin vcpu='1' cpuset='37'/>" in pm.commands
    assert "<vcpupin vcpu='31' cpuset='67'/>" in pm.commands
    emulator = planning.plan_measure(session=zstack_session, user=teams["alice"], slug="pin-emulator")
    assert "<emulatorpin cpuset='33,69'/>" in emulator.commands


def _apply_zstack_fix(session, user):
    lifecycle.update_session(
        session=session, user=user, changes={"guest_reboot_allowed": True, "host_reboot_allowed": False}
    )
    for slug in PINNING:
        planning.plan_measure(session=session, user=user, slug=slug, tier=1)
    for pm in session.measures.all():
        apply.record_application(
            session=session, user=user, pm=pm, status="applied", change_made="virsh edit"
        )
    last = session.measures.get(measure__slug="pin-emulator")
    apply.record_application(session=session, user=user, pm=last, metric_after=58.0)
    iothread = session.measures.get(measure__slug="pin-iothreads")
    apply.record_application(session=session, user=user, pm=iothread, metric_after=58.4, notes="no change")


def test_verify_promote_and_publish(zstack_session, teams):
    alice, sam = teams["alice"], teams["sam"]
    _apply_zstack_fix(zstack_session, alice)
    upload_folder(zstack_session, alice, SEEDS / "zstack-mariadb-v2v" / "after", "after")
    result = verify.verification(zstack_session)
    cleared = {f.rule for f in result["cleared"]}
    assert {
        "kvm.vcpu_hotplug_enabled",
        "kvm.vcpus_unpinned",
        "kvm.emulator_unpinned",
        "kvm.guest_numa_missing",
    } <= cleared
    remaining = {f.rule for f in result["remaining"]}
    assert not remaining & cleared
    assert verify.final_metric(zstack_session) == 58.4  # the last measured applied measure
    lifecycle.update_session(session=zstack_session, user=alice, changes={"metric_after": 58.0})
    assert verify.final_metric(zstack_session) == 58.0

    with pytest.raises(ValueError):
        promotion.promote(session=zstack_session, user=alice)
    lifecycle.close_session(
        session=zstack_session,
        user=alice,
        outcome="resolved",
        root_cause="Unpinned guest with CPU hot-plug floated across both host nodes.",
        lessons="Check pinning and vNUMA after every v2v migration.",
    )
    # The ZStack founding case is the same problem: the wizard warns before promoting.
    warning = promotion.promotion_check(zstack_session)
    assert warning and warning["slug"] == "zstack-mariadb-v2v"
    case = promotion.promote(session=zstack_session, user=alice)
    assert case.state == Case.State.DRAFT
    metric = case.metrics.get()
    assert (metric.before, metric.after, metric.unit) == (120.0, 58.0, "s")
    steps = {s.measure.slug: s for s in case.steps.all()}
    assert steps["pin-vcpus"].status == "applied"
    assert "58" in steps["pin-emulator"].outcome
    assert "kvm.vcpu_hotplug_enabled" in case.signature_rules
    assert "hypervisor:kvm" in case.signature_features
    assert "Unpinned guest" in case.cause

    # Both language versions exist; the other one is pre-filled, in its own
    # language's labels, and must be translated before the case goes to review.
    zh = Case.objects.get(slug=case.slug, language="zh")
    assert case.language == "en" and not case.translation_pending
    assert zh.translation_pending and zh.state == Case.State.DRAFT and zh.author == alice
    assert "结果" in zh.resolution_summary and "Unpinned guest" in zh.cause
    with pytest.raises(kb_services.ReviewError):
        kb_services.submit_for_review(slug=case.slug, user=alice)
    kb_services.edit_case(case=zh, user=alice, changes={"cause": "未绑核的虚拟机在两个主机节点间漂移。"})
    kb_services.submit_for_review(slug=case.slug, user=alice)
    # A reviewer is support staff and not the author; only then is it published.
    with pytest.raises(PermissionDenied):
        kb_services.review_case(slug=case.slug, user=alice, approve=True)
    kb_services.review_case(slug=case.slug, user=sam, approve=True)
    for version in Case.objects.filter(slug=case.slug):
        assert version.state == Case.State.PUBLISHED and version.reviewer == sam


def test_link_instead_of_promote(zstack_session, teams):
    lifecycle.close_session(
        session=zstack_session, user=teams["alice"], outcome="resolved", root_cause="x", lessons=""
    )
    case = promotion.link_case(session=zstack_session, user=teams["alice"], case_slug="zstack-mariadb-v2v")
    zstack_session.refresh_from_db()
    assert zstack_session.linked_case == case
    assert zstack_session.promoted_case is None


def test_audit_trail_records_every_change_with_user_and_time(zstack_session, teams):
    alice, bob = teams["alice"], teams["bob"]
    lifecycle.set_step(session=zstack_session, user=alice, step="findings")
    lifecycle.set_step(session=zstack_session, user=bob, step="plan")
    lifecycle.update_session(session=zstack_session, user=alice, changes={"guest_reboot_allowed": True})
    pm = planning.plan_measure(session=zstack_session, user=alice, slug="pin-vcpus")
    apply.record_application(session=zstack_session, user=alice, pm=pm, status="applied", metric_after=61.0)
    apply.record_application(session=zstack_session, user=bob, pm=pm, metric_after=58.0)  # corrected
    apply.record_application(session=zstack_session, user=bob, pm=pm, status="rolled back")
    lifecycle.update_session(session=zstack_session, user=bob, changes={"metric_baseline": 118.0})

    trail = list(AuditEntry.objects.filter(session=zstack_session).order_by("at", "id"))
    assert all(e.at is not None for e in trail)
    steps = [(e.user.username, e.old, e.new) for e in trail if e.action == "step"]
    assert ("alice", "problem", "findings") in steps and ("bob", "findings", "plan") in steps
    statuses = [(e.user.username, e.target, e.old, e.new) for e in trail if e.action == "measure.status"]
    assert statuses == [
        ("alice", "pin-vcpus", "planned", "applied"),
        ("bob", "pin-vcpus", "applied", "rolled back"),
    ]
    metrics = [(e.user.username, e.target, e.old, e.new) for e in trail if e.action == "metric"]
    assert ("alice", "pin-vcpus", "", "61") in metrics
    assert ("bob", "pin-vcpus", "61", "58") in metrics  # the old value is kept
    assert ("bob", "metric_baseline", "120", "118") in metrics
    assert ("alice", "guest_reboot_allowed", "no", "yes") in [
        (e.user.username, e.target, e.old, e.new) for e in trail if e.action == "field"
    ]
    pm.refresh_from_db()
    assert pm.metric_after == 58.0 and pm.applied_by == bob
    # A change that changes nothing leaves no entry.
    before = AuditEntry.objects.count()
    apply.record_application(session=zstack_session, user=bob, pm=pm, metric_after=58.0)
    assert AuditEntry.objects.count() == before


def test_sessions_are_team_scoped(teams, db):
    alice, bob, carol, sam = teams["alice"], teams["bob"], teams["carol"], teams["sam"]
    session = lifecycle.create_session(owner=alice, title="alice's incident")
    assert set(access.visible_sessions(bob)) == {session}
    assert not access.visible_sessions(carol).exists()
    assert set(access.visible_sessions(sam)) == {session}
    assert access.can_edit(bob, session)
    assert not access.can_view(carol, session) and not access.can_edit(carol, session)
    with pytest.raises(PermissionDenied):
        lifecycle.update_session(session=session, user=carol, changes={"symptom": "hijacked"})
    with pytest.raises(PermissionDenied):
        lifecycle.set_step(session=session, user=carol, step="plan")
    session.refresh_from_db()
    assert session.symptom == "" and session.step == "problem"
