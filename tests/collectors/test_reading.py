"""Every pasted line is accounted for (``HostFacts.reading``): read into an
artifact, a prompt/command line, prose, or an unrecognised block -- never
dropped silently -- and a parser that stops early says why."""

from __future__ import annotations

import itertools
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collectors.archive import load
from collectors.decoding import decode_bytes
from collectors.parsers.mysql import parse_mysql_variables
from collectors.transcript import PROMPT, PROSE, READ, UNRECOGNISED, UNUSED, read_transcript
from tests.collectors import local_outputs as local
from tests.conftest import CORPUS, FIXTURES, SEEDS

SEED_FILES = sorted((FIXTURES / "seeds").glob("*/*/*.txt"))
MYSQL8 = CORPUS / "mysql" / "percona-toolkit_pt-mysql-summary_temp_enc009_mysql-variables.txt"
NUMACTL_4 = FIXTURES / "seeds" / "openstack-kvm-crm-cpu" / "before" / "cmp-node07.txt"


def assert_accounted(reading, lines: int) -> None:
    assert reading.lines == lines
    assert (
        reading.read_lines
        + reading.prompt_lines
        + reading.prose_lines
        + reading.unused_lines
        + reading.unrecognised_lines
        == lines
    )
    spans = sorted(
        [(a.start_line, a.end_line) for a in reading.artifacts if a.start_line]
        + [(u.start_line, u.end_line) for u in reading.unrecognised if u.start_line]
    )
    for (_a1, e1), (a2, _e2) in itertools.pairwise(spans):
        assert e1 < a2, spans  # artifacts and unrecognised blocks never overlap


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8", errors="replace").split("\n"))


@pytest.mark.parametrize("path", SEED_FILES + sorted(SEEDS.glob("*.txt")), ids=lambda p: p.name)
def test_every_line_of_the_seed_transcripts_is_accounted_for(path):
    host = load(path, split=False).host
    assert_accounted(host.reading, line_count(path))
    if path in SEED_FILES:  # the rebuilt snapshots; the write-ups may be all prose
        assert host.reading.read_lines > 0


@pytest.mark.parametrize(
    "path", sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix in (".txt", ".xml")), ids=str
)
def test_single_files_are_read_whole(path):
    host = load(path, split=False).host
    assert_accounted(host.reading, line_count(path))


def test_a_programs_output_at_a_prompt_is_that_programs_output_not_used(tmp_path):
    """``stat /`` (this machine's) is in no catalogue: the prompt says which program
    printed it, and no parser reads that program, so it is its output, not used."""
    listing = subprocess.run(["stat", "/"], capture_output=True, text=True, check=True).stdout
    numactl = (CORPUS / "numactl" / "percona-toolkit_pt-summary_007_numactl.txt").read_text()
    path = tmp_path / "t.txt"
    path.write_text(f"[root@h ~]# stat /\n{listing}[root@h ~]# numactl -H\n{numactl}")
    reading = load(path, split=False).host.reading
    assert_accounted(reading, line_count(path))
    assert not reading.unrecognised
    (block,) = reading.unused
    assert (block.what, block.start_line) == ("stat", 2)
    assert [a.kind for a in reading.artifacts] == ["numactl_hardware"]
    assert reading.prompt_lines == 2


def test_an_output_without_its_command_is_an_unrecognised_block(tmp_path):
    """The same listing with no prompt above it: nothing says what printed it."""
    listing = subprocess.run(["stat", "/"], capture_output=True, text=True, check=True).stdout
    numactl = (CORPUS / "numactl" / "percona-toolkit_pt-summary_007_numactl.txt").read_text()
    path = tmp_path / "t.txt"
    path.write_text(f"{listing}\n[root@h ~]# numactl -H\n{numactl}")
    reading = load(path, split=False).host.reading
    assert_accounted(reading, line_count(path))
    (block,) = reading.unrecognised
    assert block.start_line == 1 and block.first_line == listing.split("\n")[0].strip()
    assert [a.kind for a in reading.artifacts] == ["numactl_hardware"]


