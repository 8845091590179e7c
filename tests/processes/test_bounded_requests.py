"""Rate limits, sign-in lockout and request bodies against the real server:
gunicorn with two worker processes (four threads each) sharing a real Redis
cache, on a SQLite data directory of its own.

- 260 API uploads from one user, all at once: at most the configured rate
  (120/min) pass, every other answer is 429 with Retry-After;
- the same for the web upload form (another user, its own counter);
- 10 wrong passwords lock sign-in for that account;
- a declared 2 GiB body with nothing sent is answered at once;
- an upload temp file left by a ``kill -9`` of the server is removed when
  the server starts again.

Redis DB 13 and a unique key prefix and queue name keep this run apart from
any other on the machine; no Celery worker runs (uploads stay queued).
"""

from __future__ import annotations

import http.client
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlencode

import pytest

from bench.pipeline import free_port, wait_port
from tests.conftest import ROOT

pytestmark = [pytest.mark.services, pytest.mark.slow]

RATE = 120
BURST = 260
PASSWORD = "bounded-password-123"
USERS = ("api", "web", "locked", "killer")


class Server:
    def __init__(self, workdir: Path, redis_url: str):
        self.workdir = workdir
        self.port = free_port()
        tag = secrets.token_hex(4)
        self.env = {
            **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CI_WORKER_DELAY")},
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "CASEBOOK_DATA_DIR": str(workdir / "data"),
            "REDIS_URL": redis_url,
            "CASEBOOK_CACHE_PREFIX": f"casebook-bounded-{tag}",
            "CASEBOOK_QUEUE": f"casebook-bounded-{tag}",
            "CASEBOOK_UPLOAD_RATE": f"{RATE}/min",
            "SECRET_KEY": secrets.token_hex(32),
            "CASEBOOK_MANIFEST_STATIC": "0",
            "DEBUG": "0",
            "PYTHONUNBUFFERED": "1",
        }
        self.proc: subprocess.Popen | None = None

    def manage(self, *args: str) -> str:
        out = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert out.returncode == 0, out.stderr
        return out.stdout

    def start(self) -> None:
        logfile = self.workdir / "gunicorn.log"
        seen = logfile.read_text().count("Booting worker") if logfile.exists() else 0
        log = open(logfile, "ab")  # noqa: SIM115 - owned by the child
        argv = [sys.executable, "-m", "gunicorn", "config.wsgi", "-b", f"127.0.0.1:{self.port}"]
        argv += ["--workers", "2", "--threads", "4", "--timeout", "60", "--no-control-socket"]
        self.proc = subprocess.Popen(
            argv, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        log.close()
        assert wait_port(self.port, 60), logfile.read_text()[-3000:]
        # Both workers booted, and each has loaded the application (config.wsgi):
        # one answered request per worker is not guaranteed, a status page is.
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and logfile.read_text().count("Booting worker") < seen + 2:
            time.sleep(0.2)
        for _ in range(8):
            assert self.request("GET", "/healthz")[0] in (200, 503)

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        wait_port(self.port, 10, up=False)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()

    def request(self, method: str, path: str, body: bytes = b"", headers: dict | None = None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            conn.close()


@pytest.fixture(scope="module")
def server(redis_url, tmp_path_factory):
    redis_db13 = redis_url.rsplit("/", 1)[0] + "/13"
    srv = Server(tmp_path_factory.mktemp("bounded-stack"), redis_db13)
    srv.manage("migrate", "--noinput", "-v0")
    script = (
        "from django.contrib.auth import get_user_model\n"
        "from accounts.services import rotate_api_token\n"
        f"for name in {USERS!r}:\n"
        f"    user = get_user_model().objects.create_user(name, password={PASSWORD!r})\n"
        "    print('TOKEN', name, rotate_api_token(user=user).key)\n"
    )
    output = srv.manage("shell", "-c", script)
    srv.tokens = dict(line.split()[1:] for line in output.splitlines() if line.startswith("TOKEN "))
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


def sign_in(server: Server, username: str, password: str = PASSWORD) -> tuple[int, dict, str]:
    """Sign in with the form; returns (status, cookies, CSRF token)."""
    status, headers, body = server.request("GET", "/accounts/login/")
    cookies = dict(re.findall(r"(csrftoken)=([^;]+)", headers.get("Set-Cookie", "")))
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', body).group(1).decode()
    form = urlencode({"username": username, "password": password, "csrfmiddlewaretoken": token})
    status, headers, _ = server.request(
        "POST",
        "/accounts/login/",
        form.encode(),
        {"Content-Type": "application/x-www-form-urlencoded", "Cookie": f"csrftoken={cookies['csrftoken']}"},
    )
    for name, value in re.findall(r"(sessionid|csrftoken)=([^;]+)", headers.get("Set-Cookie", "")):
        cookies[name] = value
    return status, cookies, cookies["csrftoken"]


def burst(send, n: int = BURST) -> tuple[list[tuple[int, dict]], float]:
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=26) as pool:
        results = list(pool.map(send, range(n)))
    return results, time.monotonic() - start


def check_burst(results, elapsed: float, ok: int) -> None:
    passed = [r for r in results if r[0] == ok]
    refused = [r for r in results if r[0] == 429]
    assert len(passed) + len(refused) == BURST, sorted({r[0] for r in results})
    # All within one window of the rate: exactly the rate passes.
    assert elapsed < 60
    assert len(passed) == RATE, (len(passed), elapsed)
    assert all(0 < int(h["Retry-After"]) <= 60 for _s, h in refused)


def test_api_uploads_hold_the_rate_across_two_workers(server):
    token = server.tokens["api"]

    def send(i: int):
        status, headers, _ = server.request(
            "POST",
            "/api/v1/snapshots/",
            f"$ uptime\n 10:00:{i % 60:02d} up {i} days\n".encode(),
            {"Authorization": f"Token {token}", "Content-Type": "text/plain"},
        )
        return status, headers

    results, elapsed = burst(send)
    check_burst(results, elapsed, ok=202)
    print(f"API: {BURST} uploads in {elapsed:.2f} s, {RATE} accepted")


def test_web_form_holds_the_rate_across_two_workers(server):
    status, cookies, csrf = sign_in(server, "web")
    assert status == 302
    cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())

    def send(i: int):
        form = urlencode({"transcript": f"$ uname -n\nweb-{i}\n", "csrfmiddlewaretoken": csrf})
        status, headers, body = server.request(
            "POST",
            "/snapshots/new/",
            form.encode(),
            {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie},
        )
        if status == 429:
            assert b"Too many uploads" in body
        return status, headers

    results, elapsed = burst(send)
    check_burst(results, elapsed, ok=302)
    print(f"web form: {BURST} uploads in {elapsed:.2f} s, {RATE} accepted")


