"""Founding snapshots with one needed artifact taken out (issue 12, acceptance 4).

Each entry names a host transcript of ``tests/fixtures/seeds/<slug>/before/``,
the command whose block is removed, the command the "Not checked" list must
offer for it, and the rule whose finding needs that block. The removed block
is the real output the engineer then pastes back.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from collectors.transcript import match_prompt
from tests.conftest import FIXTURES


@dataclass(frozen=True)
class Gap:
    slug: str
    host_file: str
    command: str  # the removed block starts with a prompt running this command
    offered: str  # a not-checked command must contain this
    rule: str  # the finding that needs the block

    @property
    def path(self) -> Path:
        return FIXTURES / "seeds" / self.slug / "before" / self.host_file

    def split(self) -> tuple[str, str]:
        """(the transcript without the block, the block: prompt line and output)."""
        return remove_block(self.path.read_text(encoding="utf-8"), self.command)


GAPS = [
    Gap("zstack-mariadb-v2v", "zstack-9.txt", "virsh dumpxml", "virsh dumpxml", "kvm.vcpus_unpinned"),
    Gap(
        "kunpeng-stream-zone-reclaim",
        "gp-sdw03.txt",
        "sysctl -a",
        "sysctl",
        "numa.local_node_pagecache_pressure",
    ),
    Gap("openstack-kvm-crm-cpu", "cmp-node07.txt", "numastat", "numastat", "numa.remote_access_dominant"),
    Gap("percona-numa-interleave-startup", "db-3301.txt", "mysql -S", "mysql", "mysql.large_pages_off"),
    Gap("oceanbase-bmsql-tuning", "obs-197.txt", "tc qdisc", "qdisc", "net.netem_delay"),
]


def remove_block(text: str, command: str) -> tuple[str, str]:
    """Cut the block of the first shell prompt running ``command``: its prompt
    line up to the next shell prompt or code fence (SQL prompts of a client
    started by the command stay in the block)."""
    lines = text.split("\n")
    start = next(
        i
        for i, line in enumerate(lines)
        if (m := match_prompt(line)) and m[0] == "shell" and m[1].startswith(command)
    )
    end = start + 1
    while end < len(lines):
        m = match_prompt(lines[end])
        if (m and m[0] == "shell") or lines[end].startswith("```"):
            break
        end += 1
    block = "\n".join(lines[start:end]).strip("\n") + "\n"
    return "\n".join(lines[:start] + lines[end:]), block
