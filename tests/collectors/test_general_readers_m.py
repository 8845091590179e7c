"""General readers of the fix round after issue 26's blind round M, part a
(branch ``readm-a``), each on the real excerpt that needed it and, where one
exists, on a second real input of the same kind from another round (sources in
tests/fixtures/published/README.md, ``roundm/``).

readm-a: a reply's attribution and the lines of the reply it quotes read as
prose, its quoted output stays an output; a change quoted in a review thread
(a ``diff`` fence, a hunk header, its locator line) is the post's text; a
question-and-answer site's and a forum's chrome, an arrow alone on its line and
task-list items are prose; rows of a Markdown table cut apart by rows that read
as prose are still the table's; a Chinese page's metadata and numbered headings
are prose."""

from __future__ import annotations

from collectors.transcript import (
    PROMPT,
    PROSE,
    READ,
    UNRECOGNISED,
    UNUSED,
    diff_line,
    diff_opened,
    line_class,
    read_transcript,
    wrapped_words,
)
from tests.conftest import FIXTURES, ROOT

ROUND_M = FIXTURES / "published" / "roundm"

# one letter a line for what the splitter read it as
_ROLE_LETTERS = {PROSE: ".", UNRECOGNISED: "?", UNUSED: "u", PROMPT: ">", READ: "r"}


def _text(name: str) -> str:
    return (ROUND_M / name).read_text(encoding="utf-8")


def _roles(text: str) -> str:
    """What each line of ``text`` was read as, one letter a line (``.`` prose,
    ``>`` prompt, ``r`` read, ``u`` not used, ``?`` unrecognised)."""
    roles = read_transcript(text).roles
    return "".join(_ROLE_LETTERS[r] for r in roles[: len(text.splitlines())])


# -- readm-a 1. quoted replies


def test_readm_quoted_reply_is_prose_and_its_quoted_output_is_valgrinds():
    """numactl issue 13 (round M 1734, lines 19-35): the maintainer's mail reply, ``On Fri,
    Oct 20, 2017 at 06:54:28PM +0000, Austen Lauria wrote:`` over the report quoted with
    ``> ``; its first quoted line, ``Hi, I have recently noticed that on P9 running Red Hat
    Enterprise Linux Server``, is cut by the mail's width. The quoted trace is valgrind's
    report (its ``==PID==`` lines: the catalogue of outputs not used, readm-b)."""
    text = _text("numactl-13-quoted-reply-valgrind.txt")
    lines = text.splitlines()
    assert line_class(lines[3]) == "prose"  # the attribution
    assert wrapped_words(lines[4].removeprefix("> "))
    assert _roles(text) == "." * 11 + "u" * 6


def test_readm_quoted_reply_second_inputs():
    """collectd issue 2914 (round F 1030, lines 24-31): a comment quoting the question it
    answers with ``> ``; and the evaluation set's quoted mail (tests/evaluation/07): ``On
    Mon, 23 Nov 2026 the customer wrote:`` over a quoted ``$ lscpu``, whose output is read."""
    assert _roles(_text("collectd-2914-quoted-reply.txt")) == "." * 8
    mail = (ROOT / "tests" / "evaluation" / "07-this-vm-quoted-email" / "mail.txt").read_text("utf-8")
    roles = _roles(mail)
    assert roles[:3] == ".>r"  # attribution, the quoted prompt, lscpu's first line read


def test_readm_a_line_of_words_is_not_prose_alone():
    """A line of words is a paragraph's only beside a line of prose; an output's line never."""
    assert not wrapped_words("node 0 cpus: 0 1 2 3 4 5 6 7")
    assert not wrapped_words("Red Hat Enterprise Linux Server release 7.4 (Maipo)")
    lone = "$ cat /etc/motd\nWelcome to the build host of the team in Berlin"
    assert "." not in _roles(lone)[1:]


# -- readm-a 2. unified diffs quoted in review threads


def test_readm_review_diff_with_task_list_is_the_posts_text():
    """pingcap/docs-cn PR 3354 (round M 1729, lines 9-51): a task list (``- [x] v4.0 (TiDB
    4.0 versions)``), then two review threads, each a locator line
    (``benchmark/benchmark-tidb-using-tpcc.md:85``) over a ``````diff`` fence quoting
    lscpu's ``NUMA node1 CPU(s):`` line, ``taskset`` and ``numactl`` command lines."""
    text = _text("docs-cn-3354-review-diff-task-list-zh.txt")
    lines = text.splitlines()
    assert [line_class(line) for line in lines[3:7]] == ["prose"] * 4  # - [x] / - [ ] items
    assert line_class(lines[14]) == "prose"  # the locator
    assert _roles(text) == "." * 43


