"""General readers of the fix round after issue 26's blind round J, each on the
real excerpt that needed it (``tests/fixtures/published/roundj/``, sources in
tests/fixtures/published/README.md) and on a second real input of the same kind
from elsewhere (another round's snapshot, another published page, a project's
test data, a file of this machine).

readj-a (outputs and tables, class ``TestReadjAOutputsAndTables``): iostat
reports wrapped in two halves, lscpu flattened onto one line, pt-summary's
summary file and report sections, a grepped /proc/interrupts whose row was cut
before its name, outputs not used (pidstat, wrk, Redis log lines, swapon rows,
SQL*Plus startup), a listing's line-number gutter.

readj-b (prose and markup): numbered headings of manuals, Korean and Japanese
page chrome and sentence fragments, English prose quoting figures, Chinese
labels over glossed terms and replies to someone, a manual's parameter-table
row, list items of references, a command in inline code over its output, an
``<img>`` tag, the end of a code span, a label spaced from its colon, an arrow
note, Redis commands quoted in notes."""

from __future__ import annotations

from collectors.archive import load
from collectors.facts import SnapshotFacts
from collectors.parsers import pt_summary
from collectors.parsers.interrupts import parse_interrupts_grep
from collectors.parsers.iostat import parse_iostat
from collectors.parsers.pt_summary import parse_pt_summary
from collectors.transcript import (
    _cjk_prose,
    code_label_command,
    code_span_end,
    line_class,
    listing_gutter,
    markdown_markup,
    match_prompt,
    note_kind,
    quoted_command,
    read_transcript,
)
from collectors.unflatten import unflattened
from collectors.unused import unused_output
from engine.run import analyze
from tests.conftest import FIXTURES

ROUND_J = FIXTURES / "published" / "roundj"
EVALUATION = FIXTURES.parent / "evaluation"
BLIND = FIXTURES.parent / "evaluation_blind"


def _text(name: str) -> str:
    return (ROUND_J / name).read_text()


def _unread(text: str) -> list[tuple[int, int, str]]:
    return read_transcript(text).unrecognised


def _line(path, number: int) -> str:
    return path.read_text().split("\n")[number - 1]


# -- readj-b 1. headings and page chrome


def test_readj_b_numbered_section_heading_of_a_manual():
    # 1400: Microchip's SAMA5 Linux manual
    assert _unread(_text("microchip-sama-cpufreq-section-heading.txt")) == []
    assert line_class("7.1 CPU Frequency Scaling Framework") == "prose"
    # second input: Red Hat OpenStack Platform's guide (tests/evaluation/95)
    page = next(EVALUATION.glob("95-*")) / "page.txt"
    heading = "13.2.2. Default Behavior for Emulator Thread Pinning"
    assert heading in page.read_text().split("\n")
    assert line_class(heading) == "prose"
    # an output row with a version and capitalised names is not a heading
    assert line_class("2.6.32 Linux 64 GB") == "data"


def test_readj_b_korean_page_chrome_and_dated_byline():
    # 1406: a Tistory post's "skip to content", category, title, byline, labels
    assert _unread(_text("somick-vmstat-page-chrome-ko.txt")) == []
    # second input: another Tistory blog (https://hbase.tistory.com/278, pages corpus)
    for line in ("본문 바로가기", "Old Posts/Linux", "by A6K 2022. 2. 10."):
        assert line_class(line) == "prose", line
    # and a byline with a Korean name (https://youngswooyoung.tistory.com/6)
    assert line_class("by 능보테 2020. 12. 31.") == "prose"
    # a Korean-locale output keeps its gaps: data
    assert line_class("아키텍처:                         x86_64") == "data"


# -- readj-b 2. English prose quoting figures


def test_readj_b_wrapped_prose_with_figures_and_metric_names():
    # 1410: Java Performance's iostat discussion, wrapped at the page's width
    assert _unread(_text("whatwhenhow-iostat-prose-with-figures.txt")) == []
    # second inputs: a Red Hat guide (round I, 1313) and a numactl pull request (round A, 216)
    post = next((BLIND / "round-i").glob("1313-*")) / "post.txt"
    line = (
        "Red Hat Enterprise Linux 5 does not provide a 32-bit kernel with 4+4GB split,"
        "it is not recommended on the"
    )
    assert line in post.read_text().split("\n")
    assert line_class(line) == "prose"
    pr = next((BLIND / "round-a").glob("216-*")) / "pr.txt"
    assert line_class(_line(pr, 1)) == "prose"


