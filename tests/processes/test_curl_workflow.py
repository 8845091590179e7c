"""The README's curl workflow, for real: ``curl`` against gunicorn on a
loopback port, a Celery worker, redis-server and PostgreSQL.

Three inputs from this machine and the seeds: a collector archive made and
uploaded by ``collectors/collect.sh --upload`` itself, a real ``sos report``
(the session fixture of tests/collectors/test_sosreport.py) uploaded as a
multipart file, and a founding-incident transcript sent as the raw request
body. Each is polled to ``done``; the JSON and Markdown reports are fetched.
A wrong token gets 401 and an engineer of another team gets 404.

Run with ``DATABASE_URL=postgres://postgres@127.0.0.1:5432/casebook_<name>``;
without PostgreSQL, redis-server, curl or sos this fails under CI=true.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time

import pytest

from bench.pipeline import Stack
from kb.models import Case
from kb.services import save_case
from tests.collectors.test_sosreport import sosreport  # noqa: F401 - the session fixture
from tests.conftest import FIXTURES, ROOT, service_unavailable

pytestmark = [
    pytest.mark.services,
    pytest.mark.worker,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

TRANSCRIPT = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before" / "zstack-9.txt"
COLLECT_SH = ROOT / "collectors" / "collect.sh"
DONE_TIMEOUT = 240


def curl(*args: str, check: bool = True) -> tuple[int, bytes, dict[str, str]]:
    """Run curl; returns (HTTP status, body, response headers)."""
    out = subprocess.run(
        ["curl", "-sS", "-D", "-", "-w", "\n%{http_code}", *args],
        capture_output=True,
        timeout=120,
        check=False,
    )
    if check:
        assert out.returncode == 0, out.stderr.decode()
    raw, _, code = out.stdout.rpartition(b"\n")
    head, _, body = raw.partition(b"\r\n\r\n")
    while head.startswith(b"HTTP/1.1 100"):
        head, _, body = body.partition(b"\r\n\r\n")
    headers = {}
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(code or 0), body, headers


def auth(token: str) -> list[str]:
    return ["-H", f"Authorization: Token {token}"]


@pytest.fixture
def stack(stack):
    """The harness's servers (tests/processes/harness.py) and one worker."""
    if not shutil.which("curl"):
        service_unavailable("curl is not installed")
    stack.start_worker("curl-worker")
    return stack


@pytest.fixture
def tokens(transactional_db, django_user_model):
    from accounts.models import Membership, Team
    from accounts.services import rotate_api_token
    from kb.services import load_all

    load_all(use_real_engine=False)
    out = {}
    for name in ("alice", "bob"):
        team = Team.objects.create(name=f"team of {name}", slug=f"team-{name}")
        user = django_user_model.objects.create_user(name, password=f"{name}-password-123")
        Membership.objects.create(user=user, team=team, role="engineer")
        out[name] = rotate_api_token(user=user).key
    return out


def poll_done(base: str, api_url: str, token: str, stack: Stack) -> dict:
    assert api_url.startswith(base + "/api/v1/snapshots/"), api_url
    deadline = time.monotonic() + DONE_TIMEOUT
    data: dict = {}
    while time.monotonic() < deadline:
        code, body, _ = curl(*auth(token), api_url)
        assert code == 200, body
        data = json.loads(body)
        if data["status"] in ("done", "failed"):
            break
        time.sleep(0.5)
    assert data.get("status") == "done", (data, stack.procs[-1].text()[-3000:])
    return data


def fetch_reports(base: str, data: dict, token: str) -> str:
    code, body, headers = curl(*auth(token), data["report_md_url"])
    assert code == 200 and headers["content-type"].startswith("text/markdown"), body
    text = body.decode("utf-8")
    assert text.startswith("# Snapshot report: ")
    assert "## Findings" in text and "## Similar cases" in text
    code, zh, _ = curl(*auth(token), "-H", "Accept-Language: zh-CN", data["report_md_url"])
    assert code == 200 and zh.decode("utf-8").startswith("# 快照分析报告")
    return text


