"""Content-Security-Policy: the header on every page, and pages that need no
exception to it (no inline script or style, htmx told not to inject styles)."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.django_db

TEMPLATES = sorted((ROOT / "templates").rglob("*.html"))
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I)
EVENT_HANDLER = re.compile(r"\son[a-z]+\s*=", re.I)


def test_header_is_strict(client, django_user_model):
    policy = client.get("/accounts/login/")["Content-Security-Policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["script-src"] == "'self'" and directives["style-src"] == "'self'"
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert directives["object-src"] == "'none'" and directives["frame-ancestors"] == "'none'"
    client.force_login(django_user_model.objects.create_user("csp", password="pw-csp-12345"))
    for url in ("/", "/snapshots/", "/snapshots/new/", "/sessions/", "/cases/", "/api/docs/"):
        assert client.get(url)["Content-Security-Policy"] == policy, url


def test_every_answer_denies_browser_features_with_a_permissions_policy(client, django_user_model):
    policy = client.get("/accounts/login/")["Permissions-Policy"]
    features = dict(item.strip().split("=", 1) for item in policy.split(","))
    for feature in ("camera", "microphone", "geolocation", "payment", "usb"):
        assert features[feature] == "()", feature
    client.force_login(django_user_model.objects.create_user("pp", password="pw-pp-123456"))
    for url in ("/", "/snapshots/", "/api/v1/snapshots/", "/healthz"):
        assert client.get(url)["Permissions-Policy"] == policy, url


@pytest.mark.parametrize("path", TEMPLATES, ids=lambda p: str(p.relative_to(ROOT / "templates")))
def test_templates_have_no_inline_script_or_style(path):
    text = path.read_text()
    assert not INLINE_SCRIPT.search(text), "inline <script>: move it to static/js"
    assert "<style" not in text and "style=" not in text, "inline style: move it to static/css"
    assert not EVENT_HANDLER.search(text) and "javascript:" not in text


def test_htmx_does_not_inject_styles_or_eval(client):
    html = client.get("/accounts/login/").content.decode()
    meta = re.search(r"<meta name=\"htmx-config\" content='([^']+)'>", html)
    import json

    config = json.loads(meta.group(1))
    assert config["includeIndicatorStyles"] is False and config["allowEval"] is False


def test_charts_carry_no_inline_style():
    from triage.charts import host_bars

    svg = host_bars([("db-1", 12.0, False), ("db-2", 30.0, True)], unit="GB/s", title="STREAM")
    assert "style=" not in svg and 'viewBox="0 0' in svg
