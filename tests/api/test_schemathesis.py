"""Property-based run of the whole API against its own OpenAPI schema.

Schemathesis loads ``/api/schema/`` from the Django WSGI application (as an
authenticated engineer of team A, who owns an analysed snapshot and a
session) and generates requests for every operation. Checked on every
response: no 5xx, the status is documented, the content type is the
documented one, and the body matches the documented schema. Examples per
operation are bounded so the run stays under a minute.
"""

from __future__ import annotations

import json

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.api.world import build_world

MAX_EXAMPLES = 15


@schemathesis.serializer("application/gzip", "application/x-gzip", "application/x-xz", "application/x-tar")
def _binary(ctx, value) -> bytes:
    """Generated bodies of the raw upload types, as bytes."""
    if isinstance(value, bytes):
        return value
    return str(value).encode("utf-8", "surrogatepass")


CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture
def api_world(db, django_user_model, settings, tmp_path, monkeypatch):
    from triage import uploads

    settings.ALLOWED_HOSTS = ["*"]
    settings.MEDIA_ROOT = tmp_path / "media"
    # A generous rate: throttling is tested on its own; here 429s would only hide other answers.
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"uploads": "10000/min"}}
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    # The WSGI handler closes "old" connections around each request; that
    # would close the test's transaction (Django's test Client does the same).
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield build_world(django_user_model)
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def auth_headers(api_world) -> dict[str, str]:
    return {"Authorization": f"Token {api_world.tokens['engineer_a']}"}


def _load_schema():
    """The schema ``/api/schema/`` serves, loaded from the WSGI application.
    Collection has no database, so the schema view is called with a user that
    is never saved (the view only checks ``is_authenticated``)."""
    from django.contrib.auth import get_user_model
    from django.test import RequestFactory
    from drf_spectacular.views import SpectacularJSONAPIView
    from rest_framework.test import force_authenticate

    request = RequestFactory().get("/api/schema/")
    force_authenticate(request, user=get_user_model()(username="schema"))
    response = SpectacularJSONAPIView.as_view()(request)
    response.render()
    loaded = schemathesis.openapi.from_dict(json.loads(response.content))
    loaded.app = get_wsgi_application()
    return loaded


# (schemathesis.pytest.from_fixture would load it per test with a database,
# but it does not run under pytest 9: it reads a private ``_nodeid``.)
schema = _load_schema()


def test_api_conforms_to_its_schema(auth_headers):
    """Every operation, positive then negative inputs. One world for the whole
    run (built once, not per operation) keeps it well under a minute."""
    failures = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 17
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=MAX_EXAMPLES,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def check(case):
                case.call_and_validate(headers=auth_headers, checks=CHECKS)

            try:
                check()
            except Unsatisfiable:
                # No invalid input exists (no parameters, or free-form strings only).
                assert mode == GenerationMode.NEGATIVE, operation.label
            except Exception as exc:
                failures.append(f"{operation.label} ({mode.value}): {exc}")
    assert not failures, "\n\n".join(failures)


def test_real_objects_conform_to_the_schema(api_world, auth_headers):
    """Generated ids rarely hit an object; these reads use team A's analysed
    snapshot, its session and a founding case, so the documented shapes of
    findings, facts summaries and sessions are checked against real data."""
    world = api_world
    world.snapshot.similar_cases = [
        {"slug": "oceanbase-bmsql-tuning", "score": 0.8, "shared_rules": ["net.netem_delay"], "title": "x"}
    ]
    world.snapshot.save(update_fields=["similar_cases"])
    reads = {
        "/api/v1/snapshots/": {},
        "/api/v1/snapshots/{id}/": {"id": world.snapshot.pk},
        "/api/v1/snapshots/{id}/similar/": {"id": world.snapshot.pk},
        "/api/v1/snapshots/{id}/report.md": {"id": world.snapshot.pk},
        "/api/v1/sessions/": {},
        "/api/v1/sessions/{id}/": {"id": world.session.pk},
        "/api/v1/rules/{rule_id}/": {"rule_id": "net.netem_delay"},
        "/api/v1/cases/{slug}/": {"slug": "oceanbase-bmsql-tuning"},
    }
    by_path = {op.path: op for op in (r.ok() for r in schema.get_all_operations()) if op.method == "get"}
    for path, params in reads.items():
        case = by_path[path].Case(path_parameters=params)
        response = case.call_and_validate(headers=auth_headers, checks=CHECKS)
        assert response.status_code == 200, (path, response.text[:500])
    detail = by_path["/api/v1/snapshots/{id}/"].Case(path_parameters={"id": world.snapshot.pk})
    assert detail.call(headers=auth_headers).json()["findings"]
    # Writes on real objects: record a measure with its metric, then close.
    posts = {op.path: op for op in (r.ok() for r in schema.get_all_operations()) if op.method == "post"}
    for path, body in (
        (
            "/api/v1/sessions/{id}/measures/",
            {"measure": "remove-netem", "status": "applied", "metric_after": 1.5},
        ),
        ("/api/v1/sessions/{id}/close/", {"outcome": "resolved", "root_cause": "netem", "lessons": ""}),
        ("/api/v1/snapshots/{id}/reanalyze/", None),
    ):
        target = world.snapshot.pk if "snapshots" in path else world.session.pk
        kwargs = {"body": body, "media_type": "application/json"} if body is not None else {}
        case = posts[path].Case(path_parameters={"id": target}, **kwargs)
        response = case.call_and_validate(headers=auth_headers, checks=CHECKS)
        assert response.status_code in (200, 202), (path, response.text[:500])
