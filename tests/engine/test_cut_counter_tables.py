"""A /proc/softirqs or /proc/interrupts paste whose rows are cut (fewer
counts than the header's CPUs, a truncated last row, lines a terminal wrapped)
is reported as cut, and the rules that judge the table go to not_checked with
the reason instead of deciding quietly (issue 25: "cut structures are reported
as cut"). Real outputs: this machine's files, the shared corpus and
irqbalance issue 122's rows (tests/fixtures/published/README.md), cut the way
a terminal (hard wrap at 80 columns) or a forum post (text ends mid-row) cuts them."""

from __future__ import annotations

from collectors import archive
from collectors.facts import ParseError, SnapshotFacts
from collectors.parsers.interrupts import parse_interrupts, parse_interrupts_grep
from collectors.parsers.softirqs import parse_softirqs
from engine.run import analyze
from tests.conftest import CORPUS, FIXTURES

THIS_VM = FIXTURES / "published" / "this-vm-guest"
IRQBALANCE = FIXTURES / "published" / "host" / "irqbalance-122-grep-eth-interrupts.txt"


def terminal(text: str, width: int = 80) -> str:
    """``text`` as copied from a terminal of ``width`` columns: long lines broken."""
    out = []
    for line in text.splitlines():
        while len(line) > width:
            out.append(line[:width])
            line = line[width:]
        out.append(line)
    return "\n".join(out) + "\n"


def cut_mid_row(text: str, keep_lines: int, keep_chars: int) -> str:
    """A forum post that ends inside a row: the first ``keep_lines`` lines, then
    ``keep_chars`` characters of the next."""
    lines = text.splitlines()
    return "\n".join([*lines[:keep_lines], lines[keep_lines][:keep_chars]])


def _not_checked(text: str, rule: str):
    (host,) = archive.load(text.encode(), name="ticket.txt").hosts
    result = analyze(SnapshotFacts(hosts=[host]))
    assert rule not in result.checked
    return host, [n for n in result.not_checked if n.rule == rule]


def test_this_machines_whole_tables_are_not_cut():
    assert parse_softirqs((THIS_VM / "proc-softirqs.txt").read_text()).cut is None
    assert parse_interrupts((THIS_VM / "proc-interrupts.txt").read_text()).cut is None
    # ERR and MIS carry one total: never a cut row
    corpus = (CORPUS / "interrupts" / "insights-core_test_interrupts_INT_MULTI.txt").read_text()
    assert parse_interrupts(corpus).cut is None


def test_softirqs_ending_mid_row_is_cut_and_the_hotspot_rule_not_checked():
    text = (THIS_VM / "proc-softirqs.txt").read_text()
    cut = cut_mid_row(text, 10, 22)  # "         RCU:     102639" of two CPUs
    parsed = parse_softirqs(cut)
    assert parsed.cut is not None and parsed.cut.rows == ["RCU"]
    assert "RCU" not in parsed.rows and len(parsed.rows) == 9
    _host, (entry,) = _not_checked("# cat /proc/softirqs\n" + cut, "net.softirq_hotspot")
    assert "/proc/softirqs table is cut" in entry.reason and "row RCU" in entry.reason
    assert "被截断" in entry.reason_zh


def test_softirqs_stopping_before_rcu_is_cut():
    text = (CORPUS / "softirqs" / "node_exporter_proc_softirqs.txt").read_text()
    head = "\n".join(text.splitlines()[:6]) + "\n"  # HI .. BLOCK: a post cut at a row's end
    parsed = parse_softirqs(head)
    assert parsed.cut is not None and parsed.cut.truncated_after == "BLOCK"
    _host, (entry,) = _not_checked("# cat /proc/softirqs\n" + head, "net.softirq_hotspot")
    assert "stops after row BLOCK" in entry.reason


def test_interrupts_wrapped_by_an_80_column_terminal_is_cut():
    text = (CORPUS / "interrupts" / "insights-core_test_interrupts_INT_MULTI.txt").read_text()
    wrapped = terminal(text)
    parsed = parse_interrupts(wrapped)
    assert parsed.cpus == [f"CPU{i}" for i in range(8)]  # the header's wrapped CPU7 is joined back
    assert parsed.cut is not None and parsed.cut.rows and parsed.cut.wrapped
    # no row keeps counts for fewer CPUs than the header names
    assert all(len(counts) == 8 for name, counts in parsed.rows.items() if name not in {"ERR", "MIS"})
    _host, (entry,) = _not_checked("# cat /proc/interrupts\n" + wrapped, "net.irq_single_cpu")
    assert "/proc/interrupts table is cut" in entry.reason


def test_a_wrapped_grep_of_interrupts_is_not_judged():
    # irqbalance issue 122: eth0's queues on CPU0 of 32 (the rule fires on the whole rows)
    text = IRQBALANCE.read_text()
    wrapped = terminal(text)
    parsed = parse_interrupts_grep("\n".join(wrapped.splitlines()[1:]))
    assert parsed.cut is not None and parsed.cut.wrapped
    _host, (entry,) = _not_checked(wrapped, "net.irq_single_cpu")
    assert "wrapped" in entry.reason
    # the whole paste still fires
    (whole,) = archive.load(text.encode(), name="ticket.txt").hosts
    assert "net.irq_single_cpu" in {f.rule for f in analyze(SnapshotFacts(hosts=[whole])).findings}


def test_this_machines_interrupts_cut_mid_row_never_crash():
    text = (THIS_VM / "proc-interrupts.txt").read_text()
    for keep in range(1, len(text.splitlines()) - 1):
        for chars in (3, 12, 20, 40):
            cut = cut_mid_row(text, keep, chars)
            try:
                parsed = parse_interrupts(cut)
            except ParseError:
                continue  # nothing but a header and a stub: unreadable, said so
            assert all(len(c) == 2 for n, c in parsed.rows.items() if n not in {"ERR", "MIS"})
