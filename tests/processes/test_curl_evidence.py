"""Issue 12, acceptance 4 over the wire: for each founding case, ``curl``
uploads the host's transcript with one needed block removed, then POSTs the
real block to ``/api/v1/snapshots/{id}/artifacts/`` (as the raw text body and
as a multipart file); the SAME snapshot is analysed again and the missing
finding appears, the earlier analysis kept in its history.

Two servers: Django's live server with the analysis run in-process on commit
(runs anywhere, SQLite included), and the full stack of
tests/processes/test_curl_workflow.py (gunicorn, a Celery worker, Redis,
PostgreSQL; needs ``DATABASE_URL`` pointing to PostgreSQL, else it skips —
fails under CI=true).
"""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest

from tests.conftest import service_unavailable
from tests.processes.test_curl_workflow import auth, curl, poll_done, stack, tokens  # noqa: F401 - fixtures
from tests.triage.founding_gaps import GAPS
from triage import analysis, uploads

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def upload_cut(base: str, token: str, gap, tmp_path) -> dict:
    text, block = gap.split()
    cut = tmp_path / f"cut-{gap.host_file}"
    cut.write_text(text, encoding="utf-8")
    (tmp_path / f"block-{gap.host_file}").write_text(block, encoding="utf-8")
    code, body, _ = curl(
        *auth(token), "-H", "Content-Type: text/plain", "--data-binary", f"@{cut}",
        f"{base}/api/v1/snapshots/?label={gap.path.stem}-cut",
    )  # fmt: skip
    assert code == 202, body
    return json.loads(body)


def add_block(base: str, token: str, snapshot: dict, gap, tmp_path, *, multipart: bool) -> dict:
    block = tmp_path / f"block-{gap.host_file}"
    url = f"{base}/api/v1/snapshots/{snapshot['id']}/artifacts/"
    if multipart:
        args = ["-F", f"file=@{block};type=text/plain", "-F", f"name={gap.command}.txt", url]
    else:
        args = ["-H", "Content-Type: text/plain", "--data-binary", f"@{block}", url + "?name=pasted.txt"]
    code, body, headers = curl(*auth(token), *args)
    assert code == 202, body
    accepted = json.loads(body)
    assert accepted["id"] == snapshot["id"] and headers["location"] == accepted["api_url"]
    assert accepted["artifact"]["sha256"] == hashlib.sha256(block.read_bytes()).hexdigest()
    return accepted


def check_case(base: str, token: str, gap, tmp_path, wait, *, multipart: bool) -> None:
    accepted = upload_cut(base, token, gap, tmp_path)
    before = wait(accepted["api_url"])
    assert gap.rule not in {f["rule"] for f in before["findings"]}
    added = add_block(base, token, before, gap, tmp_path, multipart=multipart)
    after = wait(added["api_url"])
    assert after["id"] == before["id"]
    assert gap.rule in {f["rule"] for f in after["findings"]}, after["findings"]
    earlier = after["history"][-1]
    assert sorted(f["rule"] for f in earlier["findings"]) == sorted(f["rule"] for f in before["findings"])
    assert len(after["added_artifacts"]) == 1


@pytest.fixture
def live(live_server, django_user_model, monkeypatch, settings, tmp_path):
    if not shutil.which("curl"):
        service_unavailable("curl is not installed")
    settings.MEDIA_ROOT = tmp_path / "media"
    # No worker here: the analysis runs in the web thread once the row is committed.
    monkeypatch.setattr(
        uploads,
        "enqueue_analysis",
        lambda *, snapshot_id: bool(analysis.analyze_snapshot_now(snapshot_id=snapshot_id)),
    )
    from accounts.services import rotate_api_token

    user = django_user_model.objects.create_user("curler", password="curler-password-123")
    return live_server.url, rotate_api_token(user=user).key


@pytest.mark.parametrize("gap", GAPS, ids=lambda g: g.slug)
@pytest.mark.parametrize("multipart", [False, True], ids=["raw", "multipart"])
def test_curl_adds_the_missing_output_live_server(live, gap, multipart, tmp_path):
    base, token = live

    def wait(api_url: str) -> dict:
        code, body, _ = curl(*auth(token), api_url)
        assert code == 200, body
        data = json.loads(body)
        assert data["status"] == "done", data
        return data

    check_case(base, token, gap, tmp_path, wait, multipart=multipart)


@pytest.mark.services
@pytest.mark.worker
def test_curl_adds_the_missing_output_with_a_worker(stack, tokens, tmp_path):  # noqa: F811 - fixtures
    base, alice, bob = stack.base_url, tokens["alice"], tokens["bob"]
    for i, gap in enumerate(GAPS):
        check_case(
            base,
            alice,
            gap,
            tmp_path,
            lambda api_url: poll_done(base, api_url, alice, stack),
            multipart=bool(i % 2),
        )
    # another team cannot add evidence to alice's snapshot
    code, body, _ = curl(*auth(alice), f"{base}/api/v1/snapshots/")
    first = json.loads(body)["results"][0]
    code, body, _ = curl(
        *auth(bob), "-H", "Content-Type: text/plain", "--data-binary", "numa_hit 1",
        f"{base}/api/v1/snapshots/{first['id']}/artifacts/",
    )  # fmt: skip
    assert code == 404, body
