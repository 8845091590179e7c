"""The ZStack founding incident (seed 000) worked end to end in the wizard, in
Debian's Chromium: sign in, open a session, upload the rebuilt before-snapshot
(the hypervisor and its MariaDB guest), review findings and the ZStack case,
allow a guest reboot but no host reboot, plan the pinning, vNUMA,
emulatorpin and iothreadpin measures with the remediation planner's placement,
record the first five as applied together (CREATE INDEX 58 s) and the
iothread pin on its own, verify with the after-snapshot, close as resolved,
promote a draft case showing 120 s -> 58 s, and see the five measures as one
entry on the effectiveness page. Screenshots of every step go to
test-output/wizard-zstack/."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from tests.conftest import FIXTURES
from tests.troubleshoot.wizard_browser import (
    Shots,
    add_to_plan,
    at_step,
    chromium_page,
    htmx_idle,
    login,
    record,
    unhashed_static,  # noqa: F401 (fixture)
    upload,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SEED = FIXTURES / "seeds" / "zstack-mariadb-v2v"
PASSWORD = "wizard-zstack-pass-1"
# The write-up's fix, in its order: the first five in one guest restart and
# measured once; iothreadpin afterwards made no measurable difference. The pins
# are the remediation planner's (node 1, SMT sibling pairs), as the wizard proposes.
FIX = [
    ("disable-cpu-hotplug", "", "hot-plug off in the offering; guest restarted"),
    ("pin-vcpus", "", "vcpupin 0-31 -> host CPUs 1,37,3,39,...,31,67 (node 1)"),
    ("guest-numa-topology", "", "one guest NUMA cell 0-31, host-passthrough"),
    ("numatune-memory-binding", "", "numatune strict nodeset 1"),
    ("pin-emulator", "58", "emulatorpin 33,69"),
    ("pin-iothreads", "58.4", "iothread 1 for vdb, iothreadpin 35,71"),
]
TOGETHER = [slug for slug, _metric, _change in FIX[:5]]
PINNING_RULES = [
    "kvm.vcpu_hotplug_enabled",
    "kvm.vcpus_unpinned",
    "kvm.emulator_unpinned",
    "kvm.guest_numa_missing",
]


@pytest.fixture
def engineer(django_user_model, settings, tmp_path, unhashed_static):  # noqa: F811
    from accounts.models import Membership, Team

    settings.MEDIA_ROOT = tmp_path / "media"
    call_command("loadcases", verbosity=0)
    user = django_user_model.objects.create_user("li.wei", password=PASSWORD)
    Membership.objects.create(user=user, team=Team.objects.create(name="Virtualisation", slug="virt"))
    return user


def test_zstack_incident_end_to_end(engineer, live_server, monkeypatch):
    shot = Shots("wizard-zstack")
    base = live_server.url
    with chromium_page() as page:
        login(page, base, "li.wei", PASSWORD)
        shot(page, "sessions")

        # 1. Problem
        page.click("#new-session")
        page.fill("#id_title", "MariaDB 2x slower after v2v migration (ZStack)")
        page.fill(
            "#id_symptom", "CREATE INDEX takes about 120 s in the migrated 32C32G guest; a new guest is fine."
        )
        page.fill("#id_workload", "MariaDB 10.4 OLTP")
        page.fill("#id_platform", "ZStack 4.2.16, KVM")
        page.fill("#id_database", "MariaDB 10.4.14")
        page.fill("#id_metric_name", "CREATE INDEX Form_Remarks_Timestamp_IX")
        page.fill("#id_metric_unit", "s")
        page.fill("#id_metric_baseline", "120")
        page.fill("#id_metric_expected", "30-60 s")
        shot(page, "problem")
        page.click("#problem-form button[type=submit]")

        # 2. Snapshots: the host and its guest, analysed together.
        at_step(page, "snapshots")
        upload(page, sorted(SEED.joinpath("before").iterdir()), "progress-all")
        assert page.locator("#progress-all tr[data-status='done']").count() == 2
        shot(page, "snapshots")

        # 3. Findings and similar cases
        page.click("#continue")
        at_step(page, "findings")
        for rule in PINNING_RULES:
            assert page.locator(f"article.finding[data-rule='{rule}']").count() == 1, rule
        top = page.locator("#similar-cases li").first
        assert top.get_attribute("data-slug") == "zstack-mariadb-v2v"
        assert "kvm.vcpu_hotplug_enabled" in top.inner_text()
        assert page.locator("#founding-measures").inner_text().count("zstack-mariadb-v2v") >= 5
        assert page.locator("svg.chart-numa-memory").count() >= 1
        assert page.locator("svg.chart-cpu-heat rect").count() >= 72
        shot(page, "findings")

        # 4. Constraints: guest reboot allowed, host reboot not allowed.
        page.click("#continue")
        at_step(page, "constraints")
        page.check("#id_guest_reboot_allowed")
        page.uncheck("#id_host_reboot_allowed")
        page.check("#id_other_workloads")
        page.check("#id_change_approval")
        page.fill("#id_maintenance_window", "Wed 22:00-24:00")
        page.click("#constraints-form button[name=save]")
        page.wait_for_selector("#candidate-measures tr[data-measure='pin-vcpus']")
        htmx_idle(page)
        for slug in ("isolate-host-cpus", "static-hugepages"):
            row = page.locator(f"#candidate-measures tr[data-measure='{slug}']")
            assert "host reboot not allowed" in row.inner_text(), slug
        assert "BLOCKED" not in page.locator("#candidate-measures tr[data-measure='pin-vcpus']").inner_text()
        shot(page, "constraints")

        # 5. Plan
        page.click("#constraints-form button[name=next]")
        at_step(page, "plan")
        for slug, _metric, _change in FIX:
            add_to_plan(page, slug, tier=2 if slug == "pin-iothreads" else 1)
        blocked = page.locator("#candidate-measures tr[data-measure='static-hugepages']")
        assert "host reboot not allowed" in blocked.inner_text()
        assert blocked.locator("button").count() == 0
        vcpus = page.locator(".pm[data-measure='pin-vcpus'] pre.commands").text_content()
        assert "<vcpupin vcpu='0' cpuset='1'/>" in vcpus
        # The placement is the remediation page's (tests/troubleshoot/test_troubleshoot_fill.py
        # compares them pin by pin); the old wizard planner said emulatorpin 67.
        assert "<vcpupin vcpu='1' cpuset='37'/>" in vcpus
        emulator = page.locator(".pm[data-measure='pin-emulator'] pre.commands").text_content()
        assert "<emulatorpin cpuset='33,69'/>" in emulator
        placement = page.locator("#placement li.guest-plan[data-ok='yes']")
        assert "emulator on 33,69" in placement.inner_text()
        assert "/remedy/" in placement.locator("a").get_attribute("href")
        # Reorder: emulatorpin before numatune.
        page.locator(".pm[data-measure='pin-emulator'] button[value=up]").click()
        page.wait_for_function(
            "() => { const c = [...document.querySelectorAll('#tier-1 .pm')].map(e => e.dataset.measure);"
            " return c.indexOf('pin-emulator') < c.indexOf('numatune-memory-binding'); }"
        )
        shot(page, "plan")

        # 6. Apply: recorded, not executed.
        page.click("#continue")
        at_step(page, "apply")
        page.click("#apply-together summary")
        for slug in TOGETHER:
            page.check(f"#apply-together input[name='together-measures'][data-slug='{slug}']")
        page.fill("#id_together-change_made", "; ".join(change for _slug, _metric, change in FIX[:5]))
        page.fill("#id_together-metric_after", "58")
        page.click("#apply-together button[type=submit]")
        page.wait_for_selector(".pm[data-measure='pin-emulator'][data-status='applied'] .together")
        assert page.locator(".pm .together[data-step='1']").count() == len(TOGETHER)
        slug, metric, change = FIX[5]
        record(
            page,
            slug,
            status="applied",
            change=change,
            metric=metric,
            notes="no measurable change: IO was not the bottleneck",
        )
        card = page.locator(".pm[data-measure='pin-emulator']")
        assert "li.wei" in card.inner_text()
        assert page.locator("svg.chart-metric rect[data-value='58']").count() == 1
        shot(page, "apply")

        # 7. Verify with the after-snapshot.
        page.click("#continue")
        at_step(page, "verify")
        assert page.locator("#upload-form select[name=phase]").input_value() == "after"
        upload(page, sorted(SEED.joinpath("after").iterdir()), "progress-after")
        for rule in PINNING_RULES:
            assert page.locator(f"#cleared li[data-rule='{rule}']").count() == 1, rule
            assert page.locator(f"#remaining li[data-rule='{rule}']").count() == 0, rule
        page.fill("#id_metric_after", "58")
        assert "120 s" in page.locator("#metric-summary").inner_text()
        shot(page, "verify")

        # 8. Close as resolved and promote.
        page.click("#verify-form button[name=next]")
        at_step(page, "close")
        page.select_option("#id_outcome", "resolved")
        page.fill(
            "#id_root_cause",
            "CPU hot-plug and no vCPU/emulator/iothread pinning or vNUMA "
            "let the guest float across both host nodes.",
        )
        page.fill(
            "#id_lessons", "ZStack 4.2.16 only offers CPU pinning: hand-written vNUMA XML is error-prone."
        )
        page.click("#close-form button[type=submit]")
        page.wait_for_selector("#similar-warning")
        assert "zstack-mariadb-v2v" in page.locator("#similar-warning").inner_text() or page.locator(
            "#similar-warning a"
        ).get_attribute("href").startswith("/cases/zstack-mariadb-v2v/")
        assert page.locator("#link-case").is_visible()
        shot(page, "close")
        page.click("#promote")
        page.wait_for_selector("#promoted-link")
        shot(page, "promoted")

        # The audit trail shows the metric and status changes with the user.
        statuses = page.locator("#audit-trail tr[data-action='measure.status']")
        assert statuses.count() == len(FIX)
        assert "li.wei" in statuses.first.inner_text()
        emulator_metric = page.locator("#audit-trail tr[data-action='metric'][data-target='pin-emulator']")
        assert emulator_metric.get_attribute("data-new") == "58"

        page.click("#promoted-link")
        page.wait_for_load_state()
        body = page.locator("main").inner_text()
        assert "120 s" in body and "58 s" in body, body
        shot(page, "draft-case")

        # Effectiveness: the five measures applied together are one entry (52 %),
        # the iothread pin is measured against the 58 s before it, not the baseline.
        page.goto(f"{base}/sessions/effectiveness/")
        rows = page.locator("#effectiveness tbody tr")
        assert rows.count() == 2
        group = page.locator("#effectiveness tr[data-together='yes']")
        assert group.get_attribute("data-key") == " + ".join(sorted(TOGETHER))
        assert "52 %, n = 1" in group.inner_text()
        iothread = page.locator("#effectiveness tr[data-key='pin-iothreads']").inner_text()
        assert "-1 %, n = 1" in iothread, iothread
        shot(page, "effectiveness")

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from kb.models import Case
    from troubleshoot.models import Session

    session = Session.objects.get()
    assert session.state == "closed" and session.outcome == "resolved"
    case = session.promoted_case
    assert case.state == Case.State.DRAFT
    metric = case.metrics.get()
    assert (metric.before, metric.after) == (120.0, 58.0)
    assert len(list(shot.folder.glob("*.png"))) == 12


def test_snapshot_progress_polls_until_analysed(engineer, live_server, monkeypatch):
    """With a real worker the upload returns before the analysis: the step polls
    the progress fragment and stops polling once every snapshot is done."""
    from triage import analysis, uploads
    from triage.models import Snapshot
    from troubleshoot import lifecycle, snapshots

    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    session = lifecycle.create_session(owner=engineer, title="polling")
    path = SEED / "before" / "zstack-9.txt"
    snap = uploads.create_snapshot(owner=engineer, data=path.read_bytes(), filename=path.name)
    snapshots.attach_snapshot(session=session, user=engineer, snapshot=snap)
    Snapshot.objects.filter(pk=snap.pk).update(status="analyzing")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # the test updates the row while the page polls
    with chromium_page() as page:
        login(page, live_server.url, "li.wei", PASSWORD)
        page.goto(f"{live_server.url}/sessions/{session.pk}/step/snapshots/")
        progress = page.locator("#progress-all")
        assert progress.get_attribute("hx-trigger") == "every 1s"
        assert progress.get_attribute("data-done") == "0"
        analysis.analyze_snapshot_now(snapshot_id=snap.pk, force=True)
        page.wait_for_selector("#progress-all[data-done='1']", timeout=15_000)
        assert page.locator("#progress-all").get_attribute("hx-trigger") is None
        assert page.locator("#progress-all tr[data-status='done']").count() == 1
