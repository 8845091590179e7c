"""General readers of the fix round after issue 26's blind round M, part b
(branch ``readm-b``), each on the real output that needed it and on a second
real input of the same kind from another source (sources in
tests/fixtures/published/README.md, ``roundm/ (readm-b)``).

readm-b: a known output inside another tool's report is read from its strong
first line (lscpu under PyTorch collect_env's ``CPU:``); outputs of common
tools shown without their command are known by their own shape (lsb_release
-a, iotop's column header, valgrind's ``==PID==`` report, collect_env's
lines); a YAML map whose sequence items sit at their key's indent is
configuration; Redis's somaxconn warning retyped with a capitalised ``TCP
Backlog`` as a bullet is still the warning; a loop over every process's
``/proc/*/status`` prints what those files say, not used."""

from __future__ import annotations

import subprocess
from pathlib import Path

from collectors.archive import load
from collectors.transcript import PROSE, READ, UNRECOGNISED, UNUSED, read_transcript, strong_first_line
from collectors.unused import unused_output
from tests.conftest import FIXTURES

ROUND_M = FIXTURES / "published" / "roundm"

# one letter a line for what the splitter read it as (as in test_general_readers_l)
_ROLE_LETTERS = {PROSE: ".", UNRECOGNISED: "?", UNUSED: "u", READ: "r"}


def _text(name: str) -> str:
    return (ROUND_M / name).read_text(encoding="utf-8")


def _roles(text: str) -> str:
    """What each line of ``text`` was read as, one letter a line (``.`` prose or
    blank, ``r`` read, ``u`` not used, ``?`` unrecognised, ``>`` a prompt)."""
    roles = read_transcript(text).roles
    return "".join(_ROLE_LETTERS.get(r, ">") for r in roles[: len(text.splitlines())])


def _host(path: Path):
    return load(path, split=False).host


# -- readm-b 1. a known output inside another tool's report


def test_readmb_lscpu_inside_collect_env_is_read_and_the_report_not_used():
    """llama.cpp issue 10754 (round M 1725): collect_env's lines from ``Is CUDA
    available: False``, its ``CPU:`` line, then the first four lines of lscpu
    (cut: no ``Socket(s)`` for the lscpu detector). The lscpu lines are read."""
    text = _text("llama-cpp-10754-collect-env-lscpu-cut.txt")
    assert _roles(text) == "..uuuuuuuuuuurrrr"
    (block,) = [b for b in read_transcript(text).blocks if b.kind == "lscpu"]
    assert (block.start_line, block.end_line) == (14, 17)
    assert [what for _a, _b, what in read_transcript(text).unused] == ["PyTorch collect_env"]


def test_readmb_lscpu_after_collect_env_in_a_pr_is_read():
    """vLLM pull request 9293: a whole collect_env report from ``PyTorch
    version:``, a blank line, ``CPU:``, then lscpu (cut after ``CPU family:``)."""
    text = _text("vllm-9293-collect-env-lscpu.txt")
    roles = _roles(text)
    assert roles[1:23] == "u" * 22
    assert roles[25:] == "r" * 9


def test_readmb_strong_first_lines():
    assert strong_first_line("available: 2 nodes (0-1)") == "numactl_hardware"
    assert strong_first_line("MemTotal:       263842260 kB") == "meminfo"
    # hostnamectl's and docker info's indented "Architecture:" start no lscpu
    assert strong_first_line("      Architecture: x86-64") is None


# -- readm-b 2. outputs of common tools shown without their command


def test_readmb_lsb_release_in_code_tags_is_its_output_not_used():
    """numactl issue 223 (round M 1727): ``<code>lsb_release -a`` then its four lines."""
    assert _roles(_text("numactl-223-lsb-release-in-code-tags.txt")) == ">.uuuu."


def test_readmb_lsb_release_without_its_command_is_not_used():
    """Nuk3Gh0st issue 2: lsb_release -a's lines under a root prompt, here without it."""
    text = _text("nuk3gh0st-2-lsb-release-a.txt")
    assert unused_output(text) == "lsb_release"
    assert _roles(text) == ".uuuu"


