"""config.enqueue finds a task by its name in a process that never imported
the tasks modules (the web server's): the registry is filled as a worker's is."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

SCRIPT = """
import os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
import django
django.setup()
assert "triage.tasks" not in sys.modules
from config.enqueue import task
print(task("triage.tasks.analyze_snapshot").name, task("accounts.tasks.record_heartbeat").name)
"""


def test_a_task_is_found_by_name_before_any_tasks_module_is_imported(tmp_path):
    env = {"CASEBOOK_DATA_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["triage.tasks.analyze_snapshot", "accounts.tasks.record_heartbeat"]