def test_a_known_commands_output_that_is_not_used_is_accounted_as_such(tmp_path):
    """``ls -l /`` (this machine's) is in collectors.unused's catalogue: not used, not unrecognised."""
    listing = subprocess.run(["ls", "-l", "/"], capture_output=True, text=True, check=True).stdout
    numactl = (CORPUS / "numactl" / "percona-toolkit_pt-summary_007_numactl.txt").read_text()
    path = tmp_path / "t.txt"
    path.write_text(f"[root@h ~]# ls -l /\n{listing}[root@h ~]# numactl -H\n{numactl}")
    reading = load(path, split=False).host.reading
    assert_accounted(reading, line_count(path))
    assert not reading.unrecognised
    (block,) = reading.unused
    assert (block.what, block.start_line) == ("ls", 2)
    assert reading.unused_lines == len(listing.rstrip("\n").split("\n"))
    assert [a.kind for a in reading.artifacts] == ["numactl_hardware"]


def test_mariadb_variables_after_a_prompt_keep_every_variable(tmp_path):
    """Acceptance 3: the local server's own count, with and without its tabs."""
    expected = local.mariadb_variable_count()
    output = local.output("variables")
    assert re.search(r"^\w+\t$", output, re.M), "the server has variables with empty values"
    for name, text in (
        ("tabs", output),
        ("spaces", output.expandtabs(8)),
        ("one space", output.replace("\t", " ")),
    ):
        path = tmp_path / f"{name}.txt"
        path.write_text(
            f"[root@db ~]# {local.command('variables')}\n{output if name == 'tabs' else text}\n[root@db ~]#"
        )
        host = load(path, split=False).host
        assert len(host.database.variables) == expected, name
        assert host.reading.unrecognised == [], name


def test_mysql8_variables_with_empty_values_keep_every_variable(tmp_path):
    text = MYSQL8.read_text().rstrip("\n")
    whole = parse_mysql_variables(text).variables
    empty = [k for k, v in whole.items() if v == ""]
    assert len(empty) > 20  # the list has many empty values (Percona Server 8.0.32)
    path = tmp_path / "t.txt"
    path.write_text(f"mysql> SHOW GLOBAL VARIABLES;\n$ mysql -e 'SHOW GLOBAL VARIABLES'\n{text}\n")
    assert load(path, split=False).host.database.variables == whole


def test_a_distance_table_cut_short_keeps_the_nodes_and_says_what_is_missing(tmp_path):
    lines = NUMACTL_4.read_text().split("\n")
    start = lines.index("root@cmp-node07:~# numactl -H")
    cut = lines[start : start + 18]  # prompt, 13 lines, "node distances:", header, 2 of 4 rows
    path = tmp_path / "t.txt"
    path.write_text("\n".join(cut) + "\n")
    host = load(path, split=False).host
    assert len(host.numa.nodes) == 4 and host.numa.nodes[3].size_mb == 65498
    assert host.numa.distances == []
    (err,) = host.errors
    assert "distance table incomplete: 2 of 4 rows" in err.message
    assert host.reading.artifacts[0].parsed is False


def test_a_wrapped_cpu_list_is_joined_and_evidence_points_at_the_original_lines(tmp_path):
    lines = NUMACTL_4.read_text().split("\n")
    start = lines.index("root@cmp-node07:~# numactl -H")
    block = lines[start : start + 20]
    wrapped = []
    for line in block:
        if line.startswith("node 2 cpus:"):
            wrapped += [line[:30], line[30:].strip()]  # a terminal cut it at 30 columns
        else:
            wrapped.append(line)
    path = tmp_path / "t.txt"
    path.write_text("\n".join(wrapped) + "\n")
    host = load(path, split=False).host
    assert host.numa.nodes[2].cpus == [12, 13, 14, 15, 16, 17, 36, 37, 38, 39, 40, 41]
    assert host.numa.lines["node.3.size"] == wrapped.index("node 3 size: 65498 MB") + 1
    assert_accounted(host.reading, len(wrapped) + 1)


# ------------------------------------------------------------------ property


