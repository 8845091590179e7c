"""Helpers for parser tests that run this machine's commands and paste their output.

``run`` executes a command line (shell syntax) and returns its stdout; a missing
tool skips the test locally and fails it in CI (``.ci/run`` installs the tools).
``paste`` builds the transcript an engineer would paste (prompt, command, output)
and loads it the way an upload is loaded.
"""

from __future__ import annotations

import shutil
import subprocess

from collectors import facts as f
from collectors.archive import load
from tests.conftest import service_unavailable

PROMPT = "[root@db01 ~]# "


def run(command: str, *, tool: str | None = None, package: str | None = None) -> str:
    name = tool or command.split()[0]
    if shutil.which(name) is None:
        service_unavailable(f"{name} not installed (apt-get install -y {package or name})")
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=60, check=False)
    return done.stdout


def paste(*pairs: tuple[str, str], prose: str = "") -> f.HostFacts:
    """Load ``prose`` then each (command, output) after a shell prompt, as one paste."""
    parts = [prose] if prose else []
    for command, output in pairs:
        parts.append(PROMPT + command)
        parts.append(output.rstrip("\n"))
    return load(("\n".join(parts) + "\n").encode(), name="paste.txt", split=False).host


def kinds(host: f.HostFacts) -> list[str | None]:
    return [a["kind"] for a in host.artifacts]