def test_readj_b_output_rows_stay_data():
    for row in (
        "sda 0.00 11.60 0.60 24.20 0.02",
        "0.14 13.35 0.15 6.06 5.33 6.08 0.42 1.04",
        "node 0 size: 32722 MB",
        "Jul 30 12:00:01 host kernel: Out of memory: Killed process 1234 (mysqld) total-vm:1024kB",
        "1:M 29 Nov 2026 12:00:00.000 * Background saving started by pid 123",
        "MemTotal:       16318460 kB",
    ):
        assert line_class(row) == "data", row


# -- readj-b 3. Chinese and Japanese prose


def test_readj_b_chinese_label_over_glossed_terms():
    # 1405: simonsu.net's InnoDB note
    assert _unread(_text("simonsu-innodb-memory-glossed-terms-zh.txt")) == []
    # second input: a Chinese note on MongoDB's NUMA warning (round H, 1220)
    post = next((BLIND / "round-h").glob("1220-*")) / "post.txt"
    assert line_class(_line(post, 13)) == "prose"
    assert _line(post, 13) == "SMP (对称多处理器结构: Symmetric Multi-Processor)"
    # and the other way, a Chinese term glossed in English (round I, 1311)
    post = next((BLIND / "round-i").glob("1311-*")) / "post.txt"
    assert _line(post, 6) == "- 返回值单位:字节(Byte)"
    assert line_class(_line(post, 6)) == "prose"
    # a CJK-locale key: value output is not one
    assert not _cjk_prose("虚拟化类型：完全")
    assert not _cjk_prose("型号名称：Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz")


def test_readj_b_japanese_fragments_around_code():
    # 1415: blog.amedama.jp, each inline-code word set on its own line
    assert _unread(_text("amedama-netns-sentence-fragments-ja.txt")) == []
    assert line_class("と ns2") == "prose"


def test_readj_b_reply_addressed_to_someone():
    # 1429: NBping issue 40, the maintainer's reply "@zx4i    非常感谢..."
    assert _unread(_text("nbping-40-reply-mention-zh.txt")) == []


def test_readj_b_redis_commands_quoted_in_notes():
    # 1431: itwwj/iot-project's Redis notes: "# 命令执行耗时超过 5 毫秒，记录慢日志" over CONFIG SET
    assert _unread(_text("itwwj-redis-slowlog-config-notes-zh.md")) == []
    # second input: round I's 1311 (yongjin), a CONFIG GET typed alone
    post = next((BLIND / "round-i").glob("1311-*")) / "post.txt"
    assert _line(post, 4) == "CONFIG GET maxmemory"
    assert quoted_command(_line(post, 4))
    assert note_kind("# 只保留最近 500 条慢日志", "prose") == "comment"
    # a sentence is not a command
    assert not quoted_command("Set the limit before you start")


# -- readj-b 4. Markdown and HTML markup


def test_readj_b_parameter_table_row_of_a_manual():
    # 1417: IBM's AIX ping page, one row of its parameter table
    assert _unread(_text("ibm-aix-ping-parameter-table-row.txt")) == []
    # second input: Node.js's contributing guide on this machine
    # (/usr/share/doc/nodejs/contributing/backporting-to-release-lines.md, line 28)
    row = "| backport-open-vN.x      | Indicates an open backport for the PR.                              |"
    assert markdown_markup([row])
    # an SQL grid's row is not one
    assert not markdown_markup(["| innodb_buffer_pool_size | 134217728 |"])


def test_readj_b_list_items_of_references():
    # 1424: docker-library/redis issue 346, "See also" then a link and issue numbers
    assert _unread(_text("docker-library-redis-346-see-also-list.txt")) == []
    # second input: sqlparse's __main__.py docstring (this machine's site-packages)
    assert line_class("- https://www.python.org/dev/peps/pep-0338/") == "prose"
    assert line_class("- #165") == "prose"
    # and an item quoting a command in inline code (rook issue 11005, round H 1202)
    issue = next((BLIND / "round-h").glob("1202-*")) / "issue.txt"
    assert _line(issue, 8) == "- `iostat -x 1 /dev/sda`"
    assert line_class(_line(issue, 8)) == "prose"


def test_readj_b_command_in_inline_code_names_the_fence_below():
    # 1425: coreos/bugs issue 2135
    split = read_transcript(_text("coreos-2135-code-label-over-fence.txt"))
    assert split.unrecognised == []
    assert [(b.command, b.start_line) for b in split.blocks] == [("cat /proc/interrupts | grep ens192", 6)]
    # second input: Node.js's dgram docs on this machine ("`localhost`:", not a command)
    assert line_class("`localhost`:") == "prose"
    assert code_label_command("`localhost`:") is None
    assert code_label_command("`cat /proc/interrupts`:") == "cat /proc/interrupts"