def test_declared_two_gib_body_is_answered_at_once(server):
    status, cookies, _csrf = sign_in(server, "killer")
    assert status == 302
    cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        start = time.monotonic()
        sock.sendall(
            (
                "POST /snapshots/new/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Cookie: {cookie}\r\nContent-Type: multipart/form-data; boundary=x\r\n"
                f"Content-Length: {2 << 30}\r\n\r\n"
            ).encode()
        )
        head = sock.recv(4096)
        elapsed = time.monotonic() - start
    assert head.startswith(b"HTTP/1.1 413"), head[:200]
    assert elapsed < 5


def test_temp_file_left_by_kill_9_is_removed_at_start_up(server):
    status, cookies, csrf = sign_in(server, "killer")
    assert status == 302
    cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
    tmp = server.workdir / "data" / "tmp"
    before = set(os.listdir(tmp))
    size = 8 << 20
    head = (
        f'--x\r\nContent-Disposition: form-data; name="csrfmiddlewaretoken"\r\n\r\n{csrf}\r\n'
        '--x\r\nContent-Disposition: form-data; name="files"; filename="big.log"\r\n'
        "Content-Type: text/plain\r\n\r\n"
    ).encode()
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    try:
        sock.sendall(
            (
                "POST /snapshots/new/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Cookie: {cookie}\r\nContent-Type: multipart/form-data; boundary=x\r\n"
                f"Content-Length: {size}\r\n\r\n"
            ).encode()
            + head
            + b"x" * (4 << 20)
        )
        deadline = time.monotonic() + 30
        left: set[str] = set()
        while time.monotonic() < deadline and not left:
            left = set(os.listdir(tmp)) - before
            time.sleep(0.1)
        assert left, "the upload was not spooled to disk"
        server.kill()
    finally:
        sock.close()
    assert left <= set(os.listdir(tmp))  # a kill -9 leaves the file behind
    server.start()
    # Each worker cleans up as it loads the application (nothing else runs here).
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and left & set(os.listdir(tmp)):
        time.sleep(0.2)
    assert not left & set(os.listdir(tmp))


def test_ten_wrong_passwords_lock_sign_in(server):
    # Last in this module: the ten failures also lock the address (127.0.0.1).
    codes = [sign_in(server, "locked", f"wrong-{i}")[0] for i in range(10)]
    assert codes == [200] * 9 + [429]
    status, _cookies, _ = sign_in(server, "locked")  # the right password, too late
    assert status == 429
