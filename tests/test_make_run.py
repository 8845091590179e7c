"""``make run`` end to end on a fresh data directory: SQLite, no Redis. The
virtualenv is the one this suite runs in (creating another would need the
network); everything after installing is exercised for real, twice."""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.conftest import ROOT, service_unavailable

pytestmark = pytest.mark.slow

ADMIN_PASSWORD = "make-run-test-password-1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def make_env(tmp_path):
    if not shutil.which("make"):
        service_unavailable("make is not installed")
    venv = Path(sys.prefix)
    if not (venv / "bin" / "gunicorn").exists():
        service_unavailable(f"gunicorn is not installed in {venv}")
    env = {
        k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "DEBUG")
    }
    env.update(CASEBOOK_DATA_DIR=str(tmp_path / "data"), CASEBOOK_ADMIN_PASSWORD=ADMIN_PASSWORD)
    return env, venv


def test_make_run_serves_and_can_run_again(make_env, tmp_path):
    env, venv = make_env
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    args = ["make", "run", f"PORT={port}", f"VENV={venv}", f"PYTHON={sys.executable}", "WEB_WORKERS=1"]
    log_path = tmp_path / "make-run.log"
    with log_path.open("w") as log:
        server = subprocess.Popen(
            args, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, text=True, start_new_session=True
        )

    def log_text() -> str:
        return log_path.read_text()

    try:
        deadline = time.monotonic() + 240
        health = None
        while time.monotonic() < deadline and server.poll() is None:
            try:
                # Generous: the first request waits for Django to load in the new worker.
                health = requests.get(f"{base}/healthz", timeout=30)
                break
            except (requests.ConnectionError, requests.Timeout):
                time.sleep(0.5)
        assert health is not None, f"make run did not start serving:\n{log_text()}"
        assert health.status_code == 200, health.text
        assert health.json()["broker"] == "eager"

        browser = requests.Session()
        login_page = browser.get(f"{base}/accounts/login/", timeout=30)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login_page.text).group(1)
        dashboard = browser.post(
            f"{base}/accounts/login/",
            data={"username": "admin", "password": ADMIN_PASSWORD, "csrfmiddlewaretoken": token},
            headers={"Referer": f"{base}/accounts/login/"},
            timeout=30,
        )
        assert dashboard.status_code == 200 and dashboard.url == f"{base}/", log_text()
        assert "Dashboard" in dashboard.text
        # Static files come from the collected, hashed copies (DEBUG is off).
        stylesheet = re.search(r'href="(/static/css/casebook\.[0-9a-f]{12}\.css)"', dashboard.text)
        assert stylesheet, dashboard.text[:2000]
        assert browser.get(base + stylesheet.group(1), timeout=30).status_code == 200
        # The Chinese catalogue is compiled and used.
        browser.post(
            f"{base}/i18n/setlang/",
            data={"language": "zh-hans", "next": "/", "csrfmiddlewaretoken": browser.cookies["csrftoken"]},
            headers={"Referer": f"{base}/"},
            timeout=30,
        )
        assert "概览" in browser.get(f"{base}/", timeout=30).text
    finally:
        try:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()

    output = log_text()
    assert f"Casebook is serving on http://127.0.0.1:{port}/" in output
    assert "Created admin account 'admin' with the password from CASEBOOK_ADMIN_PASSWORD." in output

    # Second run on the same data directory: everything before serving succeeds
    # and the admin account is left alone.
    again = subprocess.run(
        ["make", "prepare", f"VENV={venv}", f"PYTHON={sys.executable}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Admin account 'admin' exists; password unchanged." in again.stdout
