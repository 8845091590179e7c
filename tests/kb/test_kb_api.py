"""/api/v1/cases/ and /api/v1/measures/."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from accounts.services import rotate_api_token
from kb import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(django_user_model):
    services.load_all()
    user = django_user_model.objects.create_user("api", password="x-api-password-1")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {rotate_api_token(user=user).key}")
    return client


def test_requires_authentication():
    services.load_all(use_real_engine=False)
    assert APIClient().get("/api/v1/cases/", {"q": "softirq"}).status_code in (401, 403)
    assert APIClient().get("/api/v1/measures/").status_code in (401, 403)


def test_search(api):
    data = api.get("/api/v1/cases/", {"q": "软中断"}).json()
    # one result per case, in the reader's language, the other version linked
    assert data["count"] == 1 and data["page"] == 1 and not data["relaxed"]
    assert [(r["slug"], r["language"]) for r in data["results"]] == [("oceanbase-bmsql-tuning", "en")]
    top = data["results"][0]
    assert top["score"] > 0 and top["url"] == "/cases/oceanbase-bmsql-tuning/en/"
    assert top["other"] == {
        "language": "zh",
        "title": top["other"]["title"],
        "url": "/cases/oceanbase-bmsql-tuning/zh/",
    }
    assert "<mark>" in top["snippet"]
    assert "softirq" in data["terms"]
    assert "tags" in top["why"]["in_fields"] and top["why"]["solved"] and top["why"]["verified"]
    zh = api.get("/api/v1/cases/", {"q": "软中断"}, HTTP_ACCEPT_LANGUAGE="zh-hans").json()
    assert [r["language"] for r in zh["results"]] == ["zh"] and zh["results"][0]["other"]["language"] == "en"
    # a typo answers the case and says what was meant
    typo = api.get("/api/v1/cases/", {"q": "zone_reclam_mode"}).json()
    assert typo["suggestion"] == "zone_reclaim_mode"
    assert typo["results"][0]["slug"] == "kunpeng-stream-zone-reclaim"
    only_zh = api.get("/api/v1/cases/", {"q": "huge pages", "language": "zh"}).json()
    assert {r["slug"] for r in only_zh["results"]} == {
        "zstack-mariadb-v2v",
        "percona-numa-interleave-startup",
    }
    by_rule = api.get("/api/v1/cases/", {"rule": "net.netem_delay", "language": "en"}).json()
    assert [r["slug"] for r in by_rule["results"]] == ["oceanbase-bmsql-tuning"]
    assert api.get("/api/v1/cases/", {"page": "0"}).status_code == 400


def test_case_detail(api):
    data = api.get("/api/v1/cases/percona-numa-interleave-startup/").json()
    assert data["language"] == "en" and data["slug"] == "percona-numa-interleave-startup"
    assert {r["key"] for r in data["references"]} == {"innodb_numa_interleave", "PS-3967"}
    assert [s["measure"] for s in data["resolution"]] == [
        "shrink-buffer-pool", "disable-numa-interleave", "buffer-pool-dump-load", "mysql-large-pages"
    ]  # fmt: skip
    assert {m["unit"] for m in data["metrics"]} == {"s", "GB"}
    assert "mysql.numa_interleave_populate_startup" in data["signature"]["rules"]
    assert data["signature_engine_version"]
    assert data["translations"][0]["language"] == "zh"
    zh = api.get("/api/v1/cases/percona-numa-interleave-startup/", {"language": "zh"}).json()
    assert zh["language"] == "zh" and "启动慢" in zh["title"]
    assert api.get("/api/v1/cases/percona-numa-interleave-startup/", {"language": "fr"}).status_code == 404
    assert api.get("/api/v1/cases/nope/").status_code == 404


def test_measures(api):
    data = api.get("/api/v1/measures/").json()
    assert len(data) == 39
    by_slug = {m["slug"]: m for m in data}
    assert by_slug["remove-netem"]["disruption"] == "online"
    assert by_slug["isolate-host-cpus"]["disruption"] == "host reboot"
    assert "net.netem_delay" in by_slug["remove-netem"]["rules"]
    assert api.get("/api/v1/measures/pin-vcpus/").json()["title_zh"].startswith("vCPU")


def test_schema_lists_the_kb_endpoints(api):
    response = api.get("/api/schema/", {"format": "json"})
    paths = response.json()["paths"] if response["Content-Type"].startswith("application/json") else {}
    if not paths:
        import yaml

        paths = yaml.safe_load(response.content)["paths"]
    assert {"/api/v1/cases/", "/api/v1/cases/{slug}/", "/api/v1/measures/"} <= set(paths)
