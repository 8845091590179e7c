"""General readers of the reading round after issue 26's blind rounds D, E and F
(issue 26, "read fresh pastes as well as the evaluation set"), each on the real
text that needed it (excerpts in tests/fixtures/published/roundsdef/, origins in
tests/fixtures/published/README.md): a prompt opened as inline code, lstopo's
``Block(Disk) "sda"`` rows, a thread's labels and title, commands behind
``sudo``, sentences quoting inline code, a post's Markdown tables and rules."""

from __future__ import annotations

import os
import subprocess

from collectors.archive import load
from collectors.normalise import normalise
from collectors.transcript import (
    PROMPT,
    PROSE,
    READ,
    UNRECOGNISED,
    line_class,
    markdown_markup,
    message_header,
    read_transcript,
    title_heading,
)
from tests.conftest import FIXTURES

ROUNDS = FIXTURES / "published" / "roundsdef"


def _text(name: str) -> str:
    return (ROUNDS / name).read_text()


def _roles(name: str) -> list[int]:
    return list(read_transcript(_text(name)).roles)


def _line(name: str, start: str) -> int:
    """The 0-based index of the excerpt's first line starting with ``start``."""
    return next(i for i, line in enumerate(_text(name).splitlines()) if line.startswith(start))


# -- 1. a prompt opened as Markdown inline code, and lstopo's block devices


def test_a_prompt_after_an_inline_code_backtick_is_a_prompt_and_its_output_is_read():
    """QAT_Engine 303: `` `root@xxx:~# lstopo --ignore PU --merge --no-caches `` on a line of its own."""
    name = "qat-engine-303-lstopo-ignore-pu-backtick-prompt.txt"
    assert normalise(_text(name)).lines[0] == "root@xxx:~# lstopo --ignore PU --merge --no-caches"
    split = read_transcript(_text(name))
    (block,) = split.blocks
    assert (block.command, block.kind) == ("lstopo --ignore PU --merge --no-caches", "hwloc_ls")
    lines = len(_text(name).splitlines())
    assert split.roles[0] == PROMPT and set(split.roles[1:lines]) == {READ}


def test_lstopo_block_device_rows_are_data():
    assert line_class('          Block(Disk) "sdf"') == "data"
    assert line_class("Say hello.") == "prose"


def test_an_lstopo_tree_without_pus_says_why_it_gives_no_cpus():
    host = load(ROUNDS / "qat-engine-303-lstopo-ignore-pu-backtick-prompt.txt", split=False).host
    assert any("--ignore PU" in e.message for e in host.errors)
    assert host.cpu is None and host.numa is None


def test_a_backtick_inside_a_fence_is_kept():
    text = "```\n`root@xxx:~# lstopo\n```\n"
    assert normalise(text).lines[1] == "`root@xxx:~# lstopo"


# -- 2. a thread's labels and title; commands behind sudo; sentences around inline code


def test_a_thread_header_with_labels_and_a_title_is_prose():
    """ATLAS 53: ``labels: bug, reliability``, ``# PC-011 — Redis memory-overcommit warning at startup``."""
    name = "atlas-53-thread-header-fenced-sudo-commands.txt"
    roles = _roles(name)
    assert roles[1:3] == [PROSE, PROSE]
    assert roles[_line(name, "---")] == PROSE  # a thematic break between blank lines
    assert roles[_line(name, "Redis emits this when `vm.overcommit_memory != 1`")] == PROSE


def test_commands_behind_sudo_in_a_fence_are_commands():
    name = "atlas-53-thread-header-fenced-sudo-commands.txt"
    roles = _roles(name)
    assert roles[_line(name, "   sudo sysctl vm.overcommit_memory=1")] == PROMPT
    assert roles[_line(name, "   echo 'vm.overcommit_memory = 1' | sudo tee")] == PROMPT
    assert roles[_line(name, "   (First line applies immediately;")] == PROSE
    assert UNRECOGNISED not in roles[: _line(name, "**Status")] + roles[_line(name, "---") :]


def test_labels_of_a_kubernetes_object_stay_data():
    """``kubectl describe``'s ``Labels:`` column and a YAML map are not a page's tags."""
    assert line_class("labels: feature, fixinbound") == "prose"
    assert line_class("Labels:             app=nginx") == "data"
    assert line_class("labels: {app: nginx}") == "data"


def test_a_title_heading_is_not_a_command_nor_a_comment_sentence():
    assert title_heading("# Unable to detect second CPU while windows does") is True
    assert title_heading("# numactl -H") is False
    assert title_heading("# See sysctl.conf (5) for information.") is False


