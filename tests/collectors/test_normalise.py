"""Pastes as people make them (acceptance 1): a real output quoted, indented,
CRLF'd, stamped by a terminal logger, wrapped for Jira / Markdown / HTML, its
tabs turned into spaces or its spaces into non-breaking ones, yields the same
facts as the clean output; and line numbers still point at the original."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collectors import normalise as n
from collectors.archive import load
from collectors.facts import SnapshotFacts, to_dict
from collectors.normalise import LOG_PREFIXES, normalise
from collectors.transcript import read_transcript
from engine.run import analyze
from tests.collectors import local_outputs as local
from tests.collectors import mangling
from tests.conftest import CORPUS, FIXTURES

CORPUS_OUTPUTS = [
    ("lscpu", "lscpu/util-linux_lscpu-x86_64-epyc_7451.txt"),
    ("lscpu", "lscpu/util-linux_lscpu-s390-kvm.txt"),
    ("lscpu", "lscpu/insights-core_test_lscpu_LSCPU_1.txt"),
    ("numactl -H", "numactl/percona-toolkit_pt-summary_007_numactl.txt"),
    ("cat /proc/meminfo", "meminfo/insights-core_test_meminfo_MEMINFO.txt"),
    ("cat /sys/devices/system/node/node1/numastat", "numastat/node_exporter_node1_numastat.txt"),
    ("sysctl -a", "sysctl/percona-toolkit_pt-summary_006_sysctl.txt"),
    ("cat /proc/interrupts", "interrupts/insights-core_test_interrupts_INT_MULTI.txt"),
    ("cat /proc/softirqs", "softirqs/" + sorted(p.name for p in (CORPUS / "softirqs").iterdir())[0]),
    (
        "mysql -e 'SHOW GLOBAL VARIABLES'",
        "mysql/percona-toolkit_pt-mysql-summary_temp_enc008_mysql-variables.txt",
    ),
    ("virsh dumpxml guest", "libvirt/libvirt_cpu-topology5.xml"),
    ("virsh dumpxml guest", "libvirt/libvirt_memory-hotplug-dimm.xml"),
]
LOCAL = ["lscpu", "numactl", "numastat", "meminfo", "variables", "dumpxml"]

# One optional mangler per stage, in the order damage happens: the content is
# copied (tabs, spaces), a logger records it, it is wrapped into a ticket or a
# mail, indented, quoted in a reply, sent from Windows.
STAGES = [
    ["tabs_to_spaces", "nbsp", "fullwidth"],
    ["ansi_timestamps", "bracket_timestamps"],
    ["jira", "noformat", "markdown", "html_pre", "html_br"],
    ["indent_spaces", "indent_tab"],
    ["quote", "quote_nested"],
    ["crlf"],
]
# facts that say where, not what
WHERE = {"source", "sources", "lines", "line", "reading", "artifacts", "errors", "label", "start_line"}


def facts(text: str) -> dict:
    (host,) = load(text.encode("utf-8"), name="paste.txt").hosts
    return _strip(to_dict(host))


def _strip(value):
    """Facts without provenance; inside a value a run of whitespace is one
    space (a tab turned into spaces cannot be told back, and means the same:
    ``net.ipv4.tcp_rmem = 4096<TAB>87380``)."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in WHERE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    if isinstance(value, str):
        return " ".join(value.split())
    return value


def _output(source: tuple[str, str]) -> tuple[str, str]:
    kind, ref = source
    if kind == "local":
        return local.command(ref), local.output(ref)
    return kind, (CORPUS / ref).read_text().rstrip("\n")


sources = st.sampled_from([("local", name) for name in LOCAL] + CORPUS_OUTPUTS)
manglings = st.tuples(*(st.one_of(st.none(), st.sampled_from(stage)) for stage in STAGES))


