"""Shared helpers of the remedy tests: the ZStack seed host and real libvirt.

``virsh_define`` runs ``virsh -c test:///default define --validate``: libvirt's
test driver keeps its state in memory (nothing on the machine changes), and
``--validate`` checks the document against libvirt's RNG schema on top of the
driver's own parsing. Without virsh the tests skip on a developer machine and
FAIL under ``CI=true``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from collectors.archive import load_host
from tests.conftest import FIXTURES, service_unavailable

ZSTACK = FIXTURES / "seeds" / "zstack-mariadb-v2v"


@pytest.fixture(scope="session")
def zstack_host():
    """Fresh facts per test would cost ~0.1 s each; tests must not mutate them."""
    return load_host(ZSTACK / "before" / "zstack-9.txt")


@pytest.fixture
def virsh_define(tmp_path: Path):
    virsh = shutil.which("virsh")
    if virsh is None:
        service_unavailable("virsh (libvirt-clients) is not installed")

    def define(xml: str, name: str = "domain.xml", *, validate: bool = True) -> subprocess.CompletedProcess:
        path = tmp_path / name
        path.write_text(xml, encoding="utf-8")
        flags = ["--validate"] if validate else []
        return subprocess.run(
            [virsh, "-c", "test:///default", "define", *flags, str(path)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    return define
