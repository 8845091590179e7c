"""General readers of the fix round after issue 26's blind round J, each on the
real excerpt that needed it (``tests/fixtures/published/roundj/``, sources in
tests/fixtures/published/README.md) and on a second real input of the same kind
from elsewhere (another round's snapshot, another published page, a file of
this machine).

readj-b (prose and markup): numbered headings of manuals, Korean and Japanese
page chrome and sentence fragments, English prose quoting figures, Chinese
labels over glossed terms and replies to someone, a manual's parameter-table
row, list items of references, a command in inline code over its output, an
``<img>`` tag, the end of a code span, a label spaced from its colon, an arrow
note, Redis commands quoted in notes."""

from __future__ import annotations

from collectors.transcript import (
    _cjk_prose,
    code_label_command,
    code_span_end,
    line_class,
    markdown_markup,
    note_kind,
    quoted_command,
    read_transcript,
)
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
