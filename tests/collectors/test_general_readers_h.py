"""General readers of the fix round after issue 26's blind round H, each on the
real output that needed it (sources in tests/fixtures/published/README.md,
``roundh/``): an Oracle DBA's notes (shell comments, SQL*Plus, getconf), an
``ipcs -m`` table, parameters quoted in an article."""

from __future__ import annotations

from collectors.archive import load
from collectors.transcript import code_fragment, detect_kind, match_prompt
from collectors.unused import unused_command, unused_output
from tests.conftest import FIXTURES

ROUND_H = FIXTURES / "published" / "roundh"


def _lines(name: str) -> list[str]:
    return (ROUND_H / name).read_text().split("\n")


def _host(name: str):
    return load(ROUND_H / name, split=False).host


# -- 1. an Oracle DBA's memory notes: comments, free, getconf, SQL*Plus


def test_a_run_of_shell_comments_is_what_the_post_quotes():
    """berkbenzer: ``##20gb physical memory`` ... ``############ SHMMAX ############``."""
    lines = _lines("berkbenzer-oracle-memory-conf-cut.sql")
    comments = [line for line in lines[1:13] if line.strip()]
    assert comments[0] == "########## MEMORY CONF. ORACLE ##########"
    assert code_fragment(comments)
    assert not code_fragment(["vm.swappiness = 60"])


def test_sqlplus_prompts_are_read_and_show_parameter_under_one():
    host = _host("berkbenzer-oracle-memory-conf-cut.sql")
    assert match_prompt("SQL> show parameter sga;") == ("sql", "show parameter sga;", None)
    (log,) = [s for s in host.services if s.kind == "oracle"]
    assert log.settings["sga_max_size"] == "5920M" and log.settings["sga_target"] == "5920M"
    assert log.lines["sga_target"] == 79
    assert host.reading.unrecognised_lines == 0
    assert ("getconf", 53) in [(u.what, u.start_line) for u in host.reading.unused]


def test_getconf_is_recognised_but_not_used():
    assert unused_command("getconf PAGE_SIZE") == "getconf"


# -- 2. ipcs -m


def test_ipcs_m_is_recognised_but_not_used():
    """laitimes: ``[root@OEL ~]# ipcs -m`` and its segments, cut at ``des``."""
    lines = _lines("laitimes-oracle-hugepages-df-ipcs-trad-zh.txt")
    start = lines.index("[root@OEL ~]# ipcs -m")
    assert unused_command("ipcs -m") == "ipcs"
    assert unused_output("\n".join(lines[start + 2 :])) == "ipcs"
    host = _host("laitimes-oracle-hugepages-df-ipcs-trad-zh.txt")
    assert [(u.what, u.start_line) for u in host.reading.unused] == [("ipcs", start + 2)]
    assert host.reading.unrecognised_lines == 0


# -- 3. parameters an article quotes


def test_a_chained_assignment_in_an_article_is_not_a_parameter_file():
    """51cto: ``sga_max_size=sga_target=1970MB`` (both set to one value) is a note."""
    lines = _lines("51cto-oracle-hugepages-params-prose-zh.txt")
    start = lines.index("sga_max_size=sga_target=1970MB")
    assert detect_kind("\n".join(lines[start : start + 3])) != "oracle_pfile"


# -- 4. tuned-adm's commands that print no profile


def test_tuned_adm_help_and_profile_are_recognised_but_not_used():
    """heiqu: ``tuned-adm help`` (its usage) and ``tuned-adm profile desktop-powersave``
    (``Reverting to saved sysctl settings: [ OK ]``); ``tuned-adm list`` stays read."""
    lines = _lines("heiqu-tuned-adm-help-list-profile-zh.txt")
    assert unused_command("tuned-adm profile desktop-powersave") == "tuned-adm"
    host = _host("heiqu-tuned-adm-help-list-profile-zh.txt")
    unused = [(u.what, lines[u.start_line - 2]) for u in host.reading.unused if u.what == "tuned-adm"]
    assert unused == [
        ("tuned-adm", "[root@SICS-MIGPC-DB ~]# tuned-adm help"),
        ("tuned-adm", "[root@SICS-MIGPC-DB tune-profiles]# tuned-adm profile desktop-powersave"),
    ]
    assert host.tuned.profiles == ["enterprise-storage-no-thp"]
