"""Acceptance 1 of issue 12: this machine's own transcript (a small single-node VM
with the local MariaDB at its default 128 MiB buffer pool, libvirt's test driver)
gives no warning and no critical finding. The transcript is built from the real
commands on the machine that runs the suite."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from collectors.archive import load_snapshot
from engine.run import analyze

MYSQL = ["mysql", "-h", "127.0.0.1", "-P", "3306", "-uroot"]
MARIADB_ERROR_LOG = Path("/var/log/mysql/error.log")


def _run(argv: list[str]) -> str | None:
    if shutil.which(argv[0]) is None:
        return None
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 and done.stdout.strip() else None


def _transcript(tmp_path, blocks: list[tuple[str, list[str]]]) -> Path:
    parts = []
    for shown, argv in blocks:
        out = _run(argv)
        if out is not None:
            parts.append(f"$ {shown}\n{out.rstrip()}")
    path = tmp_path / "this-host.txt"
    path.write_text("```console\n" + "\n".join(parts) + "\n```\n", encoding="utf-8")
    return path


def _serious(result):
    return [
        (f.rule, f.severity, f.explanation) for f in result.findings if f.severity in ("critical", "warning")
    ]


HOST_BLOCKS = [
    ("lscpu", ["lscpu"]),
    ("numactl -H", ["numactl", "-H"]),
    ("cat /proc/meminfo", ["cat", "/proc/meminfo"]),
    ("top -bn1", ["top", "-bn1"]),
]
# This machine runs MariaDB and Redis (the suite's services), and top shows them:
# the data-store rules then rightly ask for what they decide on (vm.swappiness,
# the kernel release) when the transcript lacks it. Nothing else may be asked for.
DATA_STORE_RULES = {
    "memory.swappiness_zero_oom",
    "memory.overcommit_policy",
    "memory.thp_on_latency_db",
    "memory.thp_defrag_always",
    # this machine runs PostgreSQL (seen in ps): its settings are asked for (SHOW ALL)
    "postgresql.huge_pages_unused",
    # a host with data stores is latency-sensitive: the host-side rules of issue 27
    # ask for /proc/vmstat, /proc/interrupts and the kernel release
    "memory.direct_reclaim_stalls",
    "net.irq_single_cpu",
    "kernel.known_regression",
    "disk.io_scheduler",
    # swap on a data store host: is it moving now (vmstat samples)
    "memory.swap_activity",
}
TEST_DRIVER = ("virsh -c test:///default dumpxml test", ["virsh", "-c", "test:///default", "dumpxml", "test"])


def _need_mariadb():
    if _run([*MYSQL, "-e", "SELECT 1"]) is None:
        pytest.skip("no MariaDB/MySQL at 127.0.0.1:3306 (root, no password)")


def test_this_machine_with_mariadb_and_the_test_driver_has_no_warning(tmp_path):
    _need_mariadb()
    blocks = [
        *HOST_BLOCKS,
        ('mysql -h 127.0.0.1 -uroot -e "SHOW GLOBAL VARIABLES"', [*MYSQL, "-e", "SHOW GLOBAL VARIABLES"]),
        TEST_DRIVER,
    ]
    if MARIADB_ERROR_LOG.exists():
        blocks.append((f"tail -n 100 {MARIADB_ERROR_LOG}", ["tail", "-n", "100", str(MARIADB_ERROR_LOG)]))
    snapshot = load_snapshot([_transcript(tmp_path, blocks)])
    host = snapshot.hosts[0]
    assert host.cpu is not None and host.meminfo is not None and host.database is not None
    result = analyze(snapshot)
    assert _serious(result) == []


def test_a_128_mib_buffer_pool_is_not_asked_to_use_huge_pages(tmp_path):
    # the pool size alone (no large_pages variable): memory.hugepages_absent judges it
    _need_mariadb()
    query = "SHOW GLOBAL VARIABLES LIKE 'innodb_buffer_pool_size'"
    blocks = [*HOST_BLOCKS, (f'mysql -h 127.0.0.1 -uroot -e "{query}"', [*MYSQL, "-e", query])]
    snapshot = load_snapshot([_transcript(tmp_path, blocks)])
    db = snapshot.hosts[0].database
    assert db is not None and int(db.variables["innodb_buffer_pool_size"]) < 1024**3
    result = analyze(snapshot)
    assert "memory.hugepages_absent" not in result.rule_ids
    assert "memory.hugepages_absent" in result.checked
    assert _serious(result) == []


def test_the_test_drivers_domain_is_not_a_guest_of_this_host(tmp_path):
    if _run(TEST_DRIVER[1]) is None:
        pytest.skip("virsh (libvirt-clients) is not installed")
    snapshot = load_snapshot([_transcript(tmp_path, [*HOST_BLOCKS, TEST_DRIVER])])
    assert snapshot.hosts[0].domains  # read, but ...
    result = analyze(snapshot)
    assert "kvm.host_contention" not in result.rule_ids
    # ... the rules that need a domain XML do not run on it, and nothing is asked for
    assert dict(result.skipped)["kvm.vcpus_unpinned"] == "missing domains"
    assert {n.rule for n in result.not_checked} <= DATA_STORE_RULES


def test_a_plain_single_node_vm_is_not_asked_for_evidence(tmp_path):
    snapshot = load_snapshot([_transcript(tmp_path, HOST_BLOCKS)])
    result = analyze(snapshot)
    assert {n.rule for n in result.not_checked} <= DATA_STORE_RULES
    assert _serious(result) == []
