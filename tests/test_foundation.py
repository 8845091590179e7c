"""The project's shell: deployment files, settings hardening, make targets and
the translation catalogue."""

import gettext
import os
import re
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, service_unavailable

SERVICES = {"postgres", "redis", "web", "worker", "beat-worker", "beat"}


def clean_env(tmp_path: Path, **extra: str) -> dict:
    env = {
        k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "DEBUG")
    }
    env["CASEBOOK_DATA_DIR"] = str(tmp_path / "data")
    env.update(extra)
    return env


# --- docker compose and Dockerfile ------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_names_the_services(compose):
    assert set(compose["services"]) == SERVICES


def test_compose_healthchecks(compose):
    services = compose["services"]
    for name in ("postgres", "redis", "web", "worker", "beat-worker"):
        check = services[name]["healthcheck"]
        assert check.get("test"), name
        assert not check.get("disable"), name
    assert "/healthz" in " ".join(services["web"]["healthcheck"]["test"])


def test_app_services_share_one_image_and_the_data_volumes(compose):
    services = compose["services"]
    app = [services[name] for name in ("web", "worker", "beat-worker", "beat")]
    assert {s["image"] for s in app} == {"casebook:latest"}
    assert all(s["build"] == "." for s in app)
    for service in app:
        assert service["environment"]["REDIS_URL"].startswith("redis://redis:")
        assert service["environment"]["DATABASE_URL"].startswith("postgres://")
        mounts = {volume.split(":")[0]: volume.split(":")[1] for volume in service["volumes"]}
        assert mounts == {"casebook-data": "/data", "casebook-uploads": "/data/uploads"}
    assert "celery" in services["worker"]["command"] and "worker" in services["worker"]["command"]
    assert "beat" in services["beat"]["command"]
    # Beat tasks have their own queue and worker; analyses never hold them up.
    assert services["worker"]["command"][services["worker"]["command"].index("-Q") + 1] == "celery"
    beat_worker = services["beat-worker"]["command"]
    assert "worker" in beat_worker and beat_worker[beat_worker.index("-Q") + 1] == "casebook-beat"
    assert "gunicorn config.wsgi" in services["web"]["command"]
    assert {"casebook-data", "casebook-uploads", "postgres-data", "redis-data"} <= set(compose["volumes"])


def test_dockerfile_installs_the_pinned_requirements_and_drops_root():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert dockerfile.startswith("# ") and "FROM python:3.11-slim" in dockerfile
    assert "pip install -r requirements.txt" in dockerfile
    assert "collectstatic" in dockerfile and "compilemessages" in dockerfile
    users = re.findall(r"^USER (\S+)", dockerfile, re.M)
    assert users and users[-1] not in ("root", "0")


def test_env_example_lists_only_variables_the_project_reads():
    read_by = "\n".join(
        p.read_text()
        for p in [
            *ROOT.glob("config/*.py"),
            ROOT / "docker-compose.yml",
            *ROOT.glob("accounts/**/*.py"),
        ]
    )
    names = re.findall(r"^#?\s*([A-Z][A-Z0-9_]+)=", (ROOT / ".env.example").read_text(), re.M)
    assert {"SECRET_KEY", "ALLOWED_HOSTS", "DEBUG", "DATABASE_URL", "REDIS_URL"} <= set(names)
    for name in names:
        assert name in read_by, f"{name} in .env.example is not read anywhere"


def test_requirements_are_fully_pinned():
    for name in ("requirements.txt", "requirements-dev.txt"):
        for line in (ROOT / name).read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if not line or line.startswith("-r "):
                continue
            assert re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[A-Za-z0-9_.+\-]+", line), f"{name}: {line}"


# --- settings -------------------------------------------------------------------------


def test_check_deploy_is_clean_with_production_settings(tmp_path):
    env = clean_env(
        tmp_path,
        DEBUG="false",
        SECRET_KEY=secrets.token_urlsafe(50),
        CASEBOOK_HTTPS="true",
        ALLOWED_HOSTS="casebook.example.com",
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "System check identified no issues (0 silenced)." in output
    assert "WARNING" not in output.upper().replace("--FAIL-LEVEL", "")


@pytest.mark.parametrize("key", ["change-me-to-a-long-random-string", "CHANGEME", "django-insecure-abc123"])
def test_a_placeholder_secret_key_is_refused_at_start_when_debug_is_off(tmp_path, key):
    def check(debug: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "manage.py", "check"],
            cwd=ROOT,
            env=clean_env(tmp_path, DEBUG=debug, SECRET_KEY=key),
            capture_output=True,
            text=True,
            timeout=120,
        )

    refused = check("false")
    assert refused.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY is a published placeholder" in refused.stderr
    assert key not in refused.stderr  # the message does not repeat the key
    assert check("true").returncode == 0  # a developer's machine may keep it


