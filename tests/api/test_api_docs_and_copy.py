"""/api/schema/ and /api/docs/ (vendored Swagger UI), and the "copy as
Markdown" include of the report page."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders
from django.template.loader import render_to_string
from django.test import Client
from django.utils import translation

pytestmark = pytest.mark.django_db


def test_schema_documents_the_api(world):
    r = world.api("engineer_a").get("/api/schema/", HTTP_ACCEPT="application/json")
    assert r.status_code == 200
    doc = r.json()
    assert doc["openapi"].startswith("3.")
    paths = doc["paths"]
    for path in (
        "/api/v1/snapshots/", "/api/v1/snapshots/{id}/", "/api/v1/snapshots/{id}/report.md",
        "/api/v1/snapshots/{id}/reanalyze/", "/api/v1/snapshots/{id}/similar/", "/api/v1/rules/",
        "/api/v1/cases/", "/api/v1/cases/{slug}/", "/api/v1/sessions/", "/api/v1/sessions/{id}/measures/",
    ):  # fmt: skip
        assert path in paths, path
    upload = paths["/api/v1/snapshots/"]["post"]
    assert set(upload["requestBody"]["content"]) >= {"multipart/form-data", "application/gzip", "text/plain"}
    assert {"202", "413", "415", "401"} <= set(upload["responses"])
    assert "text/markdown" in paths["/api/v1/snapshots/{id}/report.md"]["get"]["responses"]["200"]["content"]
    assert doc["components"]["schemas"]["Error"]["required"] == ["error"]
    assert {"tokenAuth", "cookieAuth"} <= set(doc["components"]["securitySchemes"])


def test_swagger_ui_is_served_from_vendored_assets(world):
    client = Client()
    client.force_login(world.users["engineer_b"])
    html = client.get("/api/docs/").content.decode()
    assert "swagger-ui" in html
    assert not re.search(r"https?://(?!testserver)", html.replace("http://www.w3.org", "")), (
        "external URL in docs"
    )
    assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', html)
    assert any("swagger-ui-bundle" in a for a in assets)
    for asset in assets:
        assert finders.find(asset.removeprefix("/static/")), asset
    assert Client().get("/api/docs/").status_code in (302, 401, 403)


def test_copy_markdown_include(world):
    with translation.override("zh-hans"):
        html = render_to_string("triage/_copy_markdown.html", {"snapshot": world.snapshot})
    url = f"/api/v1/snapshots/{world.snapshot.pk}/report.md?lang=zh-hans"
    assert f'data-copy-markdown="{url}"' in html
    assert "js/copy-markdown.js" in html
    assert finders.find("js/copy-markdown.js")
    # What the button fetches, with the page's session:
    client = Client()
    client.force_login(world.users["engineer_a"])
    report = client.get(url)
    assert report.status_code == 200 and report.content.decode().startswith("# 快照分析报告")


def test_schema_is_valid_and_free_of_warnings(tmp_path):
    """OpenAPI 3 validation, and no drf-spectacular warning (a guessed type or a
    colliding operation id would make the schema lie to its clients)."""
    from django.core.management import call_command

    out = tmp_path / "schema.yml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    assert out.read_text().startswith("openapi: 3.")
