"""/api/v1/snapshots/ and /api/v1/rules/: uploads in every accepted form,
limits, filters, the detail shape of DESIGN.md, the Markdown report."""

from __future__ import annotations

import gzip
import io
import tarfile

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings

from tests.api.world import TRANSCRIPT
from triage import uploads
from triage.models import Snapshot

pytestmark = pytest.mark.django_db


def _targz(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_multipart_upload_answers_202_with_links(world, no_queue, django_capture_on_commit_callbacks):
    api = world.api("engineer_a")
    data = TRANSCRIPT.read_bytes() + b"\n# again\n"
    upload = SimpleUploadedFile("obs.txt", data)
    with django_capture_on_commit_callbacks(execute=True):
        r = api.post(
            "/api/v1/snapshots/", {"file": upload, "label": "obs", "cluster": "c1"}, format="multipart"
        )
    assert r.status_code == 202, r.content
    body = r.json()
    assert set(body) >= {"id", "url", "status", "api_url", "report_md_url"}
    assert body["status"] == "queued"
    assert body["url"] == f"http://testserver/snapshots/{body['id']}/"
    assert r["Location"] == body["api_url"] == f"http://testserver/api/v1/snapshots/{body['id']}/"
    snap = Snapshot.objects.get(pk=body["id"])
    assert (snap.owner, snap.team, snap.label, snap.cluster) == (
        world.users["engineer_a"],
        world.teams["team-a"],
        "obs",
        "c1",
    )
    assert snap.kind == "transcript" and no_queue[-1] == snap.pk


@pytest.mark.parametrize(
    ("content_type", "kind"),
    [("application/gzip", "collector"), ("application/x-xz", "collector"), ("text/plain", "transcript")],
)
def test_raw_body_uploads(world, content_type, kind):
    api = world.api("engineer_a")
    if content_type == "text/plain":
        body = TRANSCRIPT.read_bytes() + b"\n# raw\n"
    else:
        tar = _targz({"x/numactl_-H.txt": b"available: 1 nodes (0)\n", "x/manifest.json": b"{}"})
        if content_type == "application/x-xz":
            import lzma

            body = lzma.compress(gzip.decompress(tar), format=lzma.FORMAT_XZ)
        else:
            body = tar
    r = api.generic("POST", "/api/v1/snapshots/?label=raw&cluster=rc", body, content_type=content_type)
    assert r.status_code == 202, r.content
    snap = Snapshot.objects.get(pk=r.json()["id"])
    assert snap.label == "raw" and snap.cluster == "rc" and snap.size == len(body)
    assert snap.kind == kind


def test_identical_upload_returns_the_existing_snapshot(world):
    api = world.api("engineer_a")
    r = api.generic("POST", "/api/v1/snapshots/", TRANSCRIPT.read_bytes(), content_type="text/plain")
    assert r.status_code == 200 and r.json()["id"] == world.snapshot.pk
    assert r.json()["status"] == "done" and r.json()["duplicate"] is True


def test_identical_upload_says_so_and_takes_the_new_label_and_cluster(
    world, no_queue, django_capture_on_commit_callbacks
):
    """Issue 25 point 8: the same bytes again silently answered 202 with the old
    snapshot, dropping the new label and cluster."""
    api = world.api("engineer_a")
    upload = SimpleUploadedFile("again.txt", TRANSCRIPT.read_bytes())
    with django_capture_on_commit_callbacks(execute=True):
        r = api.post(
            "/api/v1/snapshots/", {"file": upload, "label": "obs-2", "cluster": "bench"}, format="multipart"
        )
    assert r.status_code == 200, r.content
    assert r.json()["id"] == world.snapshot.pk and r.json()["duplicate"] is True
    snap = Snapshot.objects.get(pk=world.snapshot.pk)
    assert (snap.label, snap.cluster) == ("obs-2", "bench")
    # a new cluster: analysed again with its new members
    assert snap.status == "queued" and no_queue[-1] == snap.pk
    assert Snapshot.objects.filter(sha256=snap.sha256).count() == 1
    # a new upload is not a duplicate
    fresh = SimpleUploadedFile("new.txt", TRANSCRIPT.read_bytes() + b"\n# new\n")
    r = api.post("/api/v1/snapshots/", {"file": fresh}, format="multipart")
    assert r.status_code == 202 and r.json()["duplicate"] is False


def test_the_schema_documents_the_duplicate_answer(world):
    schema = world.api("engineer_a").get("/api/schema/?format=json").json()
    post = schema["paths"]["/api/v1/snapshots/"]["post"]
    assert {"200", "202", "400"} <= set(post["responses"])
    assert "duplicate" in post["description"] and "binary" in post["description"]


def test_unknown_content_type_is_415_with_the_error_body(world):
    r = world.api("engineer_a").generic("POST", "/api/v1/snapshots/", b"{}", content_type="application/json")
    assert r.status_code == 415
    err = r.json()["error"]
    assert err["code"] == "unsupported_media_type" and "application/json" in err["message"]


def test_missing_file_is_400_with_field_details(world):
    r = world.api("engineer_a").post("/api/v1/snapshots/", {"label": "x"}, format="multipart")
    assert r.status_code == 400
    err = r.json()["error"]
    assert err["code"] == "invalid" and "file" in err["details"]


def test_empty_raw_body_is_400(world):
    r = world.api("engineer_a").generic("POST", "/api/v1/snapshots/", b"", content_type="text/plain")
    assert r.status_code == 400
    assert r.json()["error"]["message"]


def test_oversized_upload_is_413_before_reading(world):
    limits = {**__import__("django.conf").conf.settings.CASEBOOK_LIMITS, "upload_bytes": 1000}
    api = world.api("engineer_a")
    with override_settings(CASEBOOK_LIMITS=limits):
        raw = api.generic("POST", "/api/v1/snapshots/", b"x" * 1001, content_type="text/plain")
        assert raw.status_code == 413
        assert raw.json()["error"]["code"] == "too_large"
        # Content-Length alone decides: the body is never read.
        lying = api.generic(
            "POST", "/api/v1/snapshots/", b"tiny", content_type="text/plain", CONTENT_LENGTH="999999999"
        )
        assert lying.status_code == 413
        big = SimpleUploadedFile("big.txt", b"y" * 5000)
        multipart = api.post("/api/v1/snapshots/", {"file": big}, format="multipart")
        assert multipart.status_code == 413
        ok = api.generic("POST", "/api/v1/snapshots/", b"z" * 900, content_type="text/plain")
        assert ok.status_code == 202
    assert Snapshot.objects.count() == 2


def test_uploads_are_throttled(world, settings):
    cache.clear()
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"uploads": "2/min"}}
    api = world.api("engineer_b")
    codes = [
        api.generic(
            "POST", "/api/v1/snapshots/", f"$ uptime {i}\n".encode(), content_type="text/plain"
        ).status_code
        for i in range(3)
    ]
    assert codes == [202, 202, 429]
    assert api.get("/api/v1/snapshots/").status_code == 200  # reading is not throttled
    r = api.generic("POST", "/api/v1/snapshots/", b"$ uptime\n", content_type="text/plain")
    assert r.status_code == 429 and r["Retry-After"]
    assert (
        r.json()["error"]["code"] == "throttled" and r.json()["error"]["details"]["retry_after_seconds"] > 0
    )
    # Per user: another engineer still uploads.
    other = world.api("engineer_a").generic("POST", "/api/v1/snapshots/", b"$ w\n", content_type="text/plain")
    assert other.status_code == 202
    cache.clear()