def test_a_comment_touching_the_lines_below_is_no_lone_title():
    """This machine's /etc/sysctl.conf (Debian 12, copied into the fixture): the
    heading-like ``# Magic system request Key`` sits on the comments of its
    setting, so it stays in their run rather than becoming a prose title of its
    own (the run, comments only, is the quoted file's: prose as a whole since
    round H)."""
    text = (ROUNDS / "debian12-etc-sysctl.conf").read_text()
    lines = text.splitlines()
    i = lines.index("# Magic system request Key")
    assert title_heading(lines[i]) and line_class(lines[i]) == "data"
    roles = read_transcript(text).roles
    assert lines[i + 1].startswith("#") and roles[i] == roles[i + 1]


def test_sentences_with_apostrophes_and_inline_code_are_prose():
    """WSL 1115's template answers; numactl 67's question quoting ``--membind=0``."""
    roles = _roles("wsl-1115-template-apostrophes.txt")
    assert UNRECOGNISED not in roles
    name = "numactl-67-sentence-with-inline-code.txt"
    assert _roles(name)[_line(name, "Also, I noticed that using `--membind=0`")] == PROSE


# -- 3. a post's Markdown tables and rules


def test_markdown_tables_with_empty_cells_are_prose():
    """mffb 464078: ``| |`` / ``|---|`` / ``pswpin | |`` rows of a Chinese swap guide."""
    name = "mffb-464078-markdown-tables-empty-cells-zh.txt"
    roles = _roles(name)
    for i, line in enumerate(_text(name).splitlines()):
        if line.startswith("|") or line.endswith(" |"):
            assert roles[i] == PROSE, line


def test_a_quoted_table_and_a_flattened_table_are_prose():
    """billfeller 109's quoted latency table; cnblogs' free options as ``k | KB |`` rows."""
    assert UNRECOGNISED not in _roles("billfeller-109-quoted-markdown-table.txt")
    assert UNRECOGNISED not in _roles("cnblogs-free-flattened-options-table-zh.txt")


def test_an_sql_grid_is_never_a_markdown_table():
    assert markdown_markup(["| id | name |", "| 1  | db1  |"]) is False
    assert markdown_markup(["+----+------+", "| 1  | db1  |"]) is False


def test_a_heading_underline_is_prose_and_the_output_below_is_read():
    """numactl 127: ``logs`` over ``------------`` above ``llocalhost:~ # numactl -H``."""
    name = "numactl-127-setext-heading-logs.txt"
    roles = _roles(name)
    assert roles[_line(name, "------------")] == PROSE
    assert roles[_line(name, "available: 4 nodes")] == READ


# -- 4. code and configuration a post quotes; a program run under numactl


def _unrecognised(name: str) -> list[str]:
    text = _text(name).splitlines()
    return [text[i] for i, role in enumerate(_roles(name)[: len(text)]) if role == UNRECOGNISED]


def test_awk_fragments_are_code_a_post_quotes():
    """xsos 288: the script's HugePages arithmetic in two fences, one with ``....`` elided."""
    assert _unrecognised("xsos-288-awk-fragments.txt") == []


def test_a_dockerfile_and_a_compose_file_are_configuration():
    """docker-redis 301's ```` ```Dockerfile ```` (FROM, a comment, CMD); bitnami-redis 132's compose file."""
    assert _unrecognised("docker-redis-301-dockerfile.txt") == []
    assert _unrecognised("bitnami-redis-132-compose-file.txt") == []


def test_a_quoted_compose_sysctls_item_is_configuration_and_the_warning_still_read():
    """mailcow 685: ``>       sysctls:`` over ``>       - net.core.somaxconn=511``, the proposed fix."""
    name = FIXTURES / "published" / "roundf" / "mailcow-685-somaxconn-blockquote-joined.txt"
    text = name.read_text().splitlines()
    roles = read_transcript(name.read_text()).roles
    assert roles[text.index(">       - net.core.somaxconn=511")] == PROSE
    host = load(name, split=False).host
    assert [(w.code, w.value) for w in host.services[0].warnings] == [("somaxconn", "128")]
    assert host.sysctl_value("net.core.somaxconn") is None  # the proposal is not the host's value