@settings(max_examples=45, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(source=sources, chosen=manglings)
def test_mangled_pastes_give_the_same_facts(source, chosen):
    command, output = _output(source)
    clean = f"[root@db01 ~]# {command}\n{output}\n[root@db01 ~]# "
    mangled = clean
    for name in chosen:
        if name is not None:
            mangled = mangling.MANGLERS[name](mangled)
    expected = facts(clean)
    assert expected != facts("")  # the clean paste says something
    assert facts(mangled) == expected, [n for n in chosen if n]


def test_the_first_line_after_pre_code_is_kept():
    output = (CORPUS / "numactl" / "percona-toolkit_pt-summary_007_numactl.txt").read_text()
    (host,) = load(mangling.html_pre(output).encode(), name="ticket.html").hosts
    assert host.numa is not None and len(host.numa.nodes) == 2
    assert host.numa.lines["available"] == 1  # on the <pre><code> line itself


def test_line_numbers_point_at_the_original_after_br_and_jira():
    output = (CORPUS / "numactl" / "percona-toolkit_pt-summary_007_numactl.txt").read_text().rstrip("\n")
    text = "Hi,\n\nhere is the host:\n{code}\n[root@h ~]# numactl -H\n" + output + "\n{code}\nThanks"
    (host,) = load(text.encode(), name="jira.txt").hosts
    assert host.numa.lines["available"] == 6
    r = host.reading
    assert r.prompt_lines == 1 and r.read_lines == len(output.split("\n"))
    assert r.lines == len(text.split("\n"))


def test_normalise_keeps_a_log_files_own_timestamps():
    log = (CORPUS / "mysql" / "insights-core_test_mariadb_log_MARIADB_LOG.txt").read_text()
    assert normalise(log).lines == log.split("\n")


def test_normalise_maps_every_line_back():
    n = normalise("> node 0 cpus: 0 2\r\n> 4 6\r\n>\r\n> <pre>a<br>b</pre>")
    assert n.lines[0] == "node 0 cpus: 0 2 4 6"
    assert len(n.first) == len(n.lines) == len(n.last)
    assert n.first[0] == 0 and n.last[0] == 1
    assert all(0 <= a <= b < n.original_lines for a, b in zip(n.first, n.last, strict=True))


def test_a_line_break_written_as_an_entity_is_a_line_break():
    # a ticket system that stored the paste as one line with "&#10;" between lines
    output = (CORPUS / "numactl" / "percona-toolkit_pt-summary_007_numactl.txt").read_text().rstrip("\n")
    text = "<pre>[root@h ~]# numactl -H&#10;" + output.replace("\n", "&#10;") + "</pre>"
    assert normalise(text).lines[1:3] == ["[root@h ~]# numactl -H", output.split("\n")[0]]
    (host,) = load(text.encode(), name="ticket.html").hosts
    assert host.numa is not None and len(host.numa.nodes) == 2
    assert host.reading.lines == 1  # every cleaned line still points at the one original line


# docker-library/mysql#248 (otaroo, 2016-12-29): "docker-compose up" output of mysqld
_MYSQLD = (
    "2016-12-29T15:17:43.833323Z 0 [Note] InnoDB: Number of pools: 1",
    "2016-12-29T15:17:43.838835Z 0 [Note] InnoDB: Using CPU crc32 instructions",
    "2016-12-29T15:17:43.851010Z 0 [Note] InnoDB: Initializing buffer pool, total size = 128M, instances = 1,"
    " chunk size = 128M",
    "2016-12-29T15:17:43.851927Z 0 [ERROR] InnoDB: mmap(137428992 bytes) failed; errno 12",
)
COMPOSE_LOG = "\n".join("db_1         | " + line for line in _MYSQLD)


def test_docker_compose_service_prefixes_are_removed():
    n = normalise(COMPOSE_LOG)
    assert n.lines == list(_MYSQLD)
    assert "docker compose service prefixes removed" in n.notes
    (host,) = load(COMPOSE_LOG.encode(), name="log.txt").hosts
    events = host.database.events
    assert [e.kind for e in events][-2:] == ["buffer_pool_init", "error"]


def test_a_markdown_table_is_not_a_compose_log():
    table = "name | value\nsize | 8G\nmode | strict\nnodes | 2\n"
    assert normalise(table).lines == table.split("\n")


# netdata/netdata#3461 (evaluation snapshot 105): a grep of /proc/meminfo pasted
# without a fence; GitHub renders the author's ** as bold, across lines
NETDATA_BOLD = """Hi,
I monitor some Oracle Database Systems which use Hugepages:

cat /proc/meminfo |grep -i Hugep
AnonHugePages:    368640 kB
**HugePages_Total:   53342
HugePages_Free:    11904**
HugePages_Rsvd:        0
HugePages_Surp:        0
**Hugepagesize:       2048 kB**

Those are reserved at front and show up as used RAM:

![image](https://user-images.githubusercontent.com/615675/36591428-4a06bef2-1892-11e8-85c7-c908c3bcf05c.png)
"""


def test_markdown_bold_around_output_lines_is_removed():
    n = normalise(NETDATA_BOLD)
    assert n.lines[5:10] == [
        "HugePages_Total:   53342",
        "HugePages_Free:    11904",
        "HugePages_Rsvd:        0",
        "HugePages_Surp:        0",
        "Hugepagesize:       2048 kB",
    ]
    assert n.first == list(range(len(n.lines)))
    (host,) = load(NETDATA_BOLD.encode(), name="issue.txt").hosts
    assert host.meminfo.values["HugePages_Total"] == 53342
    assert host.meminfo.lines["HugePages_Total"] == 6  # the original line
    assert host.hugepages.nr_hugepages == 53342 and host.hugepages.hugepagesize_kb == 2048
    assert host.reading.unrecognised_lines == 0


def test_bold_inside_a_fence_or_within_a_line_is_kept():
    fenced = "```\n**HugePages_Total:   53342\n```\n"
    assert normalise(fenced).lines == fenced.split("\n")
    prose = "**Note:** the pool is 8G\n*************************** 1. row ***************************\n"
    assert normalise(prose).lines == prose.split("\n")


PUBLISHED = FIXTURES / "published"


def test_a_ci_runners_timestamps_are_learnt_and_removed():
    """A GitHub Actions log: every line behind ``2023-11-08T22:46:24.7198572Z``."""
    path = PUBLISHED / "gha-runner-lscpu-free-log.txt"
    host = load(path, split=False).host
    assert host.cpu.cpus == 2 and host.cpu.sockets == 1 and host.cpu.numa_nodes == 1
    assert host.meminfo.origin == "free"  # free -h, after lscpu's Vulnerability lines
    kinds = {(a.kind, a.start_line) for a in host.reading.artifacts}
    assert ("lscpu", 13) in kinds  # citations keep the original line numbers
    assert host.reading.lines == len(path.read_text().split("\n"))


def test_kernel_console_prefixes_are_learnt_and_removed():
    """A kernel test robot console log: ``[   28.812567][  T127] `` before lscpu's lines."""
    host = load(PUBLISHED / "lkp-console-cpu-topology.log", split=False).host
    assert host.cpu.cpus == 2 and host.cpu.numa_nodes == 1
    assert host.cpu.numa_node_cpus == {0: [0, 1]}


def test_comment_marks_before_a_numastat_table_are_removed():
    """``numastat -n`` quoted in a shell script's comments (``# Numa_Hit ...``)."""
    host = load(PUBLISHED / "numastat-n-script-comment.txt", split=False).host
    assert sorted(host.numa.nodes) == [0, 1]
    assert host.numa.nodes[1].numastat["numa_hit"] == 637699
    assert host.numa.nodes[0].numastat["other_node"] == 72651


def test_a_log_whose_parser_reads_the_times_keeps_them():
    log = (CORPUS / "mysql" / "insights-core_test_mariadb_log_MARIADB_LOG.txt").read_text()
    split = read_transcript(log)
    assert not [n for n in split.notes if n.endswith(LOG_PREFIXES)]


def test_a_logged_line_that_starts_with_its_own_time_loses_only_the_loggers_prefix():
    """Another kernel test robot console log: the run's ``[   50.31][  T420] `` is removed
    from ``[   50.317507][  T420] 2026-05-30 10:54:26 cd /lkp/...`` too, not its own time,
    and lscpu's topology lines alone (no ``CPU(s):``) are read as lscpu."""
    host = load(PUBLISHED / "lkp-console-cpu-topology-2.log", split=False).host
    assert (host.cpu.threads_per_core, host.cpu.cores_per_socket, host.cpu.sockets) == (2, 10, 1)
    (block,) = host.reading.unrecognised
    assert block.first_line == "2026-05-30 10:54:26 cd /lkp/benchmarks/blktests"


# Text made of the characters the hinted patterns turn on, so that markers at a
# line's start, in its middle and at its end, quoted and indented, all occur.
_MARKUP_TEXT = st.text(alphabet="ab1 \t\n*`~>|.-_is", max_size=80)


@settings(max_examples=400, deadline=None)
@given(_MARKUP_TEXT)
def test_a_hint_finds_the_same_lines_as_a_search_of_the_whole_text(text):
    assert n.lines_holding(n._BOLD_EDGE, text, hint="**") == n.lines_holding(n._BOLD_EDGE, text)
    assert n.lines_holding(n._CODE_TICK, text, hint="`") == n.lines_holding(n._CODE_TICK, text)
    assert n.fence_lines(text) == n.lines_holding(n._MD_FENCE, text)
    assert n._has_joined_quote(text) == (n._JOINED_QUOTE.search(text) is not None)
    # the compose-log pattern before it was made possessive
    backtracking = re.compile(r"\n[A-Za-z0-9][\w.-]{0,63}[ \t]+\|[ \t]?")
    found, before = n._COMPOSE_NEXT.search("\n" + text), backtracking.search("\n" + text)
    assert (found and found.span()) == (before and before.span())


# Text made of what the log-prefix lead turns on: blanks, gutters, brackets,
# digits (ASCII and others), capitals, level words, marks, and what it does not.
_PREFIX_PIECES = [
    *" \t\n|│[]<>#-:.)1٣aZéÉ",
    "2024-05-01 ",
    "10:00:01",
    "May 1 ",
    "INFO",
    "WARN",
    "[stdout]",
    "12 | ",
]
_PREFIX_TEXT = st.lists(st.sampled_from(_PREFIX_PIECES), max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(_PREFIX_TEXT)
def test_the_log_prefix_look_ahead_finds_the_same_lines(text):
    # the lead's search before its first character was looked at ahead
    plain = re.compile(r"\n" + n._PREFIX_LEAD, re.M)
    assert [m.span() for m in n._PREFIX_NEXT.finditer(text)] == [m.span() for m in plain.finditer(text)]


def test_a_whole_line_marked_bold_inside_a_fence_is_read_without_its_markers():
    """redis#10916 (round P 2025): the reporter marked the line that matters in
    a fenced ``sysctl -a | grep vm.overcommit`` as ``**vm.overcommit_memory = 1**``.
    The setting is read, so Redis 7.0.2's false start-up warning (overcommit 0)
    does not decide memory.overcommit_policy against it."""
    path = FIXTURES / "published" / "roundp" / "redis-10916-overcommit-warning-sysctl-bold-in-fence.txt"
    host = load(path, split=False).host
    assert host.sysctl.values["vm.overcommit_memory"] == "1"
    assert "memory.overcommit_policy" not in {f.rule for f in analyze(SnapshotFacts(hosts=[host])).findings}


def test_bold_markers_inside_a_fence_around_part_of_a_line_are_kept():
    lines = ["```", "**a** and **b**", "x = **1**", "```"]
    assert n._unbolded(lines, "\n".join(lines)) == []