def test_detail_shape_when_done(world):
    data = world.api("engineer_a").get(f"/api/v1/snapshots/{world.snapshot.pk}/").json()
    assert data["status"] == "done" and data["kind"] == "transcript"
    rules = [f["rule"] for f in data["findings"]]
    assert "net.netem_delay" in rules and "oceanbase.proxy_routing_not_default" in rules
    netem = next(f for f in data["findings"] if f["rule"] == "net.netem_delay")
    assert netem["severity"] in ("critical", "warning", "info") and netem["title"]
    assert "remove-netem" in netem["measures"]
    assert netem["evidence"] and netem["evidence"][0]["artifact"].startswith("transcript:")
    assert data["facts_summary"]["cpus"] == world.snapshot.facts["cpu"]["cpus"]
    assert isinstance(data["similar_cases"], list) and isinstance(data["errors"], list)
    assert isinstance(data["skipped"], list)
    assert data["owner"] == "engineer_a" and data["team"] == "team-a"


def test_detail_while_queued_has_no_findings(world, django_user_model):
    snap = uploads.create_snapshot(owner=world.users["engineer_a"], data=b"$ uptime\n", filename="u.txt")
    data = world.api("engineer_a").get(f"/api/v1/snapshots/{snap.pk}/").json()
    assert data["status"] == "queued" and data["findings"] == []


