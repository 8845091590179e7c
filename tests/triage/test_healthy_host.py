"""This machine is healthy: its real outputs produce no critical or warning
finding (through collect.sh, and as a pasted transcript)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from collectors.archive import load, load_snapshot
from engine.run import analyze
from tests.conftest import ROOT

COMMANDS = [
    ("lscpu", ["lscpu"]),
    ("cat /proc/meminfo", ["cat", "/proc/meminfo"]),
    ("sysctl -a", ["sysctl", "-a"]),
    ("numactl -H", ["numactl", "-H"]),
    ("cat /proc/cmdline", ["cat", "/proc/cmdline"]),
    ("uname -r", ["uname", "-r"]),
    ("cat /proc/softirqs", ["cat", "/proc/softirqs"]),
    ("cat /sys/devices/system/node/node0/meminfo", ["cat", "/sys/devices/system/node/node0/meminfo"]),
]


def _serious(result):
    return [(f.rule, f.host, f.explanation) for f in result.findings if f.severity in ("critical", "warning")]


def test_collect_sh_archive_of_this_machine_has_no_warning(tmp_path):
    archive = tmp_path / "this-host.tar.gz"
    subprocess.run(
        ["sh", str(ROOT / "collectors" / "collect.sh"), "--output", str(archive), "--timeout", "20"],
        check=True,
        capture_output=True,
        timeout=180,
    )
    host = load(archive, split=False).host
    assert host.cpu is not None and host.meminfo is not None and host.sysctl is not None
    # Redis runs here (the suite's broker) with vm.overcommit_memory = 0: the warning
    # Redis itself logs at start-up is a true finding about this machine, not a false alarm.
    serious = _serious(analyze(load_snapshot([archive])))
    assert [f for f in serious if f[0] != "memory.overcommit_policy"] == []


def _this_machine_transcript(tmp_path) -> Path:
    """This machine's outputs of COMMANDS pasted with a ``$`` prompt in a console fence."""
    parts = []
    for shown, argv in COMMANDS:
        if shutil.which(argv[0]) is None or (argv[0] == "cat" and not Path(argv[1]).exists()):
            continue
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        if done.returncode == 0 and done.stdout.strip():
            parts.append(f"$ {shown}\n{done.stdout.rstrip()}")
    transcript = tmp_path / "this-host.txt"
    transcript.write_text("```console\n" + "\n".join(parts) + "\n```\n", encoding="utf-8")
    return transcript


def test_transcript_of_this_machine_has_no_warning(tmp_path):
    snapshot = load_snapshot([_this_machine_transcript(tmp_path)])
    assert snapshot.hosts[0].cpu is not None and snapshot.hosts[0].sysctl is not None
    assert _serious(analyze(snapshot)) == []


def test_transcript_of_this_machine_gets_no_similar_case(tmp_path, db):
    """Issue 17: a healthy host has no problem to match, whatever it shares with the cases."""
    from kb import services as kb_services
    from kb import similarity

    kb_services.load_all()
    similarity.invalidate()
    snapshot = load_snapshot([_this_machine_transcript(tmp_path)])
    result = analyze(snapshot)
    assert similarity.similar_cases_for(result.findings, snapshot) == []
    assert similarity.similarity_report(result.findings, snapshot)["no_known_problem"] is True
