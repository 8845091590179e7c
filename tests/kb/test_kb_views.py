"""Case search page, case pages (both languages), measure pages."""

from __future__ import annotations

import pytest
from django.utils import translation

from kb import services
from kb.models import Measure

pytestmark = pytest.mark.django_db


@pytest.fixture
def user_client(client, django_user_model):
    services.load_all()
    client.force_login(django_user_model.objects.create_user("reader", password="x-reader-password-1"))
    return client


def test_pages_require_login(client):
    services.load_all(use_real_engine=False)
    for url in ("/cases/", "/cases/zstack-mariadb-v2v/", "/cases/measures/"):
        response = client.get(url)
        assert response.status_code == 302 and "/login/" in response["Location"]


def test_search_page_highlights_and_links_both_languages(user_client):
    response = user_client.get("/cases/", {"q": "大页"}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    body = response.content.decode()
    assert response.status_code == 200
    assert "<mark>大页</mark>" in body
    # the English UI answers the English versions, the glossary's words marked
    with translation.override("en"):
        english = user_client.get("/cases/", {"q": "大页"}, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert (
        "<mark>huge</mark> <mark>pages</mark>" in english or "<mark>Huge</mark> <mark>pages</mark>" in english
    )
    assert 'href="/cases/zstack-mariadb-v2v/zh/"' in body
    assert 'href="/cases/percona-numa-interleave-startup/en/"' in body
    # htmx asks for the results fragment only
    partial = user_client.get("/cases/", {"q": "softirq"}, HTTP_HX_REQUEST="true").content.decode()
    assert "<html" not in partial and "oceanbase-bmsql-tuning" in partial
    # filters and an empty result
    filtered = user_client.get("/cases/", {"q": "numa", "platform": "openstack"}).content.decode()
    assert "openstack-kvm-crm-cpu" in filtered and "zstack-mariadb-v2v/" not in filtered
    assert "No case matches" in user_client.get("/cases/", {"q": "qwertyuiop"}).content.decode()


def test_search_page_one_hit_per_case_with_why_and_suggestion(user_client):
    body = user_client.get(
        "/cases/", {"q": "zone_reclam_mode"}, HTTP_ACCEPT_LANGUAGE="zh-hans"
    ).content.decode()
    assert body.count('class="kb-hit card"') == 1
    assert 'data-slug="kunpeng-stream-zone-reclaim" data-language="zh"' in body
    assert 'href="/cases/kunpeng-stream-zone-reclaim/en/"' in body  # the other version, one click away
    assert "zone_reclaim_mode</a>" in body and "q=zone_reclaim_mode" in body  # did you mean
    with translation.override("en"):
        english = user_client.get("/cases/", {"q": "netem delay"}, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Matched in" in english and "verified" in english
    assert "<mark>on</mark>" not in english and "<mark>to</mark>" not in english


def test_search_page_why_names_the_version_that_matched(user_client):
    """Issue 28: a Chinese query in the English UI no longer says "Without:
    性能, 下降" of a case whose Chinese version holds both: it says the words
    matched in the Chinese version, and a glossary synonym says so."""
    with translation.override("en"):
        english = user_client.get("/cases/", {"q": "性能 下降"}, HTTP_ACCEPT_LANGUAGE="en").content.decode()
        zstack = english.split('data-slug="zstack-mariadb-v2v"')[1].split("</li>")[0]
        assert 'data-language="en"' in zstack and "Matched in the Chinese version" in zstack
        assert "Without" not in zstack and "<mark>性能</mark>" in zstack
        # the English version holds the glossary's words for 绑核, and says so
        pinning = user_client.get("/cases/", {"q": "绑核"}, HTTP_ACCEPT_LANGUAGE="en").content.decode()
        zstack = pinning.split('data-slug="zstack-mariadb-v2v"')[1].split("</li>")[0]
        assert "Matched in the English version" in zstack and "Through a synonym: 绑核 →" in zstack
    chinese = user_client.get("/cases/", {"q": "huge pages"}, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "在中文版中匹配" in chinese


def test_search_page_escapes_the_query(user_client):
    body = user_client.get("/cases/", {"q": "<script>alert(1)</script>"}).content.decode()
    assert "<script>alert(1)</script>" not in body


def test_case_page_in_both_languages_with_related_cases(user_client):
    en = user_client.get("/cases/zstack-mariadb-v2v/en/").content.decode()
    assert "CREATE INDEX" in en and "120 s" in en and "58 s" in en and "30-60 s" in en
    assert 'href="/cases/zstack-mariadb-v2v/zh/"' in en
    assert "MDEV-18860" in en and "kvm.vcpu_hotplug_enabled" in en
    assert 'href="/cases/measures/pin-vcpus/"' in en
    # the related-cases box lists OpenStack through the shared guest NUMA finding
    assert "Related cases" in en and "/cases/openstack-kvm-crm-cpu/en/" in en
    zh = user_client.get("/cases/zstack-mariadb-v2v/zh/").content.decode()
    assert "规格热修改" in zh and 'lang="zh-Hans"' in zh
    assert user_client.get("/cases/zstack-mariadb-v2v/fr/").status_code == 404
    assert user_client.get("/cases/no-such-case/").status_code == 404


def test_case_url_without_language_follows_the_reader(user_client):
    assert (
        "v2v 迁移"
        in user_client.get("/cases/zstack-mariadb-v2v/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    )
    with translation.override("en"):
        body = user_client.get("/cases/zstack-mariadb-v2v/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "v2v-migrated ZStack guest" in body


def test_measure_pages(user_client):
    body = user_client.get("/cases/measures/").content.decode()
    assert body.count('href="/cases/measures/') == Measure.objects.count() >= 29
    detail = user_client.get("/cases/measures/zone-reclaim-mode/").content.decode()
    assert "vm.zone_reclaim_mode = 1" in detail and "kunpeng-stream-zone-reclaim" in detail
    assert user_client.get("/cases/measures/nope/").status_code == 404


def test_admin_lists_and_edits_cases_and_measures(client, django_user_model):
    services.load_all(use_real_engine=False)
    admin = django_user_model.objects.create_superuser("kb-admin", password="x-admin-password-1")
    client.force_login(admin)
    from kb.models import Case

    case = Case.objects.get(slug="percona-numa-interleave-startup", language="zh")
    for url in (
        "/admin/kb/case/",
        f"/admin/kb/case/{case.pk}/change/",
        "/admin/kb/measure/",
        "/admin/kb/measure/?q=netem",
        "/admin/kb/tag/",
    ):
        assert client.get(url).status_code == 200, url
    body = client.get(f"/admin/kb/case/{case.pk}/change/").content.decode()
    assert "PS-3967" in body and "innodb_numa_interleave" in body