def test_list_filters_and_pagination(world, monkeypatch):
    from rest_framework.pagination import PageNumberPagination

    monkeypatch.setattr(PageNumberPagination, "page_size", 1)
    other = uploads.create_snapshot(
        owner=world.users["engineer_a"], data=b"$ uptime\n", filename="u.txt", cluster="c9"
    )
    api = world.api("engineer_a")
    page = api.get("/api/v1/snapshots/").json()
    assert page["count"] == 2 and len(page["results"]) == 1 and page["next"]
    assert [s["id"] for s in api.get("/api/v1/snapshots/?status=queued").json()["results"]] == [other.pk]
    assert [s["id"] for s in api.get("/api/v1/snapshots/?cluster=c9").json()["results"]] == [other.pk]
    by_rule = api.get("/api/v1/snapshots/?rule=net.netem_delay").json()["results"]
    assert [s["id"] for s in by_rule] == [world.snapshot.pk]
    assert api.get("/api/v1/snapshots/?rule=no.such_rule").json()["count"] == 0
    assert api.get("/api/v1/snapshots/?status=bogus").status_code == 400
    # Team B sees none of team A's snapshots.
    assert world.api("engineer_b").get("/api/v1/snapshots/").json()["count"] == 0
    assert world.api("support").get("/api/v1/snapshots/").json()["count"] == 2
    assert api.get("/api/v1/snapshots/?page=9").status_code == 404


def test_markdown_report_in_both_languages(world):
    api = world.api("engineer_a")
    url = f"/api/v1/snapshots/{world.snapshot.pk}/report.md"
    en = api.get(url)
    assert en.status_code == 200 and en["Content-Type"].startswith("text/markdown")
    text = en.content.decode()
    assert text.startswith("# Snapshot report: obs-197")
    assert "`net.netem_delay`" in text and "`remove-netem`" in text and "## Similar cases" in text
    assert f"http://testserver/snapshots/{world.snapshot.pk}/" in text
    zh = api.get(url, {"lang": "zh-hans"}).content.decode()
    assert zh.startswith("# 快照分析报告") and "## 相似案例" in zh and "证据" in zh
    by_header = api.get(url, HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9").content.decode()
    assert by_header.startswith("# 快照分析报告")


def test_reanalyze_requeues(world, no_queue):
    r = world.api("engineer_a").post(f"/api/v1/snapshots/{world.snapshot.pk}/reanalyze/")
    assert r.status_code == 202 and r.json()["status"] == "queued"
    assert no_queue[-1] == world.snapshot.pk


def test_similar_endpoint(world):
    world.snapshot.similar_cases = [
        {"slug": "oceanbase-bmsql-tuning", "score": 0.9, "shared_rules": ["net.netem_delay"], "title": "T"}
    ]
    world.snapshot.save(update_fields=["similar_cases"])
    data = world.api("engineer_a").get(f"/api/v1/snapshots/{world.snapshot.pk}/similar/").json()
    assert data[0]["slug"] == "oceanbase-bmsql-tuning" and data[0]["shared_rules"] == ["net.netem_delay"]
    assert data[0]["url"].endswith("/api/v1/cases/oceanbase-bmsql-tuning/")
    # Odd stored values never break the endpoint.
    world.snapshot.similar_cases = [
        {"slug": "x y", "score": "n/a", "shared_rules": None},
        "junk",
        {"score": 1},
    ]
    world.snapshot.save(update_fields=["similar_cases"])
    data = world.api("engineer_a").get(f"/api/v1/snapshots/{world.snapshot.pk}/similar/").json()
    assert data == [
        {"slug": "x y", "score": 0.0, "shared_rules": [], "title": "", "title_zh": "", "matched_features": []}
    ]


def test_rules_catalogue(world):
    api = world.api("engineer_b")
    rules = api.get("/api/v1/rules/").json()
    ids = [r["id"] for r in rules]
    assert ids == sorted(ids) and "kvm.vcpus_unpinned" in ids and "fleet.benchmark_spread" in ids
    one = api.get("/api/v1/rules/net.netem_delay/").json()
    assert one["id"] == "net.netem_delay" and "remove-netem" in one["measures"] and one["title_zh"]
    assert one["condition_zh"] and one["rationale_zh"] and all(r["condition_zh"] for r in rules)
    assert api.get("/api/v1/rules/no.such/").status_code == 404


def test_wrong_token_is_401_and_anonymous_is_401(world):
    from rest_framework.test import APIClient

    bad = APIClient()
    bad.credentials(HTTP_AUTHORIZATION="Token " + "0" * 40)
    r = bad.get("/api/v1/snapshots/")
    assert r.status_code == 401 and r.json()["error"]["code"] == "authentication_failed"
    anon = APIClient().get("/api/v1/snapshots/")
    assert anon.status_code == 401 and anon.json()["error"]["code"] == "not_authenticated"
    assert anon["WWW-Authenticate"] == "Token"


def test_collect_sh_download(world):
    from rest_framework.test import APIClient

    r = world.api("engineer_b").get("/collect.sh")
    assert r.status_code == 200 and r["Content-Type"].startswith("text/x-shellscript")
    assert r.content.startswith(b"#!/bin/sh") and b"--upload" in r.content
    assert APIClient().get("/collect.sh").status_code == 401
