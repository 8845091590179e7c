"""Query-count baselines of every page (netbox's habit): each list and detail
page, seen by support staff over the pages' world (tests/pages.py), makes at
most the number of SQL queries recorded here. A page whose count grows fails
with its queries listed: an N+1 shows up as a count that grows with the rows.
Lower a baseline when a change makes a page cheaper; raise one only with the
reason in the commit.

The baselines are per page (the URL name, and the arguments' index for a
name visited more than once); pages of the same name share one.
"""

from __future__ import annotations

import os

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import translation

from tests import pages as page_list
from tests.pages import build_page_world, every_page
from tests.test_access_matrix import EXPECTED

pytestmark = pytest.mark.django_db

# URL name -> the most queries one visit of that page may make (English UI),
# measured on the pages' world; "403"/"404" are the error pages. Every page
# counts the reader's inbox for the navigation (one query).
# CASEBOOK_PRINT_QUERY_COUNTS=1 pytest tests/test_query_counts.py -s prints them.
BASELINES: dict[str, int] = {
    "403": 5,
    "404": 3,
    "accounts:profile": 6,
    "accounts:teams_help": 3,
    "dashboard": 15,
    "desk:host_detail": 10,
    "desk:inbox": 7,
    "desk:search": 3,
    "integrations:personal_webhook_detail": 7,
    "integrations:webhook_detail": 7,
    "integrations:webhook_list": 7,
    "kb:case_detail": 18,
    "kb:case_detail_lang": 18,
    "kb:case_edit": 8,
    "kb:case_history": 6,
    "kb:case_import": 4,
    "kb:case_list": 6,
    "kb:measure_detail": 5,
    "kb:measure_list": 5,
    "password_change": 3,
    "password_change_done": 3,
    "triage:case_new": 7,
    "triage:cluster_detail": 6,
    # the hosts its retro-scan matched: the scan, who may see them, their count and the page of them
    "triage:rule_detail": 18,
    "triage:rule_list": 5,
    "triage:snapshot_detail": 14,
    "triage:snapshot_list": 9,
    "triage:snapshot_new": 3,
    "triage:snapshot_remedy": 6,
    # "Rule cleared" counts real clears: the sessions' after-snapshots are read (issue 25)
    "troubleshoot:effectiveness": 12,
    "troubleshoot:session_detail": 4,
    "troubleshoot:session_list": 6,
    "troubleshoot:session_new": 3,
    "troubleshoot:step": 31,
}


@pytest.fixture
def pages_world(django_user_model, settings, tmp_path, monkeypatch):
    from triage import uploads

    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    # A route the access matrix does not know yet fails tests/test_access_matrix.py
    # on its own; here it is left out rather than failing every count with it.
    routes = page_list.discovered()
    monkeypatch.setattr(page_list, "discovered", lambda: [r for r in routes if not r[1] or r[1] in EXPECTED])
    world = build_page_world(django_user_model)
    return world, every_page(world)


def _queries(client: Client, path: str) -> tuple[int, list[str]]:
    with translation.override("en"), CaptureQueriesContext(connection) as ctx:
        response = client.get(path)
    assert response.status_code in (200, 302, 403, 404), f"{path}: {response.status_code}"
    return len(ctx.captured_queries), [q["sql"] for q in ctx.captured_queries]


def test_every_page_keeps_to_its_query_baseline(pages_world):
    world, pages = pages_world
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(world.users["support"])
    for page in pages:  # warm every per-process cache (rule index, measures) first
        client.get(page.path)
    counts: dict[str, int] = {}
    over = []
    for page in pages:
        if page.anonymous:
            continue
        n, sql = _queries(client, page.path)
        counts[page.name] = max(counts.get(page.name, 0), n)
        limit = BASELINES.get(page.name)
        if limit is None or n > limit:
            over.append(f"{page.name} {page.path}: {n} queries (baseline {limit})\n  " + "\n  ".join(sql))
    if os.environ.get("CASEBOOK_PRINT_QUERY_COUNTS"):
        print("\n".join(f'    "{name}": {n},' for name, n in sorted(counts.items())))
    assert not over, "pages over their query baseline:\n" + "\n".join(over)


# POST /snapshots/new/ with one file: the session, the user, the duplicate
# check, the uploader's team, the row (in a savepoint here: the test's
# transaction). The analysis is queued after the commit, outside the database.
UPLOAD_BASELINE = 7


def test_the_upload_form_keeps_to_its_query_baseline(django_user_model, settings, tmp_path, monkeypatch):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    from triage import uploads

    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    client = Client(HTTP_ACCEPT_LANGUAGE="en")
    client.force_login(django_user_model.objects.create_user("uploader", password="x" * 12))
    for n in range(3):  # the first upload warms the per-process caches; the last one counts
        upload = SimpleUploadedFile("host.txt", f"$ uname -r\n6.1.{n}\n".encode())
        with translation.override("en"), CaptureQueriesContext(connection) as ctx:
            response = client.post(reverse("triage:snapshot_new"), {"label": f"h{n}", "files": upload})
        assert response.status_code == 302, response.content[:500]
    n, sql = len(ctx.captured_queries), [q["sql"] for q in ctx.captured_queries]
    if os.environ.get("CASEBOOK_PRINT_QUERY_COUNTS"):
        print(f"upload: {n}\n  " + "\n  ".join(sql))
    assert n <= UPLOAD_BASELINE, (
        f"the upload made {n} queries (baseline {UPLOAD_BASELINE}):\n  " + "\n  ".join(sql)
    )
