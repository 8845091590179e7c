"""``manage.py remedy`` on the ZStack seed snapshot directory."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from tests.conftest import FIXTURES

BEFORE = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before"
GUEST = "8c1f5e2a0d9b4c6e9f3a7b2d1e4c6a80"


def test_prints_diff_commands_and_rollback(capsys):
    call_command("remedy", str(BEFORE), "--domain", GUEST)
    out = capsys.readouterr().out
    assert f"# libvirt:{GUEST} (host zstack-9)" in out
    assert "+    <vcpupin vcpu='0' cpuset='1'/>" in out
    assert f"virsh numatune {GUEST} --mode strict --nodeset 1 --config" in out
    assert f"virsh define {GUEST}.original.xml" in out


def test_unknown_domain_is_an_error():
    with pytest.raises(CommandError, match="no libvirt domain named nope"):
        call_command("remedy", str(BEFORE), "--domain", "nope")
