"""The Kunpeng STREAM incident (seed 001) worked in the wizard with the
Simplified Chinese UI: four of the 18 hosts before (two at ~6000 MB/s after
the disk test filled the page cache), vm.zone_reclaim_mode=1 applied online,
STREAM back to ~15000 MB/s on every host, the fleet findings cleared, the
session closed and promoted to a Chinese draft case.
Screenshots go to test-output/wizard-kunpeng-zh/."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from tests.conftest import FIXTURES
from tests.troubleshoot.wizard_browser import (
    Shots,
    add_to_plan,
    at_step,
    chromium_page,
    record,
    unhashed_static,  # noqa: F401 (fixture)
    upload,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SEED = FIXTURES / "seeds" / "kunpeng-stream-zone-reclaim"
PASSWORD = "wizard-kunpeng-pass-1"
CLEARED = ["numa.local_node_pagecache_pressure", "fleet.benchmark_spread"]


@pytest.fixture
def engineer(django_user_model, settings, tmp_path, unhashed_static):  # noqa: F811
    from accounts.models import Membership, Team

    settings.MEDIA_ROOT = tmp_path / "media"
    call_command("loadcases", verbosity=0)
    user = django_user_model.objects.create_user("zhang.min", password=PASSWORD)
    Membership.objects.create(user=user, team=Team.objects.create(name="数据库", slug="db"))
    return user


def test_kunpeng_incident_in_chinese(engineer, live_server, monkeypatch):
    shot = Shots("wizard-kunpeng-zh")
    base = live_server.url
    with chromium_page(locale="en-US") as page:
        page.goto(f"{base}/sessions/")
        page.click("form.lang-switch button[value=zh-hans]")
        page.wait_for_selector("html[lang=zh-hans]")
        page.fill("#id_username", "zhang.min")
        page.fill("#id_password", PASSWORD)
        page.click("form.stacked button[type=submit]")
        page.wait_for_url(f"{base}/sessions/")
        assert page.locator("h1").inner_text() == "排障会话"
        shot(page, "sessions")

        page.click("#new-session")
        assert page.locator("h1").inner_text() == "新建排障会话"
        page.fill("#id_title", "鲲鹏集群 STREAM 性能不一致")
        page.fill(
            "#id_symptom",
            "18 台鲲鹏 920 服务器 gpcheckperf 测试：磁盘测试之后部分节点 STREAM 只有 6000 MB/s，"
            "正常为 15000 MB/s。",
        )
        page.fill("#id_workload", "gpcheckperf（disk -> stream -> network）")
        page.fill("#id_platform", "物理机，鲲鹏 920")
        page.fill("#id_database", "Greenplum")
        page.fill("#id_metric_name", "STREAM Triad")
        page.fill("#id_metric_unit", "MB/s")
        page.fill("#id_metric_baseline", "6000")
        page.fill("#id_metric_expected", "15000 MB/s")
        page.select_option("#id_metric_direction", "higher")
        shot(page, "problem")
        page.click("#problem-form button[type=submit]")

        at_step(page, "snapshots")
        nav = page.locator("ol.wiz-steps").inner_text()
        for label in ("问题", "快照", "约束", "计划", "实施", "验证", "关闭"):
            assert label in nav, label
        upload(page, sorted(SEED.joinpath("before").iterdir()), "progress-all")
        assert page.locator("#progress-all tr[data-status='done']").count() == 4
        shot(page, "snapshots")

        page.click("#continue")
        at_step(page, "findings")
        for rule in CLEARED:
            assert page.locator(f"article.finding[data-rule='{rule}']").count() == 1, rule
        assert (
            page.locator("#similar-cases li").first.get_attribute("data-slug")
            == "kunpeng-stream-zone-reclaim"
        )
        assert page.locator("#similar-heading").inner_text() == "相似案例"
        # Findings are titled in Chinese.
        title = page.locator(
            "article.finding[data-rule='numa.local_node_pagecache_pressure'] h4"
        ).inner_text()
        assert any("\u4e00" <= ch <= "\u9fff" for ch in title), title
        assert page.locator("svg.chart-numa-distance").count() >= 1
        shot(page, "findings")

        page.click("#continue")
        at_step(page, "constraints")
        page.uncheck("#id_host_reboot_allowed")
        page.check("#id_other_workloads")
        page.click("#constraints-form button[name=next]")

        at_step(page, "plan")
        assert "在线" in page.locator("#candidate-measures tr[data-measure='zone-reclaim-mode']").inner_text()
        add_to_plan(page, "zone-reclaim-mode", tier=1)
        add_to_plan(page, "drop-caches-before-benchmark", tier=2)
        shot(page, "plan")

        page.click("#continue")
        at_step(page, "apply")
        record(
            page,
            "zone-reclaim-mode",
            status="applied",
            change="所有节点 sysctl -w vm.zone_reclaim_mode=1，并写入 /etc/sysctl.d/",
            metric="15000",
        )
        record(
            page,
            "drop-caches-before-benchmark",
            status="skipped",
            notes="zone_reclaim_mode 已解决，无需清缓存",
        )
        assert "已实施" in page.locator(".pm[data-measure='zone-reclaim-mode']").inner_text()
        # The audit trail reads in Chinese; stored values stay as recorded.
        status_row = page.locator(
            "#audit-trail tr[data-action='measure.status'][data-target='zone-reclaim-mode']"
        )
        assert "措施状态" in status_row.inner_text() and "已实施" in status_row.inner_text()
        assert status_row.get_attribute("data-new") == "applied"
        planned_row = page.locator("#audit-trail tr[data-action='measure'][data-target='zone-reclaim-mode']")
        assert "已计划（第 1 层）" in planned_row.inner_text()
        shot(page, "apply")

        page.click("#continue")
        at_step(page, "verify")
        upload(page, sorted(SEED.joinpath("after").iterdir()), "progress-after")
        for rule in CLEARED:
            assert page.locator(f"#cleared li[data-rule='{rule}']").count() == 1, rule
        assert page.locator("#remaining li[data-rule='numa.high_remote_distance']").count() == 1
        summary = page.locator("#metric-summary").inner_text()
        assert "6000 MB/s" in summary and "15000 MB/s" in summary and "150%" in summary, summary
        shot(page, "verify")
        page.click("#verify-form button[name=next]")

        at_step(page, "close")
        page.select_option("#id_outcome", "resolved")
        page.fill(
            "#id_root_cause",
            "磁盘测试后页缓存占满本地节点，zone_reclaim_mode=0 时内存分配落到远端节点（距离 32）。",
        )
        page.fill("#id_lessons", "基准测试顺序会影响结果；集群节点需统一 NUMA 相关内核参数。")
        page.click("#close-form button[type=submit]")
        page.wait_for_selector("#promote")
        shot(page, "close")
        page.click("#promote")
        page.wait_for_selector("#promoted-link")
        assert "草稿" in page.locator("#promoted").inner_text()
        shot(page, "promoted")
        page.click("#promoted-link")
        page.wait_for_load_state()
        body = page.locator("main").inner_text()
        assert "6000 MB/s" in body and "15000 MB/s" in body, body
        assert "实施后 STREAM Triad：15000 MB/s" in body and "主机: gp-sdw01" in body, body
        shot(page, "draft-case")

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from troubleshoot.models import Session

    session = Session.objects.get()
    case = session.promoted_case
    assert case.language == "zh" and case.state == "draft"
    metric = case.metrics.get()
    assert (metric.before, metric.after, metric.unit) == (6000.0, 15000.0, "MB/s")