def test_readm_review_diff_second_inputs():
    """pingcap/docs-cn PR 4808 (round K 1526, lines 1-56): hunk header ``@@ -229,6 +229,143
    @@``, ``+`` lines holding ```` ```bash ```` fences inside a ``````diff`` fence; avocado PR
    5513 (round A 225, lines 1-19): ``avocado/utils/cpu.py:502`` over a diff of Python and
    ``**FarooqAbdulla01** (author):``; tp-qemu PR 1794 (round A 215, lines 1-11): a hunk
    header and a configuration's context lines in a ```` ```diff ```` fence."""
    assert _roles(_text("docs-cn-4808-review-diff-thp-zh.txt")) == "." * 56
    assert _roles(_text("avocado-5513-review-diff-author.md")) == "." * 19
    assert _roles(_text("tp-qemu-1794-review-hunk.md")) == "." * 11


def test_readm_diff_lines_need_what_opens_a_diff():
    """Indented lines are diff lines only under a hunk header or a diff fence: an
    indented output under a label is not a change."""
    assert diff_line("@@ -41,6 +43,8 @@") and diff_line("+    :rtype : dictionary")
    assert not diff_opened(["Output:", "   node 0 cpus: 0 1"], 2)
    assert diff_opened(["@@ -41,6 +43,8 @@", "             target_nodes = 0 1"], 2)


# -- readm-a 3. forum and Q&A chrome, arrows, task lists


def test_readm_question_and_answer_chrome_is_prose():
    """Server Fault question 259190 (round M 1711, lines 20-37): ``share|improve this
    question`` and ``share|improve this answer`` under the posts."""
    text = _text("serverfault-259190-share-improve.txt")
    assert line_class("share|improve this question") == "prose"
    assert line_class("share|cite|improve this answer") == "prose"
    assert _roles(text) == "." * 18


def test_readm_forum_quote_attribution_is_prose():
    """Unraid forum topic 72946 (round M 1712, lines 19-26): ``6 hours ago, Warrentheo
    said:`` over the reply's text."""
    assert _roles(_text("unraid-72946-said.txt")) == "." * 8


def test_readm_arrow_alone_on_its_line_is_prose():
    """kohago's vmstat notes (round M 1706, lines 10-20): ``==>`` between the notes."""
    assert line_class("==>") == "prose"
    assert _roles(_text("kohago-vmstat-arrow-ja.txt")) == "." * 11


def test_readm_task_list_items_are_prose():
    """OpenNebula issue 1983 (round M 1735, lines 14-18): ``- [ ] Branch created``, ``- [ ]
    Testing - QA``; MISP issue 9459 (round F 1002, lines 40-44): ``- [X] I agree to follow
    this project's Code of Conduct``."""
    assert _roles(_text("opennebula-1983-task-list.txt")) == "." * 5
    assert _roles(_text("misp-9459-task-list.txt")) == "." * 5
    assert line_class("- [ ] 0x1f 0x20") == "data"


# -- readm-a 4. Markdown tables cut apart, Chinese page metadata and headings


def test_readm_table_rows_cut_apart_by_prose_rows_are_the_tables():
    """jishuzhan's iowait guide (round M 1714, lines 10-20): ``| CPU | Intel Xeon Silver 4314
    | 16 核 2.4GHz |`` and ``| 内存 | 128GB DDR4 ECC | 3200MT/s |`` between rows that read
    as prose, the rule row above; chinabin's top notes (round A 209, lines 52-72): rows
    ``|WCHAN| ...`` and ``|Flags| ...`` under the prose row ``|COMMAND| 命令名/命令行  |``."""
    assert _roles(_text("jishuzhan-table-rows-zh.txt")) == "." * 11
    assert _roles(_text("chinabin-top-table-rows-zh.md")) == "." * 21


def test_readm_table_rows_without_a_rule_row_stay_unread():
    """An SQL client's rows without their grid, no Markdown rule row in their run: not prose."""
    assert "?" in _roles("Result:\n| 1 | root | localhost |\n| 2 | app | 10.0.0.% |")


def test_readm_chinese_page_metadata_is_prose():
    """miaokee's MySQL post (round M 1716, lines 1-10): ``时间:2022-09-26 16:51:27``,
    ``作者:张昊``, ``本文来源:原创投稿``."""
    text = _text("miaokee-page-metadata-zh.txt")
    assert [line_class(text.splitlines()[i]) for i in (2, 4, 8)] == ["prose"] * 3
    assert _roles(text) == "." * 10


def test_readm_chinese_numbered_headings_are_prose():
    """mynw's iostat guide (round M 1702, lines 1-30): ``一、命令解析:iostat -x 1含义``,
    ``场景 1:高%util+ 高await``; laitimes's Oracle post (round H 1214, lines 15-21):
    ``一、 如何配置Hugepages``; jishuzhan (round M 1714, line 20): ``3. 初步诊断:观察指标``."""
    text = _text("mynw-numbered-headings-zh.txt")
    assert "?" not in _roles(text)
    assert line_class("场景 1:高%util+ 高await") == line_class("3. 初步诊断:观察指标") == "prose"
    assert _roles(_text("laitimes-numbered-heading-zh.txt")) == "." * 7
    assert line_class("节点 0:   16384 MB") == line_class("节点0:16384 MB") == "data"