def test_curl_workflow(stack, tokens, sosreport, tmp_path):  # noqa: F811 - the imported fixture
    base = stack.base_url
    alice, bob = tokens["alice"], tokens["bob"]

    # 0. The collector comes from the server itself.
    script = tmp_path / "collect.sh"
    code, _, _ = curl(*auth(alice), "-o", str(script), f"{base}/collect.sh")
    assert code == 200 and script.read_bytes() == COLLECT_SH.read_bytes()

    # 1. A collector archive, made on this machine and uploaded by collect.sh --upload.
    archive = tmp_path / "host.tar.gz"
    proc = subprocess.run(
        ["sh", str(script), "--quiet", "--timeout", "10", "--output", str(archive), "--upload", base,
         "--label", "this-host"],
        capture_output=True, text=True, timeout=300, check=False,
        env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "TMPDIR": str(tmp_path), "CASEBOOK_TOKEN": alice},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    archive_path, report_url = proc.stdout.split()
    assert archive_path == str(archive)
    assert report_url.startswith(base + "/snapshots/")
    collector_id = int(report_url.rstrip("/").rsplit("/", 1)[1])
    collector = poll_done(base, f"{base}/api/v1/snapshots/{collector_id}/", alice, stack)
    assert collector["kind"] == "collector" and collector["label"] == "this-host"
    assert collector["facts_summary"]["cpus"]

    # 2. A real sosreport, as a multipart upload.
    code, body, _ = curl(
        *auth(alice), "-F", f"file=@{sosreport}", "-F", "label=sos", f"{base}/api/v1/snapshots/"
    )
    assert code == 202, body
    sos = poll_done(base, json.loads(body)["api_url"], alice, stack)
    assert sos["kind"] == "sosreport" and sos["facts_summary"]["cpus"]

    # 3. A founding-incident transcript, as the raw request body.
    code, body, headers = curl(
        *auth(alice), "-H", "Content-Type: text/plain", "--data-binary", f"@{TRANSCRIPT}",
        f"{base}/api/v1/snapshots/?label=zstack-9",
    )  # fmt: skip
    assert code == 202, body
    accepted = json.loads(body)
    assert headers["location"] == accepted["api_url"] and accepted["status"] in (
        "queued",
        "analyzing",
        "done",
    )
    transcript = poll_done(base, accepted["api_url"], alice, stack)
    rules = {f["rule"] for f in transcript["findings"]}
    assert {"kvm.vcpus_unpinned", "kvm.vcpu_hotplug_enabled"} <= rules, rules
    for finding in transcript["findings"]:
        assert set(finding) >= {"rule", "severity", "title", "evidence", "measures"}

    for data in (collector, sos, transcript):
        text = fetch_reports(base, data, alice)
    assert "`kvm.vcpus_unpinned`" in text and "`pin-vcpus`" in text

    # The list shows all three to their owner, none to another team.
    code, body, _ = curl(*auth(alice), f"{base}/api/v1/snapshots/?status=done")
    assert code == 200 and json.loads(body)["count"] == 3

    # 4. Access control over the wire.
    code, body, headers = curl("-H", "Authorization: Token " + "f" * 40, transcript["api_url"])
    assert code == 401 and json.loads(body)["error"]["code"] == "authentication_failed"
    code, body, _ = curl(transcript["api_url"])
    assert code == 401
    for url in (transcript["api_url"], transcript["report_md_url"]):
        code, body, _ = curl(*auth(bob), url)
        assert code == 404 and json.loads(body)["error"]["code"] == "not_found", url
    code, body, _ = curl(*auth(bob), f"{base}/api/v1/snapshots/")
    assert json.loads(body)["count"] == 0

    # 5. Similar cases come from the worker's own rule index (kb.rule_index),
    # which follows the cases this process publishes: the first by reading
    # them all (a new generation epoch), the second through the change log.
    for n, slug in enumerate(["zstack-follow-up", "zstack-second-follow-up"]):
        case = Case(slug=slug, language="en", title=slug, symptom="x", state="published")
        case.signature = {"rules": sorted(rules), "features": []}
        save_case(case)
        paste = tmp_path / f"again-{n}.txt"  # another upload, not the same bytes again
        paste.write_bytes(TRANSCRIPT.read_bytes() + f"\n# pasted again ({n})\n".encode())
        code, body, _ = curl(
            *auth(alice), "-H", "Content-Type: text/plain", "--data-binary", f"@{paste}",
            f"{base}/api/v1/snapshots/?label=zstack-9-again-{n}",
        )  # fmt: skip
        again = poll_done(base, json.loads(body)["api_url"], alice, stack)
        assert slug in [c["slug"] for c in again["similar_cases"]], again["similar_cases"]
