"""``manage.py analyze PATH... [--json]``: offline analysis of a multi-host snapshot."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command

from tests.conftest import FIXTURES, ROOT

ZSTACK = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before"


def _paths():
    return [str(p) for p in sorted(ZSTACK.iterdir())]


def test_analyze_json_without_database():
    out = io.StringIO()
    call_command("analyze", *_paths(), "--json", "--no-similar", stdout=out)
    payload = json.loads(out.getvalue())
    rules = {f["rule"] for f in payload["findings"]}
    assert {"kvm.vcpus_unpinned", "mysql.numa_interleave_unavailable", "kvm.host_contention"} <= rules
    assert payload["similar_cases"] == []
    assert [h["label"] for h in payload["facts"]["hosts"]] == ["infoplus-db", "zstack-9"]
    assert all(set(e) == {"artifact", "message", "line"} for e in payload["errors"])


def test_analyze_text_report():
    out = io.StringIO()
    call_command("analyze", *_paths(), "--no-similar", stdout=out)
    text = out.getvalue()
    assert "2 host(s)" in text
    assert "[WARNING] kvm.vcpu_hotplug_enabled on zstack-9" in text
    assert "evidence: domains[8c1f5e2a0d9b4c6e9f3a7b2d1e4c6a80].vcpus = 128" in text
    assert "Skipped rules:" in text and "net.netem_delay: missing tc" in text


def test_analyze_rejects_missing_paths():
    with pytest.raises(CommandError):
        call_command("analyze", str(ZSTACK / "no-such-file.txt"), "--no-similar")


@pytest.mark.django_db
def test_analyze_loads_the_founding_cases_and_links_the_similar_one():
    out = io.StringIO()
    call_command("analyze", *_paths(), "--json", stdout=out)
    payload = json.loads(out.getvalue())
    assert payload["similar_cases"], "the founding cases were not loaded"
    best = payload["similar_cases"][0]
    assert best["slug"] == "zstack-mariadb-v2v"
    assert "kvm.vcpus_unpinned" in best["shared_rules"]


def test_analyze_on_a_new_data_directory_migrates_and_loads_cases(tmp_path):
    env = dict(
        os.environ, CASEBOOK_DATA_DIR=str(tmp_path), DATABASE_URL=f"sqlite:///{tmp_path / 'new.sqlite3'}"
    )
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "analyze", *_paths(), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["similar_cases"][0]["slug"] == "zstack-mariadb-v2v"
    assert (tmp_path / "new.sqlite3").exists()