def test_readj_b_img_tag_and_the_end_of_a_code_span():
    # 1429: an <img> of a screenshot, and "`nping.exe -V" / "nping v0.2.1`"
    assert _unread(_text("nbping-40-img-and-code-span-end.txt")) == []
    # second input: charset_normalizer's README (this machine's METADATA, line 50)
    img = (
        '    <img alt="Download Count Total" src="https://static.pepy.tech/badge/charset-normalizer/month" />'
    )
    assert line_class(img) == "prose"
    assert not code_span_end(["nping v0.2.1`"], "no code here")


def test_readj_b_label_spaced_from_its_colon():
    # 1432: irqbalance issue 274, "sample :" over a fence
    assert _unread(_text("irqbalance-274-sample-label.txt")) == []
    # second input: cyberark/conjur's CONTRIBUTING.md (this machine's ansible collections, line 42)
    assert line_class("environment :") == "prose"
    assert line_class("basedir /usr") == "data"


def test_readj_b_arrow_note():
    # 1435: retspen/webvirtcloud issue 235, "hypervisor host ---> lscpu" over a fence
    assert _unread(_text("webvirtcloud-235-arrow-note.txt")) == []
    # a symbolic link of ls -l is data
    assert line_class("lrwxrwxrwx 1 root root 7 Jan  1 lib -> usr/lib") == "data"


def _host(name: str):
    return load(ROUND_J / name, split=False).host


def _rules(host) -> set[str]:
    return {f.rule for f in analyze(SnapshotFacts(hosts=[host])).findings}


# -- readj-a: outputs and tables (snapshots 1401, 1403, 1410-1413, 1418, 1425, 1427, 1430)