def test_embedded_default_is_not_deploy_ready(tmp_path):
    """Without HTTPS settings the deploy check must complain: proves the clean
    result above comes from the settings, not from a silenced check."""
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=ROOT,
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "security.W004" in result.stdout + result.stderr  # no HSTS


# --- make -------------------------------------------------------------------------------


def make_dry_run(target: str, **variables: str) -> str:
    if not shutil.which("make"):
        service_unavailable("make is not installed")
    args = ["make", "-n", target, *(f"{k}={v}" for k, v in variables.items())]
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, check=True, timeout=60).stdout


def test_make_run_prepares_everything_then_serves():
    steps = make_dry_run("run", PORT="8765")
    order = [
        "migrate",
        "compilemessages",
        "collectstatic",
        "loadcases",
        "ensure_admin",
        "gunicorn config.wsgi",
    ]
    positions = [steps.index(step) for step in order]
    assert positions == sorted(positions), steps
    assert "--bind 127.0.0.1:8765" in steps
    assert "requirements-dev.txt" not in steps


def test_make_test_and_lint_use_the_dev_requirements():
    assert "pytest" in make_dry_run("test")
    lint = make_dry_run("lint")
    assert "ruff check ." in lint and "ruff format --check ." in lint


# --- translations ----------------------------------------------------------------------

CATALOGUE = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES"


def test_compiled_catalogue_is_committed_and_current(tmp_path):
    committed = CATALOGUE / "django.mo"
    assert committed.is_file(), "locale/zh_Hans/LC_MESSAGES/django.mo must be committed"
    if not shutil.which("msgfmt"):
        service_unavailable("msgfmt (gettext) is not installed")
    fresh = tmp_path / "django.mo"
    subprocess.run(["msgfmt", "--check", "-o", str(fresh), str(CATALOGUE / "django.po")], check=True)
    with committed.open("rb") as a, fresh.open("rb") as b:
        assert gettext.GNUTranslations(a)._catalog == gettext.GNUTranslations(b)._catalog, (
            "django.mo is stale: run `make messages` and commit the result"
        )


def test_catalogue_is_complete(tmp_path):
    """Every UI string in the code is in django.po, translated and not fuzzy.

    Runs makemessages on a copy of the catalogue, so a string added without
    `make messages` (or hidden from xgettext, e.g. inside an f-string) fails here.
    """
    if not shutil.which("xgettext"):
        service_unavailable("xgettext (gettext) is not installed")
    po = (CATALOGUE / "django.po").read_text(encoding="utf-8")
    entries = po.split("\n\n")[1:]
    fuzzy = [e for e in entries if "#, fuzzy" in e]
    untranslated = [e for e in entries if e.rstrip().endswith('msgstr ""') and "msgstr[" not in e]
    assert not fuzzy, fuzzy[:3]
    assert not untranslated, untranslated[:3]
    copy = tmp_path / "src"
    shutil.copytree(ROOT, copy, ignore=shutil.ignore_patterns(".venv", "data", ".git", "test-output", "*.mo"))
    subprocess.run(
        [
            sys.executable,
            "manage.py",
            "makemessages",
            "-l",
            "zh_Hans",
            "--ignore=tests",
            "--no-obsolete",
            "-v0",
        ],
        cwd=copy,
        check=True,
        env=clean_env(tmp_path),
    )
    fresh = (copy / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po").read_text(encoding="utf-8")
    new = [e for e in fresh.split("\n\n")[1:] if "#, fuzzy" in e or e.rstrip().endswith('msgstr ""')]
    assert not new, f"strings missing from django.po (run `make messages` and translate): {new[:3]}"


def test_navigation_is_translated():
    with (CATALOGUE / "django.mo").open("rb") as f:
        zh = gettext.GNUTranslations(f)
    for english in ("Dashboard", "Snapshots", "Cases", "Sessions", "Log in", "Log out"):
        assert zh.gettext(english) != english, english


def test_blank_database_and_redis_urls_mean_the_embedded_defaults(tmp_path):
    env = clean_env(tmp_path, DATABASE_URL="", REDIS_URL="")
    code = (
        "import django; django.setup(); from django.conf import settings as s; "
        "print(s.DATABASES['default']['ENGINE'], s.CELERY_TASK_ALWAYS_EAGER, s.DATA_DIR)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["django.db.backends.sqlite3", "True", str(tmp_path / "data")]
