"""MySQL/MariaDB parsers: the live MariaDB server (127.0.0.1:3306), its error log,
seeds 000 and 003, and the version strings engineers paste."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from collectors.facts import ParseError
from collectors.parsers import detect, for_command, for_path
from collectors.parsers.mysql import (
    parse_mysql_error_log,
    parse_mysql_variables,
    parse_mysql_version,
    parse_result_tables,
    size_to_bytes,
)
from tests.conftest import SEEDS, port_open, service_unavailable


def mariadb(*args: str) -> str:
    """Run the MariaDB client against the local server (root, empty password)."""
    client = shutil.which("mariadb") or shutil.which("mysql")
    if client is None or not port_open("127.0.0.1", 3306):
        service_unavailable("MariaDB is not listening on 127.0.0.1:3306")
    proc = subprocess.run(
        [client, "-h127.0.0.1", "-uroot", *args], capture_output=True, text=True, timeout=60, check=False
    )
    if proc.returncode != 0:
        service_unavailable(f"MariaDB client failed: {proc.stderr.strip()}")
    return proc.stdout


def seed_lines(number: str) -> list[str]:
    seed = next(SEEDS.glob(f"{number}_*.txt"), None)
    if seed is None:
        service_unavailable(f"seed {number} missing")
    return seed.read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def live_version() -> str:
    return mariadb("-N", "-e", "SELECT VERSION()").strip()


@pytest.mark.parametrize(
    "client_args",
    [
        pytest.param(("-t", "-e", "SHOW GLOBAL VARIABLES"), id="table"),
        pytest.param(("-B", "-e", "SHOW GLOBAL VARIABLES"), id="batch-tab"),
        pytest.param(("-B", "-N", "-e", "SHOW GLOBAL VARIABLES"), id="batch-no-header"),
        pytest.param(("-e", "SHOW GLOBAL VARIABLES\\G"), id="vertical"),
    ],
)
def test_live_show_global_variables(client_args, live_version):
    out = mariadb(*client_args)
    facts = parse_mysql_variables(out)
    assert facts.kind == "mariadb"
    assert facts.version == live_version
    pool = mariadb("-N", "-e", "SELECT @@innodb_buffer_pool_size").strip()
    assert facts.variables["innodb_buffer_pool_size"] == pool
    count = int(mariadb("-N", "-e", "SELECT COUNT(*) FROM information_schema.GLOBAL_VARIABLES").strip())
    assert len(facts.variables) == count
    assert all(name == name.lower() for name in facts.variables)
    # evidence: the recorded line holds the variable
    assert "innodb_buffer_pool_size" in out.splitlines()[facts.lines["innodb_buffer_pool_size"] - 1]
    assert detect(out) is not None and detect(out).kind == "mysql_variables"


def test_live_numa_variables_absent_or_present(live_version):
    out = mariadb("-t", "-e", "SHOW GLOBAL VARIABLES LIKE '%numa%'")
    if not out.strip():
        # MariaDB has no innodb_numa_interleave since 10.2 (MDEV-18860): an empty result set
        with pytest.raises(ParseError):
            parse_mysql_variables(out)
    else:
        assert "innodb_numa_interleave" in parse_mysql_variables(out).variables


@pytest.mark.parametrize(
    "client_args",
    [("-t", "-e", "SELECT VERSION()"), ("-e", "SELECT VERSION()"), ("-N", "-e", "SELECT VERSION()")],
    ids=["table", "tab", "bare"],
)
def test_live_select_version(client_args, live_version):
    facts = parse_mysql_version(mariadb(*client_args))
    assert (facts.kind, facts.version) == ("mariadb", live_version)


def test_live_error_log():
    path = Path(mariadb("-N", "-e", "SELECT @@log_error").strip() or "/nonexistent")
    if not path.is_absolute():
        path = Path(mariadb("-N", "-e", "SELECT @@datadir").strip()) / path
    if not path.is_file():
        service_unavailable(f"MariaDB error log {path} is not a readable file (logging to the journal?)")
    text = path.read_text(encoding="utf-8", errors="replace")
    facts = parse_mysql_error_log(text)
    assert facts.kind == "mariadb"
    server = mariadb("-N", "-e", "SELECT VERSION()").strip()
    assert facts.version == server
    assert facts.log_counts["Note"] == sum(1 for ln in text.splitlines() if "[Note]" in ln)
    assert facts.log_counts["Warning"] == sum(1 for ln in text.splitlines() if "[Warning]" in ln)
    kinds = [e.kind for e in facts.events]
    assert "buffer_pool_ready" in kinds and "ready" in kinds
    # one version event per start-up
    assert kinds.count("version") == sum(1 for ln in text.splitlines() if "Starting MariaDB" in ln)
    init = [e for e in facts.events if e.kind == "buffer_pool_init"][-1]
    pool = int(mariadb("-N", "-e", "SELECT @@innodb_buffer_pool_size").strip())
    # the last start-up's size; it only differs if someone resized the pool online
    assert init.data["size_bytes"] == pool
    assert for_path(str(path).lstrip("/")).kind == "mysql_error_log"


def test_seed_000_server_version_line():
    line = next(ln for ln in seed_lines("000") if "server version:" in ln.lower())
    facts = parse_mysql_version(line)
    assert (facts.kind, facts.version) == ("mariadb", "10.4.14-MariaDB-log")


def test_seed_003_numa_interleave_startup():
    lines = seed_lines("003")
    start = next(i for i, ln in enumerate(lines) if "Initializing buffer pool" in ln)
    end = next(i for i in range(start, len(lines)) if "Completed initialization of buffer pool" in lines[i])
    block = "\n".join(lines[start : end + 1])
    facts = parse_mysql_error_log(block)
    init = next(e for e in facts.events if e.kind == "buffer_pool_init")
    assert init.data["size_text"] == "432G"
    assert init.data["size_bytes"] == 432 * 1024**3
    assert init.data["instances"] == 24
    assert init.data["chunk_size"] == "256M" and init.data["chunk_size_bytes"] == 256 * 1024**2
    policies = [e for e in facts.events if e.kind == "numa_policy"]
    assert [e.data["policy"] for e in policies] == ["MPOL_INTERLEAVE", "MPOL_DEFAULT"]
    assert policies[1].seconds - policies[0].seconds == 440
    ready = next(e for e in facts.events if e.kind == "buffer_pool_ready")
    assert ready.seconds - init.seconds == 440
    assert [e.line for e in facts.events] == [1, 2, 3, 4]
    assert detect(block).kind == "mysql_error_log"


def test_mysql57_and_old_style_log_lines():
    text = (
        "2019-01-01T00:00:00.000000Z 0 [Note] InnoDB: Initializing buffer pool, total size = 128M, "
        "instances = 1, chunk size = 128M\n"
        "2019-01-01T00:00:01.500000Z 0 [ERROR] InnoDB: Unable to lock ./ibdata1 error: 11\n"
        "190101 12:00:00 [Warning] Changed limits\n"
        "2022-07-26 11:38:32 0 [Note] InnoDB: Completed initialization of buffer pool\n"
        "2023-01-01T00:00:00.000000Z 0 [System] [MY-010116] [Server] /usr/sbin/mysqld (mysqld 8.0.32) "
        "starting as process 1\n"
    )
    facts = parse_mysql_error_log(text)
    assert facts.log_counts == {"Note": 2, "Warning": 1, "ERROR": 1, "System": 1}
    assert [e.kind for e in facts.events] == ["buffer_pool_init", "error", "buffer_pool_ready", "version"]
    assert facts.events[1].seconds - facts.events[0].seconds == pytest.approx(1.5)
    assert facts.version == "8.0.32" and facts.kind == "mysql"


def test_version_per_start_up_and_the_latest_wins():
    text = (
        "2024-01-01  1:00:00 0 [Note] Starting MariaDB 10.4.14-MariaDB-log source revision x as process 1\n"
        "2024-01-01  1:00:01 0 [Note] /usr/sbin/mysqld: ready for connections.\n"
        "Version: '10.4.14-MariaDB-log'  socket: '/run/mysqld/mysqld.sock'  port: 3306  MariaDB Server\n"
        "2024-01-02  1:00:00 0 [Note] /usr/sbin/mysqld: Shutdown complete\n"
        "2024-01-02  1:05:00 0 [Note] Starting MariaDB 10.4.14-MariaDB-log source revision x as process 2\n"
        "2024-02-01  1:00:00 0 [Note] Starting MariaDB 10.6.18-MariaDB source revision y as process 3\n"
    )
    facts = parse_mysql_error_log(text)
    versions = [(e.data["version"], e.line) for e in facts.events if e.kind == "version"]
    assert versions == [("10.4.14-MariaDB-log", 1), ("10.4.14-MariaDB-log", 5), ("10.6.18-MariaDB", 6)]
    assert (facts.kind, facts.version, facts.lines["version"]) == ("mariadb", "10.6.18-MariaDB", 6)


def test_journal_lines_of_other_programs_are_ignored():
    text = (
        "Jul  7 12:00:40 db1 systemd[1]: Starting MySQL Server...\n"
        "Jul  7 12:00:44 db1 mysqld[95109]: 2022-07-07T12:00:44.1Z 0 [Note] InnoDB: Setting NUMA "
        "memory policy to MPOL_INTERLEAVE\n"
    )
    facts = parse_mysql_error_log(text)
    assert [e.kind for e in facts.events] == ["numa_policy"]
    assert facts.log_counts["Note"] == 1


@pytest.mark.parametrize(
    ("text", "kind", "version"),
    [
        ("Server version: 10.4.14-MariaDB-log MariaDB Server", "mariadb", "10.4.14-MariaDB-log"),
        (
            "mysqld  Ver 5.7.22-22 for Linux on x86_64 (Percona Server (GPL), Release 22, Revision f62d93c)",
            "percona",
            "5.7.22-22",
        ),
        ("Server version: 8.0.36 MySQL Community Server - GPL", "mysql", "8.0.36"),
        ("+-----------+\n| VERSION() |\n+-----------+\n| 5.7.22-22 |\n+-----------+\n", "mysql", "5.7.22-22"),
    ],
)
def test_version_strings(text, kind, version):
    facts = parse_mysql_version(text)
    assert (facts.kind, facts.version) == (kind, version)


def test_result_table_with_pipe_in_value_and_short_border():
    text = "+-----\n| Variable_name | Value |\n+---------------+-------+\n| a | x | y |\n+---+\n"
    (table,) = parse_result_tables(text)
    assert table.columns == ["variable_name", "value"]
    assert table.rows == [["a", "x | y"]]


def test_size_to_bytes():
    assert size_to_bytes("432G") == 432 * 1024**3
    assert size_to_bytes("128.0M") == 128 * 1024**2
    assert size_to_bytes("8388608m") == 8388608 * 1024**2
    assert size_to_bytes("lots") is None


def test_commands_route_to_mysql_parsers():
    assert for_command("SHOW GLOBAL VARIABLES LIKE '%numa%';").kind == "mysql_variables"
    assert for_command("mysqladmin -uroot variables").kind == "mysql_variables"
    assert for_command("select version();").kind == "mysql_version"
    assert for_command("tail -n 200 /var/log/mysql/error.log").kind == "mysql_error_log"
    assert for_command("grep -i numa /var/log/mysqld.log").kind == "mysql_error_log"
    assert for_command("cat /data/mysql/db01.err").kind == "mysql_error_log"
    # a configuration file is not a log
    spec = for_command("cat /etc/mysql/my.cnf")
    assert spec is None or spec.kind != "mysql_error_log"


@pytest.mark.parametrize(
    ("parser", "text"),
    [
        (parse_mysql_variables, ""),
        (parse_mysql_variables, "这是一段说明文字，没有任何变量。"),
        (parse_mysql_variables, "+---+\n| a |\n+---+\n| 1 |\n+---+\n"),
        (parse_mysql_version, "no version here"),
        (parse_mysql_error_log, "just some text\nwithout log lines\n"),
        (parse_mysql_error_log, "2019-13-45T99:99:99Z 0 [Note] impossible timestamp"),
    ],
)
def test_unusable_text_raises_parse_error(parser, text):
    with pytest.raises(ParseError):
        parser(text)


def test_empty_result_set_is_an_answer_not_an_error():
    # SHOW GLOBAL VARIABLES LIKE '%numa%' on MariaDB 10.4 (seed 000): no such variable.
    facts = parse_mysql_variables("Empty set (0.001 sec)\n")
    assert facts.variables == {}
    assert facts.lines["empty_set"] == 1
