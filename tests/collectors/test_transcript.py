"""Transcript splitting: every prompt style, SQL continuations, markdown fences,
content detection without prompts, and prose that must not become a block."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from collectors.archive import load_snapshot
from collectors.transcript import (
    PROMPT,
    PROSE,
    command_failure,
    command_parts,
    kind_for_command,
    line_class,
    match_prompt,
    read_transcript,
    split_transcript,
)
from engine.run import analyze
from tests.conftest import ROOT, SEEDS

NUMACTL = """available: 2 nodes (0-1)
node 0 cpus: 0 2 4 6 8 10
node 0 size: 32722 MB
node 0 free: 24803 MB
node 1 cpus: 1 3 5 7 9 11
node 1 size: 32768 MB
node 1 free: 28378 MB"""


def only(blocks, kind=None):
    chosen = [b for b in blocks if kind is None or b.kind == kind]
    assert len(chosen) == 1, [(b.kind, b.command, b.start_line) for b in blocks]
    return chosen[0]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("[root@zstack-9 ~]# numactl -H", ("shell", "numactl -H", "zstack-9")),
        ("[test@i39g15302.eu95sqa /home/test/store]", ("shell", "", "i39g15302.eu95sqa")),
        ("admin@db-01:~$ numactl --hardware", ("shell", "numactl --hardware", "db-01")),
        ("root@db-01:/etc# sysctl -a", ("shell", "sysctl -a", "db-01")),
        ("suse-01:~ # numastat", ("shell", "numastat", "suse-01")),
        # Dasharo/dasharo-issues#215 (evaluation snapshot 117): Gentoo's default prompt
        ("hacc@Hacc-PC ~ $ numactl --hardware", ("shell", "numactl --hardware", "Hacc-PC")),
        ("root@db-01 /etc # sysctl -a", ("shell", "sysctl -a", "db-01")),
        ('od01crmapp05:" # Iscpu', ("shell", "Iscpu", "od01crmapp05")),
        ("$ lscpu", ("shell", "lscpu", None)),
        ("$lscpu", ("shell", "lscpu", None)),
        ("$tc qdisc list", ("shell", "tc qdisc list", None)),
        ("# numactl -H", ("shell", "numactl -H", None)),
        ("mysql> show global variables;", ("sql", "show global variables;", None)),
        ("MySQL [oceanbase]> show proxyconfig;", ("sql", "show proxyconfig;", None)),
        ("MariaDB [infoplus-v2]> select 1;", ("sql", "select 1;", None)),
        ("obclient> show parameters;", ("sql", "show parameters;", None)),
        ("obclient [oceanbase]> select 1;", ("sql", "select 1;", None)),
        # a virtualenv before the prompt (python-kvm issue 2, tests/evaluation/84-*)
        ("(env)[root@host conductor]# virsh nodeinfo", ("shell", "virsh nodeinfo", "host")),
        ("(base) admin@db-01:~$ numactl -H", ("shell", "numactl -H", "db-01")),
        # oh-my-zsh (cockpit-machines issue 49, tests/evaluation/85-*) and starship
        # (glances issue 1531, tests/evaluation/86-*)
        ("➜  ~ virsh domstats", ("shell", "virsh domstats", None)),
        ("➜  libvirt git:(main) ✗ virsh capabilities", ("shell", "virsh capabilities", None)),
        ("❯ virsh domstats win11", ("shell", "virsh domstats win11", None)),
        # a shell without PS1 (oc debug node: performance-addon-operators issue 279,
        # tests/evaluation/97-*)
        ("sh-4.4# cat /proc/meminfo  | grep -i huge", ("shell", "cat /proc/meminfo  | grep -i huge", None)),
        ("bash-5.1$ numactl -H", ("shell", "numactl -H", None)),
    ],
)
def test_prompt_styles(line, expected):
    assert match_prompt(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "# Background",  # markdown heading, not a root prompt
        "## numactl -H",
        "# 1、KVM的CPU虚拟模式",
        "$100 is the price",
        "Model name: Intel(R) Xeon(R)",
        "node 0 size: 32722 MB",
        "<cputune>",
        "(see above) the guest is slow",
        "(1) (2) [root@host ~]# lscpu",
        "❯❯ nested",
        "sh-4.4 is the shell version",
        "Contact admin@example.com ~ $5 a month",
    ],
)
def test_not_prompts(line):
    assert match_prompt(line) is None


@pytest.mark.parametrize(
    ("line", "cls"),
    [
        ("", "blank"),
        ("node 0 size: 32722 MB", "data"),
        ("Byte Order: Little Endian", "data"),
        ("PID USER PR NI VIRT RES SHR S %CPU %MEM TIME+ COMMAND", "data"),
        ("+---------+---------+", "data"),
        ("Time rrqms wrqms %rrqm %wrqm rs ws rsecs wsecs", "data"),
        ("Jul 7 12:00:44 mysqld-3301[95109]: InnoDB: Completed initialization of buffer pool", "data"),
        ("Troubleshooting", "prose"),
        ("Deploy a single ODP. The NIC bandwidth is 2000 Mbit/s.", "prose"),
        ("可以看到消耗的时间主要在设置 NUMA 策略这步:", "prose"),
        ("架构： x86_64", "data"),
        # netdata/netdata#3461: a screenshot between the paste and the question
        (
            "![image](https://user-images.githubusercontent.com/615675/36591428-4a06bef2-1892-11e8-85c7-c908c3bcf05c.png)",
            "prose",
        ),
    ],
)
def test_line_classes(line, cls):
    assert line_class(line) == cls


def test_bracket_prompt_block_and_hostname():
    text = f"[root@zstack-9 ~]# numactl -H\n{NUMACTL}\n[root@zstack-9 ~]#\n"
    block = only(split_transcript(text))
    assert block.command == "numactl -H"
    assert block.kind == "numactl_hardware"
    assert block.start_line == 2 and block.end_line == 8
    assert block.text == NUMACTL
    assert block.host == "zstack-9"
    assert block.prompt == "shell"


def test_user_host_and_suse_prompts():
    text = (
        f"admin@db-01:~$ numactl --hardware\n{NUMACTL}\n"
        "suse-01:~ # cat /proc/cmdline\nBOOT_IMAGE=/vmlinuz ro quiet\n"
    )
    blocks = split_transcript(text)
    assert [b.kind for b in blocks] == ["numactl_hardware", "cmdline"]
    assert blocks[1].start_line == 10 and blocks[1].text == "BOOT_IMAGE=/vmlinuz ro quiet"


def test_dollar_prompts_without_space_and_trailing_prose():
    text = (
        "Physical server\n"
        "$lscpu\n"
        "Architecture: x86_64\n"
        "CPU(s): 96\n"
        "Socket(s): 2\n"
        "Troubleshooting\n"
        "Check the external environment\n"
        "$ping 10.0.0.2\n"
        "64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=1.07 ms\n"
        "According to the test results, the delay between the two nodes is relatively large, as shown:\n"
        "$tc qdisc list\n"
        "qdisc netem 8004: dev bond0 root refcnt 17 limit 1000 delay 1.0ms\n"
    )
    blocks = split_transcript(text)
    assert [(b.command, b.kind) for b in blocks] == [
        ("lscpu", "lscpu"),
        ("ping 10.0.0.2", "ping"),
        ("tc qdisc list", "tc_qdisc"),
    ]
    # output stops at the first prose line
    assert blocks[0].text.splitlines()[-1] == "Socket(s): 2"
    assert blocks[1].end_line == 9


def test_hash_prompt_in_prose_but_not_headings():
    text = (
        "# Why Percona starts slowly\n"
        "The memory of one node is exceeded, as shown:\n"
        f"# numactl -H\n{NUMACTL}\n"
        "每颗 CPU node 对应一半的内存\n"
    )
    block = only(split_transcript(text))
    assert block.command == "numactl -H"
    assert block.start_line == 4 and block.end_line == 10


def test_sql_prompts_with_continuation():
    text = (
        "mysql> select plan_type, count(1)\n"
        "    -> from gv$sql_audit\n"
        "    -> group by plan_type;\n"
        "+-----------+----------+\n"
        "| plan_type | count(1) |\n"
        "+-----------+----------+\n"
        "|         1 |     1000 |\n"
        "|         2 |      900 |\n"
        "+-----------+----------+\n"
        "2 rows in set (0.93 sec)\n"
        "MariaDB [db]> create index i on t (c);\n"
        "Query OK, 0 rows affected (58.371 sec)\n"
    )
    blocks = split_transcript(text)
    assert blocks[0].command == "select plan_type, count(1) from gv$sql_audit group by plan_type;"
    assert blocks[0].kind == "sql_audit_plan_types"
    # SQL parsers see the statement: the block starts at the prompt line
    assert blocks[0].start_line == 1 and blocks[0].text.startswith("mysql> select")
    assert blocks[0].prompt == "sql"
    assert blocks[1].kind == "sql_timing" and blocks[1].start_line == 11


def test_fence_content_is_one_block_and_prompts_inside_start_commands():
    text = (
        "Host memory per node:\n"
        "```\n"
        "top - 11:38:32 up 64 days, 18 min, 2 users, load average: 1.09, 1.23, 1.42\n"
        "%Cpu0  :  1.7 us,  1.1 sy,  0.0 ni, 96.1 id,  0.0 wa,  0.0 hi,  1.1 si,  0.0 st\n"
        "```\n"
        "\n"
        "```\n"
        "[root@zstack-9 ~]# cat /sys/devices/system/node/node1/meminfo\n"
        "Node 1 MemTotal:      402653184 kB\n"
        "Node 1 MemFree:      342521148 kB\n"
        "[root@zstack-9 ~]# virsh version\n"
        "Using library: libvirt 4.9.0\n"
        "Running hypervisor: QEMU 2.12.0\n"
        "\n"
        "[root@zstack-9 ~]#\n"
        "```\n"
    )
    blocks = split_transcript(text)
    assert [(b.kind, b.command, b.start_line, b.end_line) for b in blocks] == [
        ("top", None, 3, 4),
        ("node_meminfo", "cat /sys/devices/system/node/node1/meminfo", 9, 10),
        ("virsh_version", "virsh version", 12, 13),
    ]
    assert all(b.fenced for b in blocks)


def test_unprompted_artifacts_recognised_by_content():
    domain = "<domain type='kvm'>\n  <name>g</name>\n  <vcpu>2</vcpu>\n</domain>"
    text = f"Some prose here about the guest.\n\n{domain}\n\nAnd the host:\n\n{NUMACTL}\n"
    blocks = split_transcript(text)
    assert [(b.kind, b.command) for b in blocks] == [("libvirt_domain", None), ("numactl_hardware", None)]
    assert blocks[0].start_line == 3 and blocks[1].start_line == 10


def test_new_artifact_inside_unprompted_text_starts_a_block():
    text = (
        "top - 11:38:32 up 64 days, 18 min, 2 users, load average: 1.09, 1.23, 1.42\n"
        "%Cpu0  :  1.7 us,  1.1 sy,  0.0 ni, 96.1 id,  0.0 wa,  0.0 hi,  1.1 si,  0.0 st\n"
        "%Cpu1  :  0.0 us,  0.0 sy,  0.0 ni,100.0 id,  0.0 wa,  0.0 hi,  0.0 si,  0.0 st\n"
        "Node 1 MemTotal:      402653184 kB\n"
        "Node 1 MemFree:      342521148 kB\n"
    )
    blocks = split_transcript(text)
    assert [(b.kind, b.start_line, b.end_line) for b in blocks] == [("top", 1, 3), ("node_meminfo", 4, 5)]


def test_prose_is_ignored_and_unknown_commands_are_listed():
    text = (
        "我们先看了物理机的信息，没有发现问题。\n"
        "The customer says the guest is slow.\n"
        "[root@h ~]# systemctl restart libvirtd\n"
        "[root@h ~]# ll /data\n"
        "total 0\n"
    )
    blocks = split_transcript(text)
    assert [(b.command, b.kind) for b in blocks] == [("systemctl restart libvirtd", None), ("ll /data", None)]


def test_version_quoted_in_a_sentence_is_a_prose_block():
    text = "此外，迁移的云主机上运行的是mariadb server version: 10.4.14-MariaDB-log MariaDB Server。\n"
    block = only(split_transcript(text))
    assert block.kind == "mysql_version" and block.prose
    assert block.text.startswith("server version: 10.4.14")


def test_crlf_free_text_and_tabs():
    text = (
        "odUlcrmapptstU2:~ #\t\t\t\n\tnode0\tnode1\n"
        "numa_hit\t40995736\t22924791\nnuma_miss\t53540664\t10471137\n"
    )
    block = only(split_transcript(text))
    assert block.kind == "numastat" and block.command is None and block.host == "odUlcrmapptstU2"
    assert block.start_line == 2


def test_sudo_prefix_names_the_same_artifact():
    block = only(split_transcript(f"$ sudo -E numactl --hardware\n{NUMACTL}\n"))
    assert block.kind == "numactl_hardware" and block.command == "sudo -E numactl --hardware"
    assert kind_for_command("sudo -E numactl --hardware") == "numactl_hardware"
    assert kind_for_command("time lscpu") == "lscpu"


def test_prompted_output_running_into_another_artifact_is_cut():
    top = (
        "top - 11:38:32 up 64 days, 18 min, 2 users, load average: 1.09, 1.23, 1.42\n"
        "%Cpu0  :  1.7 us,  1.1 sy,  0.0 ni, 96.1 id,  0.0 wa,  0.0 hi,  1.1 si,  0.0 st\n"
    )
    blocks = split_transcript(f"[root@h ~]# numactl -H\n{NUMACTL}\n{top}")
    assert [(b.kind, b.command, b.start_line, b.end_line) for b in blocks] == [
        ("numactl_hardware", "numactl -H", 2, 8),
        ("top", None, 9, 10),
    ]


UNFENCED_SEEDS = sorted(
    p
    for p in (Path(__file__).resolve().parents[1] / "fixtures" / "seeds").glob("*/*/*.txt")
    if p.read_text(encoding="utf-8").lstrip().startswith("```")
)


@pytest.mark.parametrize("path", UNFENCED_SEEDS, ids=lambda p: f"{p.parts[-3]}/{p.parts[-2]}/{p.name}")
def test_seed_transcripts_split_the_same_without_their_fences(path):
    """A pasted session rarely comes fenced: numactl's "node distances:", zoneinfo's
    "per-node stats" and STREAM's sentences must not end a known command's output."""
    fenced = path.read_text(encoding="utf-8")
    bare = "\n".join(line for line in fenced.split("\n") if not line.lstrip().startswith("```"))

    def shape(text):
        return [(b.command, b.kind, b.text.strip()) for b in split_transcript(text) if not b.prose]

    assert shape(bare) == shape(fenced)


def test_prose_paragraph_still_ends_a_known_commands_output():
    text = (
        "[root@db1 ~]# numactl -H\n"
        "available: 1 nodes (0)\n"
        "node 0 cpus: 0 1\n"
        "node 0 size: 1000 MB\n"
        "node 0 free: 10 MB\n"
        "node distances:\n"
        "node   0\n"
        "  0:  10\n"
        "\n"
        "As you can see the host has only one node, so the guest cannot be placed better.\n"
    )
    (block,) = [b for b in split_transcript(text) if not b.prose]
    assert block.kind == "numactl_hardware" and block.text.rstrip().endswith("0:  10")


def test_section_headings_of_grouped_lscpu_do_not_end_the_output():
    # dev.to "Proxmox cpu affinity for VMs" (tests/evaluation/96-*): lscpu's
    # "Caches (sum of all):" and "NUMA:" headings over indented fields
    text = (ROOT / "tests/evaluation/96-devto-proxmox-epyc-lscpu-numa-cut/page.txt").read_text(
        encoding="utf-8"
    )
    (block,) = [b for b in split_transcript(text) if b.kind == "lscpu"]
    assert block.command == "lscpu"
    assert "NUMA:\n  NUMA node(s):          4" in block.text
    assert "  NUMA node3 CPU(s):     24-31,56-63" in block.text


def test_a_colon_line_over_prose_still_ends_the_output():
    text = "[root@h ~]# uname -r\n5.14.0\nThe result:\nthe kernel is recent enough for us.\n"
    (block,) = split_transcript(text)
    assert block.text == "5.14.0"


@pytest.mark.parametrize(
    "script",
    [
        "numastat-no-such-tool -m",  # bash: line 1: ...: command not found
        "ls /no/such/dir/for/casebook",  # ls: cannot access ...: No such file or directory
    ],
)
def test_failed_commands_on_this_machine(script):
    proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode != 0
    assert command_failure(proc.stderr) == proc.stderr.strip().splitlines()[0]


def test_output_with_an_error_line_among_data_is_no_failure():
    assert command_failure("error: one node offline\nnode 0 cpus: 0 1\n") is None


PUBLISHED = ROOT / "tests" / "fixtures" / "published"


def test_a_compound_command_line_gives_each_command_its_output():
    """``$ tc qdisc show dev lo; ping -c 3 -q 127.0.0.1 | tail -1  # comment`` in a
    public lab log: the netem line is tc's, the rtt summary ping's (filtered by tail)."""
    blocks = split_transcript((PUBLISHED / "h2lab-tc-ping-compound.txt").read_text())
    got = [(b.kind, b.command, b.start_line, b.end_line) for b in blocks if b.kind]
    assert got == [
        ("tc_qdisc", "tc qdisc show dev lo", 6, 6),
        ("ping", "ping -c 3 -q 127.0.0.1 | tail -1", 7, 7),
    ]


def test_the_compound_paste_fires_both_network_rules():
    fired = {f.rule for f in analyze(load_snapshot([PUBLISHED / "h2lab-tc-ping-compound.txt"])).findings}
    assert {"net.netem_delay", "net.lan_rtt_high"} <= fired


def test_command_parts_of_real_command_lines():
    """The compound prompts of the Ceph QE transcript (``a | grep x || b``) and of the lab log."""
    ceph = (PUBLISHED / "cephci-netem-transcript.txt").read_text().splitlines()[1]
    assert command_parts(match_prompt(ceph)[1]) == [
        "sudo tc qdisc show dev enp5s0f0 | grep netem",
        "sudo tc qdisc add dev enp5s0f0 root netem delay 20ms",
    ]
    lab = (PUBLISHED / "h2lab-tc-ping-compound.txt").read_text().splitlines()
    assert command_parts(match_prompt(lab[0])[1]) == ["./bin/h2lab -mode flow -rounds 3"]  # "# RTT 0" dropped
    assert [kind_for_command(p) for p in command_parts(match_prompt(lab[4])[1])] == ["tc_qdisc", "ping"]


def _cjk_post_lines() -> list[str]:
    """Lines of the real Chinese posts (the founding write-ups and evaluation 109)
    outside code fences that hold CJK text and a Markdown link or inline code."""
    paths = [*sorted(SEEDS.glob("*.txt")), ROOT / "tests/evaluation/109-plantegg-aarch64-numa-off-zh/post.md"]
    out = []
    for path in paths:
        fenced = False
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.lstrip().startswith("```"):
                fenced = not fenced
                continue
            if not fenced and re.search(r"[\u4e00-\u9fff]", line) and ("](" in line or "`" in line):
                out.append(line)
    return out


def test_chinese_sentences_with_links_and_inline_code_are_prose():
    lines = _cjk_post_lines()
    assert lines  # the posts do hold such sentences
    assert [line for line in lines if line_class(line) != "prose"] == []


def test_chinese_locale_outputs_stay_data():
    """lscpu under a Chinese locale (evaluation 118, hierarchical, full-width colons)."""
    text = (ROOT / "tests/evaluation/118-hexu-lscpu-zh-hierarchical/README-excerpt.md").read_text(
        encoding="utf-8"
    )
    fenced, rows = False, []
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif fenced and "：" in line and line.strip() and not line.startswith("$"):
            rows.append(line)
    assert rows
    assert [line for line in rows if line_class(line) == "prose"] == []


EVALUATION = ROOT / "tests" / "evaluation"


def _roles_of(path: Path, pick) -> set[int]:
    """The roles of the lines of a real paste that ``pick`` selects."""
    text = path.read_text(encoding="utf-8")
    split = read_transcript(text)
    return {split.roles[i] for i, line in enumerate(text.split("\n")) if pick(line)}


def test_list_items_bold_headings_and_link_lines_of_real_posts_are_prose():
    """PCP pull request 2527's bullet list, Percona PR 483's ``**Test:**``, the Red Hat links
    under a recap (evaluation 94, 64, 100): prose, not unrecognised data."""
    bullets = _roles_of(EVALUATION / "94-pcp-numastat-p-summary-cut/pr.txt", lambda s: s.startswith("  - "))
    bold = _roles_of(EVALUATION / "64-percona-mycli-numa-variables/pr.txt", lambda s: s == "**Test:**")
    links = _roles_of(
        EVALUATION / "100-rhel-e7-4870-numactl-lscpu/recap.md", lambda s: s.startswith("https://")
    )
    assert bullets == bold == links == {PROSE}


def test_command_lines_quoted_without_a_prompt_are_command_lines():
    """numactl issue 115 (evaluation 114): two ``echo 10 > .../nr_hugepages`` lines in a fence."""
    roles = _roles_of(
        EVALUATION / "114-numactl-numastat-cm-token-noise/issue.txt", lambda s: s.startswith("echo 10 >")
    )
    assert roles == {PROMPT}