def _real_blocks() -> list[tuple[str, str]]:
    pairs = [
        ("numactl -H", CORPUS / "numactl" / "percona-toolkit_pt-summary_007_numactl.txt"),
        ("cat /proc/meminfo", CORPUS / "meminfo" / "node_exporter_proc_meminfo.txt"),
        ("lscpu", CORPUS / "lscpu" / "util-linux_lscpu-x86_64-epyc_7451.txt"),
        ("sysctl -a", CORPUS / "sysctl" / "percona-toolkit_pt-summary_001_sysctl.txt"),
        ("cat /proc/interrupts", CORPUS / "interrupts" / "insights-core_test_interrupts_INT_MULTI.txt"),
        ("virsh dumpxml guest", CORPUS / "libvirt" / "libvirt_cpu-topology5.xml"),
        ("cat numastat", CORPUS / "numastat" / "node_exporter_node0_numastat.txt"),
    ]
    return [(cmd, path.read_text().rstrip("\n")) for cmd, path in pairs]


BLOCKS = _real_blocks()
PROSE_LINES = [
    line
    for path in sorted(SEEDS.glob("*.txt"))
    for line in path.read_text().split("\n")
    if line.strip() and len(line) < 200
][:400]
JUNK = [
    "",
    "   ",
    "}}}",
    "\t\t",
    "-" * 40,
    "> > >",
    "```",
    "~~~",
    "{code}",
    "<pre>",
    "\x1b[31m",
    "[x@y ~]#",
    "mysql>",
]

pieces = st.one_of(
    st.sampled_from(BLOCKS).map(lambda b: f"[root@h ~]# {b[0]}\n{b[1]}"),
    st.sampled_from(BLOCKS).map(lambda b: b[1]),
    st.sampled_from(PROSE_LINES),
    st.sampled_from(JUNK),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60),
    st.sampled_from(["[root@guest ~]# lscpu", "admin@other:~$ free -m", "$ numastat -m"]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(pieces, min_size=1, max_size=12))
def test_coverage_invariant_for_any_transcript(parts):
    text = "\n".join(parts)
    split = read_transcript(text)
    lines = text.split("\n")
    assert len(split.roles) == len(lines)
    assert set(split.roles) <= {PROSE, UNRECOGNISED, UNUSED, PROMPT, READ}
    for start, end, _first in split.unrecognised:
        assert all(split.roles[i] == UNRECOGNISED for i in range(start - 1, end))
    # through the loader, hosts included: the hosts' lines add up to the input
    hosts = _load_text(text)
    # lines as the upload decoder sees them (a lone CR is an old Mac line end)
    decoded = decode_bytes(text.encode("utf-8"))
    if decoded.binary:  # refused whole as binary: an error, no lines to count
        assert any("binary" in e.message for h in hosts for e in h.errors)
        return
    assert sum(h.reading.lines for h in hosts) == len(decoded.text.split("\n"))
    for host in hosts:
        r = host.reading
        assert r.read_lines + r.prompt_lines + r.prose_lines + r.unrecognised_lines == r.lines


def _load_text(text: str):
    from collectors.archive import load

    return load(text.encode("utf-8"), name="paste.txt").hosts


def test_load_hosts_of_a_file_without_prompts_is_one_host():
    hosts = load(CORPUS / "lscpu" / "util-linux_lscpu-x86_64-epyc_7451.txt").hosts
    assert len(hosts) == 1 and hosts[0].cpu is not None


# facebookarchive/augmented-traffic-control#164 (evaluation snapshot 68): one
# `tc` line quoted inside a PR description, parsed whole
ATC_PR = (
    "Add support for latency, packet loss, corruption and reordeting.\n"
    "The value used in TestShapeOn generated the following tc output:\n"
    "qdisc netem 800b: parent 1:5 limit 1000 delay 10.0ms  15.0ms 1% loss 10% 6.3% reorder 6% 0.6% "
    "corrupt 3.4% gap 1\n"
    "\n"
    "The unittest could be better but this is what I have for now. I will try\n"
    "to get better unittest in subsequents diff or other PR\n"
)


