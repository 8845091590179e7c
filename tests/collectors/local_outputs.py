"""Real command outputs of the machine the tests run on.

Each entry is ``(command as an engineer types it, argv that produces it)``;
:func:`output` runs it once per session. A tool that is missing or a server
that is unreachable skips the test on a developer machine and FAILS under
``CI=true`` (``.ci/run`` installs numactl, procps, util-linux, libvirt-clients
and starts MariaDB).
"""

from __future__ import annotations

import functools
import shutil
import subprocess

from tests.conftest import service_unavailable

MARIADB = ["mariadb", "-h127.0.0.1", "-uroot"]

COMMANDS: dict[str, tuple[str, list[str]]] = {
    "lscpu": ("lscpu", ["lscpu"]),
    "numactl": ("numactl -H", ["numactl", "-H"]),
    "numastat": ("numastat", ["numastat"]),
    "meminfo": ("cat /proc/meminfo", ["cat", "/proc/meminfo"]),
    "variables": ("mysql -e 'SHOW GLOBAL VARIABLES'", [*MARIADB, "-e", "SHOW GLOBAL VARIABLES"]),
    "dumpxml": ("virsh dumpxml test", ["virsh", "-c", "test:///default", "dumpxml", "test"]),
}


@functools.cache
def _run(name: str) -> tuple[str | None, str]:
    _command, argv = COMMANDS[name]
    if shutil.which(argv[0]) is None:
        return None, f"{argv[0]} is not installed"
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{' '.join(argv)} failed: {exc}"
    if proc.returncode != 0 or not proc.stdout.strip():
        return None, f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.strip()[:200]}"
    return proc.stdout.rstrip("\n"), ""


def output(name: str) -> str:
    """The output of ``COMMANDS[name]``; skips (fails in CI) when unavailable."""
    text, why = _run(name)
    if text is None:
        service_unavailable(why)
    return text


def available(name: str) -> bool:
    return _run(name)[0] is not None


def command(name: str) -> str:
    return COMMANDS[name][0]


def mariadb_variable_count() -> int:
    """The server's own count of its global variables (``-N``: no header)."""
    proc = subprocess.run(
        [*MARIADB, "-N", "-e", "SHOW GLOBAL VARIABLES"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if proc.returncode != 0:
        service_unavailable(f"MariaDB unreachable: {proc.stderr.strip()[:200]}")
    return len(proc.stdout.rstrip("\n").split("\n"))