class TestReadjAOutputsAndTables:
    # an iostat report whose wide rows a page wrapped into two halves
    def test_iostat_halves_of_a_book_page_put_back_side_by_side(self):
        """whatwhenhow (1410): ``Device: rrqm/s ... rMB/s`` / ``sda ...`` then
        ``wMB/s ... %util`` / the row's other cells, under a csh ``%`` prompt."""
        assert match_prompt("% iostat -xm 5") == ("shell", "iostat -xm 5", None)
        lines = _text("whatwhenhow-java-perf-iostat-xm-wrapped-halves.txt").split("\n")
        (sda,) = parse_iostat("\n".join(lines[19:25])).devices
        assert (sda.await_ms, sda.w_await_ms, sda.util_pct) == (866.47, 871.17, 100.0)
        host = _host("whatwhenhow-java-perf-iostat-xm-wrapped-halves.txt")
        assert [(d.device, d.line) for d in host.disks.devices][-1] == ("sda", 23)
        assert "disk.latency_high" in _rules(host)
        # the two reports are read, prompts included; what is left is the book's prose
        assert all(
            u.start_line not in range(1, 8) and u.start_line not in range(19, 29)
            for u in host.reading.unrecognised
        )

    def test_iostat_halves_split_after_wmb_s(self):
        """Matsunobu 2009: the halves split after ``wMB/s``, svctm-era columns."""
        stats = parse_iostat(_text("matsunobu-2009-iostat-xm-wrapped-halves.txt"))
        (sdb,) = stats.devices
        assert (sdb.device, sdb.await_ms, sdb.util_pct, sdb.line) == ("sdb", 3.2, 92.66, 12)
        host = _host("matsunobu-2009-iostat-xm-wrapped-halves.txt")
        assert host.reading.unrecognised_lines == 0

    # lscpu flattened onto one line
    def test_lscpu_flattened_without_its_command(self):
        """117info (1401): the page's sentence names lscpu; the output is one line."""
        line = _text("117info-lscpu-loongarch64-flattened-zh.txt").split("\n")[5]
        pieces = unflattened(line)
        assert pieces is not None and pieces[0] == "Architecture: loongarch64" and len(pieces) == 15
        cpu = _host("117info-lscpu-loongarch64-flattened-zh.txt").cpu
        assert (cpu.architecture, cpu.cpus, cpu.sockets, cpu.cores_per_socket, cpu.threads_per_core) == (
            "loongarch64",
            8,
            1,
            4,
            2,
        )
        assert cpu.numa_nodes == 1 and cpu.lines["cpus"] == 6
        assert _host("117info-lscpu-loongarch64-flattened-zh.txt").reading.unrecognised_lines == 0

    def test_lscpu_flattened_behind_its_prompt(self):
        """This machine's lscpu (util-linux 2.39: address sizes, vulnerabilities), flattened."""
        pieces = unflattened(_text("this-vm-lscpu-flattened.txt").strip())
        assert pieces is not None and pieces[:2] == ["$ lscpu", "Architecture: x86_64"]
        assert "NUMA node0 CPU(s): 0,1" in pieces and "Socket(s): 1" in pieces
        cpu = _host("this-vm-lscpu-flattened.txt").cpu
        assert (cpu.cpus, cpu.sockets, cpu.numa_nodes, cpu.numa_node_cpus) == (2, 1, 1, {0: [0, 1]})
        assert cpu.hypervisor_vendor == "KVM"

    def test_an_lscpu_line_as_lscpu_prints_it_is_not_cut(self):
        assert unflattened("Architecture:                            x86_64") is None

    # pt-summary's raw summary file
    def test_pt_summary_summary_file_schedulers_kernel(self):
        """pt-summary sample 002 (1418): ``internal::hda    [cfq] 128``."""
        kernel, schedulers = parse_pt_summary(_text("pt-summary-002-summary"))
        assert kernel.release == "2.6.18-274.el5"
        assert schedulers.active == {"hda": "cfq", "hdc": "cfq"} and schedulers.lines["scheduler.hda"] == 15
        host = _host("pt-summary-002-summary")
        assert host.io_schedulers.active["hda"] == "cfq" and host.reading.unrecognised_lines == 0
        assert "disk.io_scheduler" in _rules(host)

    def test_pt_summary_summary_file_without_a_scheduler_on_dm(self):
        """pt-summary sample 006: device-mapper rows print no scheduler (``internal::dm-0     128``)."""
        results = parse_pt_summary(_text("pt-summary-006-summary"))
        schedulers = next(r for r in results if hasattr(r, "active"))
        assert schedulers.active == {"mmcblk0": "mq-deadline", "nvme0n1": "none"}
        sysctl = next(r for r in results if hasattr(r, "setting_count"))
        assert sysctl.values == {"vm.swappiness": "60"} and sysctl.lines == {"vm.swappiness": 15}

    def test_pt_summary_partitioning_is_fdisk_not_used(self):
        """Samples 002 and 006: ``partitioning`` is ``fdisk -l``, an output no rule reads."""
        for name in ("pt-summary-002-partitioning", "pt-summary-006-partitioning"):
            reading = _host(name).reading
            assert [u.what for u in reading.unused] == ["fdisk"] and reading.unrecognised_lines == 0

    def test_pt_summary_report_read_by_section(self):
        """pt-summary's report of sample 006: each ``# <title> ####`` line names its
        section; the header, the schedulers and the top processes are read, the
        other sections are pt-summary output not used."""
        assert pt_summary.report_section(
            "# Top Processes ##############################################"
        ) == ('pt-summary section "Top Processes"')
        text = _text("pt-summary-output-006-report.txt")
        host = _host("pt-summary-output-006-report.txt")
        reading = host.reading
        assert [(a.kind, a.start_line) for a in reading.artifacts] == [
            ("kernel", 1),
            ("io_scheduler", 88),
            ("top", 196),
        ]
        assert host.kernel.release == "5.15.0-41-generic"
        assert host.io_schedulers.active == {"mmcblk0": "mq-deadline", "nvme0n1": "none"}
        assert {u.what for u in reading.unused} == {"pt-summary"} and reading.unrecognised_lines == 0
        # as pt-summary prints it, under its first section's line
        titled = "# Percona Toolkit System Summary Report ######################\n" + text
        (whole,) = load(titled.encode(), name="pt-summary.txt").hosts
        assert whole.kernel.release == "5.15.0-41-generic" and whole.reading.unrecognised_lines == 0

    # a grepped /proc/interrupts whose row the paste cut before its name
    def test_grepped_interrupts_row_cut_before_its_name_is_the_greps(self):
        """coreos 2135 (1425): ``cat /proc/interrupts | grep ens192`` above a fence, row 57
        cut after 19 of 46 counts."""
        host = _host("coreos-2135-grep-ens192-interrupts-row-cut.txt")
        irq = host.interrupts
        assert irq.named_by_grep == {"57": "ens192"} and len(irq.rows["57"]) == 19
        assert any("row 57 cut after 19 of 46 CPUs" in e.message for e in host.errors)
        findings = analyze(SnapshotFacts(hosts=[host])).findings
        (f,) = [f for f in findings if f.rule == "net.irq_single_cpu"]
        assert f.values["queues"] == 2 and "the command greps ens192" in f.values["names"]
        assert host.reading.unrecognised_lines == 0

    def test_grepped_interrupts_row_cut_in_irqbalance_122(self):
        """irqbalance 122: ``grep eth /proc/interrupts`` cut inside row 29 (9 counts of 32)."""
        text = (FIXTURES / "published" / "host" / "irqbalance-122-grep-eth-interrupts.txt").read_text()
        body = "\n".join(text.splitlines()[1:])
        assert "29" not in parse_interrupts_grep(body).rows  # no grep word: the cut row is left out
        irq = parse_interrupts_grep(body, grep="eth")
        assert irq.named_by_grep == {"29": "eth"} and irq.rows["29"][0] == 345044273
        assert irq.cut is not None and irq.cut.rows == ["29"]
        # a grep -v keeps the rows without the word: nothing is named by it
        host = load(text.replace("grep eth", "grep -v eth").encode(), name="t.txt").hosts[0]
        assert host.interrupts.named_by_grep == {}

    # outputs Casebook does not read
    def test_pidstat_under_sysstat_banner_not_used(self):
        """likexu (1427) and this machine's ``pidstat -u``: not taken for iostat or sar."""
        for name, first in (("likexu-kde-125-pidstat-iostat-zh.txt", 10), ("this-vm-pidstat-u.txt", 1)):
            reading = _host(name).reading
            assert [(u.what, u.start_line) for u in reading.unused][:1] == [("pidstat", first)]
            assert reading.unrecognised_lines == 0
        assert _host("likexu-kde-125-pidstat-iostat-zh.txt").disks.devices[0].device == "sda"

    def test_wrk_results_not_used(self):
        """kunpeng 38 (1430) and wrk's README."""
        assert [u.what for u in _host("kunpeng-38-wrk-results-zh.txt").reading.unused] == ["wrk", "wrk"]
        assert [u.what for u in _host("wrk-readme-basic-usage.txt").reading.unused] == ["wrk"]

    def test_redis_save_log_lines_not_used(self):
        """comdolidol (1413): messages without the prefix and a reply cut before its value;
        pulibrary 500: prefixed saves that never forked (no fork time to read)."""
        lines = _text("comdolidol-redis-log-lines-ko.txt").split("\n")
        assert unused_output(lines[8]) == unused_output(lines[11]) == "Redis log"
        assert unused_output(lines[20]) == "redis-cli"
        assert _host("comdolidol-redis-log-lines-ko.txt").reading.unrecognised_lines == 0
        reading = _host("pulibrary-bibdata-500-redis-bgsave-fork-failed.log").reading
        assert [u.what for u in reading.unused] == ["Redis log"] and reading.read_lines == 0

    def test_swapon_row_oracle_startup_not_used(self):
        """fromdual (1411): ``# swapon --show`` and its header-less row; twcomputer (1412):
        ``SQL> startup`` failing with ORA-00845."""
        assert unused_output("/dev/sdb2 partition 29.8G 1.6G   -1") == "swapon"
        assert unused_output("/dev/sda2 partition 16777212 2097152 -1") == "swapon"
        assert _host("fromdual-free-swapon-vmstat-sar.txt").reading.unrecognised_lines == 0
        reading = _host("twcomputer-oracle-startup-ora-00845-trad-zh.txt").reading
        assert ("sqlplus startup", 6) in [(u.what, u.start_line) for u in reading.unused]

    # a listing's line numbers printed apart from its code
    def test_listing_gutter_is_markup(self):
        """ecomnet (1403): ``1`` .. ``11`` and ``|`` above the prompts; daxin's git notes:
        ``1`` .. ``4`` above ``[root@daxin-vpn myfirstrepo]# cat .gitignore``."""
        assert listing_gutter([str(n) for n in range(1, 12)] + ["|"])
        assert not listing_gutter(["1", "3", "5"])  # seq 1 2 5 prints these
        for name in ("ecomnet-hugetlb-config-listing-gutter-zh.txt", "daxin-git-notes-listing-gutter-zh.txt"):
            assert _host(name).reading.unrecognised_lines == 0
        assert _host("ecomnet-hugetlb-config-listing-gutter-zh.txt").kernel.release == "2.6.38.8"