def test_prose_around_an_artifact_read_whole_is_prose_not_read(tmp_path):
    path = tmp_path / "pr.txt"
    path.write_text(ATC_PR)
    host = load(path, split=False).host
    assert host.tc is not None and host.tc.qdiscs[0].delay_ms == 10.0
    assert_accounted(host.reading, line_count(path))
    assert host.reading.read_lines == 1
    assert host.reading.prose_lines == line_count(path) - 1


def test_an_artifact_read_whole_without_prose_around_it_is_all_read(tmp_path):
    path = tmp_path / "tc.txt"
    path.write_text(ATC_PR.splitlines()[2] + "\n")
    reading = load(path, split=False).host.reading
    assert (reading.read_lines, reading.prose_lines) == (line_count(path), 0)


# xujiyou/blog-data 其他/面试题/Linux/NUMA.md (evaluation snapshot 76): the command
# in one fence, "结果：" (result), the output in the next fence
ZH_FENCED_APART = """查看各 Node 之间呢的 Distance 情况：

```
$ sudo yum install numactl
$ sudo numactl --hardware
```

结果：

```
available: 2 nodes (0-1)
node 0 cpus: 0 1 2 3 4 5 12 13 14 15 16 17
node 0 size: 64155 MB
node 0 free: 5618 MB
node 1 cpus: 6 7 8 9 10 11 18 19 20 21 22 23
node 1 size: 64481 MB
node 1 free: 496 MB
node distances:
node   0   1
  0:  10  21
  1:  21  10
```
"""


def test_a_command_fenced_apart_from_its_output_is_read_without_an_error(tmp_path):
    path = tmp_path / "NUMA.md"
    path.write_text(ZH_FENCED_APART)
    host = load(path, split=False).host
    assert {n: node.free_mb for n, node in host.numa.nodes.items()} == {0: 5618, 1: 496}
    assert host.errors == []
    assert_accounted(host.reading, line_count(path))


def test_a_command_with_no_output_and_no_output_after_it_is_still_reported(tmp_path):
    path = tmp_path / "t.md"
    path.write_text(ZH_FENCED_APART.split("结果")[0])
    host = load(path, split=False).host
    assert [e.message for e in host.errors if "numactl_hardware" in e.message]


# plantegg/plantegg.github.io source/_posts/十年后数据库还是不敢拥抱NUMA.md (evaluation
# snapshot 109): a Hexo post's front matter, then the lscpu of the server it is about
HEXO_POST = """---
title: 十年后数据库还是不敢拥抱NUMA？
date: 2021-05-14 17:30:03
categories:
    - CPU
tags:
    - Linux
    - NUMA
    - CPU
    - Performance
    - zone_reclaim_mode
---

这台物理机CPU 信息
```
#lscpu
Architecture:          aarch64
Byte Order:            Little Endian
CPU(s):                128
On-line CPU(s) list:   0-127
Thread(s) per core:    1
Core(s) per socket:    64
Socket(s):             2
NUMA node(s):          1
```
"""


def test_a_blog_posts_front_matter_is_prose():
    split = read_transcript(HEXO_POST)
    assert set(split.roles[:12]) == {PROSE}
    assert not split.unrecognised
    (block,) = [b for b in split.blocks if b.kind]
    assert block.kind == "lscpu"


def test_a_leading_rule_without_front_matter_is_not_prose():
    # "---" then command output: not YAML front matter
    text = "---\nnode 0 cpus: 0 1 2 3\nnode 0 size: 32722 MB\n---\n"
    assert read_transcript(text).roles[1] != PROSE


def test_a_table_reader_hands_back_the_lines_it_did_not_read_at_its_end():
    """lscpu's topology lines followed by two other lines of a kernel test robot log
    (tests/fixtures/published/lkp-console-cpu-topology-2.log): lscpu reports them as not
    read, so they are not counted as its output but as an unrecognised block."""
    path = FIXTURES / "published" / "lkp-console-cpu-topology-2.log"
    host = load(path, split=False).host
    assert_accounted(host.reading, line_count(path))
    assert [(a.kind, a.start_line, a.end_line) for a in host.reading.artifacts] == [("lscpu", 1, 11)]
    assert [(u.start_line, u.end_line) for u in host.reading.unrecognised] == [(13, 15)]
    assert not [e for e in host.errors if "not read" in e.message]