def test_a_formula_assigned_to_a_name_is_code():
    """starsliao/Prometheus 11: ``mem_free = node_memory_MemAvailable_bytes /  node_memory_MemTotal_bytes``
    on a line of its own between Chinese sentences."""
    assert _unrecognised("starsliao-prometheus-11-promql-formula-zh.txt") == []


def test_data_is_never_code():
    """numastat's JSON and sysctl's settings (the founding case's values) have no statement."""
    from collectors.transcript import code_fragment

    assert not code_fragment(["{", '  "numa_hit": 1386436009,', '  "numa_miss": 0', "}"])
    assert not code_fragment(["vm.zone_reclaim_mode = 0", "kernel.numa_balancing = 0"])
    assert not code_fragment(["Socket Designation: FT2000plus_CPU", "Type: Central Processor"])


def test_what_a_program_under_numactl_prints_is_its_run_not_used():
    """numactl 127: ``numactl --cpunodebind=0 --membind=1 dd ...`` answered by libnuma's refusal."""
    name = "numactl-127-setext-heading-logs.txt"
    split = read_transcript(_text(name))
    assert [what for *_span, what in split.unused] == ["a program run under numactl"]
    assert split.roles[_line(name, "available: 4 nodes")] == READ


# -- 5. docker's version lines, a patch's header, names in a list, a sentence opening with code


def test_docker_version_lines_are_recognised_but_not_used():
    """docker-redis 35: ``docker-machine version 0.4.1 (e2c88d6)``,
    ``Docker version 1.8.2, build 0a8c2e3``."""
    split = read_transcript(_text("docker-redis-35-docker-versions.txt"))
    assert [what for *_span, what in split.unused] == ["docker"]
    assert UNRECOGNISED not in split.roles


def test_a_quoted_patch_header_is_prose():
    """php.cn 65688 quotes the kernel patch ``From fe35004f... Mon Sep 17 00:00:00 2001`` with its header."""
    assert _unrecognised("phpcn-65688-format-patch-header-zh.txt") == []
    assert not message_header(["Date: Tue, 29 May 2012 15:06:47 GMT", "Server: nginx"])


def test_a_list_of_names_in_camel_case_is_prose_but_a_bulleted_value_is_data():
    """xiexianbin: ``- Linux : HugePages`` / ``- BSD : SuperPages`` / ``- Windows : LargePages``."""
    assert _unrecognised("xiexianbin-hugepage-names-list-zh.txt") == []
    assert line_class("* MemTotal: 1234 kB") == "data"


def test_a_sentence_opening_with_inline_code_is_prose():
    """miniflux/website 17: ``\\`uname -m\\` returns \\`aarch64\\` on armv8 machines, not \\`aarch6\\`.``"""
    assert _unrecognised("miniflux-rk3399-sentence-opening-with-code.txt") == []


# -- 6. references to a page, a guide's numbered steps naming a command or a file


def test_a_reference_to_a_page_is_prose():
    """billfeller 109's ``Ref From https://hpbn.co/...``; bohai's note ends with the Markdown link
    definition ``[亲和性]:http://www.ibm.com/...``; an HTTP log line is none."""
    assert _unrecognised("billfeller-109-quoted-markdown-table.txt") == []
    assert _unrecognised("bohai-openstack-note-link-definition-zh.md") == []
    assert line_class("GET http://127.0.0.1:8080/ 200") == "data"
    assert line_class("URL         : http://www.kernel.org/") == "data"


def test_numbered_steps_naming_a_command_or_a_file_are_commands():
    """mffb 464078: ``1. /proc/meminfo`` over ``cat /proc/meminfo | grep Swap``, ``2. /proc/vmstat``."""
    name = "mffb-464078-markdown-tables-empty-cells-zh.txt"
    assert _unrecognised(name) == []
    assert _roles(name)[_line(name, "1. /proc/meminfo")] == PROMPT


def test_a_process_status_grep_is_recognised_but_not_used():
    """This machine's ``grep Cpus_allowed_list /proc/PID/task/*/status`` (the test's own
    process), pasted after a prompt and alone, as bohai's note shows its qemu's threads."""
    pid = os.getpid()
    command = f"grep Cpus_allowed_list /proc/{pid}/task/*/status"
    output = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=True).stdout
    assert output.startswith(f"/proc/{pid}/task/")
    prompted = read_transcript(f"[root@host ~]# {command}\n{output}")
    assert [what for *_span, what in prompted.unused] == ["/proc/PID/status"]
    alone = read_transcript(f"The threads:\n\n{output}")
    assert [what for *_span, what in alone.unused] == ["/proc/PID/status"]