def test_readmb_iotop_column_header_and_rows_are_not_used():
    """Systemary's runbook (round M 1701) and OneUptime's iotop guide: iotop's
    ``TID PRIO USER DISK READ DISK WRITE SWAPIN IO> COMMAND`` and two rows, no totals."""
    assert _roles(_text("systemary-iotop-header-rows-no-command.txt")) == ".>...uuu."
    text = _text("oneuptime-iotop-header-rows.txt")
    assert unused_output(text) == "iotop"
    assert _roles(text) == "uuu"


def test_readmb_valgrind_report_is_not_used():
    """numactl issue 13 (round M 1734): valgrind's ``==54619== Invalid write of
    size 4`` report; numactl issue 3: its banner, the program's ``0``, its heap summary."""
    roles = _roles(_text("numactl-13-valgrind-invalid-write.txt"))
    assert roles[2:10] == "u" * 8
    assert _roles(_text("numactl-3-valgrind-leak-check.txt")) == "u" * 10


def test_readmb_one_pid_mark_is_no_valgrind_report():
    assert unused_output("==54619== Invalid write of size 4\n==1== at 0x40C9210") is None


# -- readm-b 3. configuration quoted in a post


def test_readmb_tiup_topology_yaml_is_configuration():
    """TiDB issue 61104 (round M 1718): ``tidb_servers:`` then ``- host: ...`` at
    the key's indent and the host's keys: a TiUP topology, in a yaml fence."""
    assert _roles(_text("tidb-61104-tiup-topology-yaml.txt")) == "." * 15


def test_readmb_kubernetes_containers_yaml_is_configuration():
    """Kubernetes' example Deployment: ``containers:`` over ``- name: nginx`` and
    ``ports:`` over ``- containerPort: 80``, each at its key's indent."""
    assert _roles(_text("k8s-website-deployment-containers-yaml.txt")) == "....."


# -- readm-b 4. Redis's warnings retyped as bullets


def test_readmb_redis_somaxconn_warning_retyped_as_a_bullet():
    """wjd.io's Redis post (round M 1704): ``• TCP Backlog setting of 511 cannot be
    enforced ... 128``; the overcommit bullet's typo ``is est to 0`` stays unread."""
    host = _host(ROUND_M / "wjd-redis-warnings-bullets-typographic-quotes.txt")
    (log,) = host.services
    assert log.kind == "redis"
    warnings = [(w.code, w.value, w.line) for w in log.warnings]
    assert warnings == [("somaxconn", "128", 5), ("thp_enabled", None, 7)]


def test_readmb_redis_somaxconn_warning_quoted_in_an_issue():
    """passenger-docker issue 142 (round M 1719): the warnings quoted with ``> ``."""
    host = _host(ROUND_M / "passenger-docker-142-redis-quoted-warnings.txt")
    (log,) = host.services
    assert ("somaxconn", "128") in [(w.code, w.value) for w in log.warnings]


# -- readm-b 5. a per-process list printed by a loop over every process's status file


def test_readmb_swap_list_of_a_loop_over_proc_status_is_not_used():
    """Netdata issue 4123 (round M 1732): ``(echo "COMM PID SWAP"; for file in
    /proc/*/status ; do awk ... $file; done | ...) | column -t`` behind a root prompt,
    then its 13 rows: what every process's status file says, no rule's reading."""
    text = _text("netdata-4123-proc-status-swap-loop.txt")
    assert _roles(text) == ">" + "u" * 14


def test_readmb_loop_over_proc_status_in_chinese_notes_is_not_used():
    """ermaot's notes (round I 1317): a fence with a comment, ``$ for file in
    /proc/*/status ; do awk ... $file; done`` and five ``name pid kB`` rows."""
    text = _text("ermaot-proc-status-swap-loop-fenced-zh.md")
    assert _roles(text) == "..>uuuuu.."


def test_readmb_loop_over_proc_status_on_this_machine_is_not_used():
    """This machine's processes' names and VmSwap by the same kind of loop."""
    command = (
        'for file in /proc/*/status ; do awk \'/VmSwap|Name/{printf $2 " " $3}END{ print ""}\' $file; '
        "done | sort -k 2 -n -r | head -5"
    )
    out = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False).stdout
    text = f"[root@h ~]# {command}\n{out}"
    assert _roles(text) == ">" + "u" * len(out.splitlines())
