"""MySQL/MariaDB parsers: the live MariaDB server (127.0.0.1:3306), its error log,
seeds 000 and 003, and the version strings engineers paste."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from collectors.facts import ParseError
from collectors.parsers.mysql import (
    parse_mysql_config,
    parse_mysql_error_log,
    parse_mysql_variables,
    parse_mysql_version,
    parse_result_tables,
)
from collectors.sizes import size_bytes
from tests.collectors.parsers.lookup import detect, for_command, for_path
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


def test_size_bytes():
    assert size_bytes("432G") == 432 * 1024**3
    assert size_bytes("128.0M") == 128 * 1024**2
    assert size_bytes("8388608m") == 8388608 * 1024**2
    assert size_bytes("lots") is None


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


# ------------------------------------------------ issue 11: pastes as engineers make them


def server_count() -> int:
    return int(mariadb("-N", "-e", "SELECT COUNT(*) FROM information_schema.GLOBAL_VARIABLES").strip())


def mariadb_admin(*args: str) -> str:
    client = shutil.which("mariadb-admin") or shutil.which("mysqladmin")
    if client is None or not port_open("127.0.0.1", 3306):
        service_unavailable("mariadb-admin missing or MariaDB not listening on 127.0.0.1:3306")
    proc = subprocess.run(
        [client, "-h127.0.0.1", "-uroot", *args], capture_output=True, text=True, timeout=60, check=False
    )
    if proc.returncode != 0:
        service_unavailable(f"mariadb-admin failed: {proc.stderr.strip()}")
    return proc.stdout


def pasted(command: str, output: str):
    """``output`` pasted after a shell prompt, read as an upload."""
    from collectors.archive import load

    text = f"[root@db01 ~]# {command}\n{output.rstrip(chr(10))}\n[root@db01 ~]# uptime\n"
    return load(text.encode(), name="paste.txt", split=False).host


LIVE_FORMS = {
    "tab": ("mysql -e 'SHOW GLOBAL VARIABLES'", lambda: mariadb("-e", "SHOW GLOBAL VARIABLES")),
    "vertical": ("mysql -E -e 'SHOW GLOBAL VARIABLES'", lambda: mariadb("-E", "-e", "SHOW GLOBAL VARIABLES")),
    "vertical-G": ("mysql -e 'SHOW GLOBAL VARIABLES\\G'", lambda: mariadb("-e", "SHOW GLOBAL VARIABLES\\G")),
    "box": ("mysql -t -e 'SHOW GLOBAL VARIABLES'", lambda: mariadb("-t", "-e", "SHOW GLOBAL VARIABLES")),
    "mysqladmin": ("mysqladmin variables", lambda: mariadb_admin("variables")),
    "no-header": (
        "sudo mysql -N -e 'show global variables'",
        lambda: mariadb("-N", "-e", "SHOW GLOBAL VARIABLES"),
    ),
}


@pytest.mark.parametrize("form", LIVE_FORMS)
def test_live_variables_pasted_after_a_prompt_keep_every_variable(form):
    command, produce = LIVE_FORMS[form]
    output = produce()
    host = pasted(command, output)
    assert host.database is not None, host.errors
    assert len(host.database.variables) == server_count()
    assert host.database.variables["default_regex_flags"] == ""  # empty values are kept
    assert host.database.variable_sources["innodb_buffer_pool_size"] == "server"
    assert not [e for e in host.errors if "variables" in e.message]
    # evidence points at the pasted line (line 1 is the prompt)
    line = host.database.lines["innodb_buffer_pool_size"]
    assert "innodb_buffer_pool_size" in f"[root@db01 ~]# {command}\n{output}".splitlines()[line - 1]


@pytest.mark.parametrize(
    "mangle",
    [
        pytest.param(lambda t: t.replace("\t", "    "), id="tabs-to-spaces"),
        pytest.param(lambda t: "\n".join(ln.rstrip() for ln in t.splitlines()), id="trailing-space-trimmed"),
        pytest.param(
            lambda t: "\n".join(ln.replace("\t", "  ").rstrip() for ln in t.splitlines()), id="both"
        ),
    ],
)
def test_live_tab_output_mangled_keeps_every_variable(mangle):
    output = mangle(mariadb("-e", "SHOW GLOBAL VARIABLES"))
    facts = parse_mysql_variables(output)
    assert len(facts.variables) == server_count()
    assert facts.errors == []
    host = pasted("mysql -e 'SHOW GLOBAL VARIABLES'", output)
    assert len(host.database.variables) == server_count()


def test_live_no_header_spaces_is_detected_without_a_prompt():
    output = mariadb("-N", "-e", "SHOW GLOBAL VARIABLES").replace("\t", "   ")
    assert detect(output).kind == "mysql_variables"
    assert len(parse_mysql_variables(output).variables) == server_count()


def test_live_show_variables_like_box_table():
    output = mariadb("-t", "-e", "SHOW VARIABLES LIKE 'innodb_buffer_pool%'")
    host = pasted("mysql -t -e \"SHOW VARIABLES LIKE 'innodb_buffer_pool%'\"", output)
    expected = int(
        mariadb(
            "-N",
            "-e",
            "SELECT COUNT(*) FROM information_schema.SESSION_VARIABLES "
            "WHERE VARIABLE_NAME LIKE 'INNODB_BUFFER_POOL%'",
        ).strip()
    )
    assert len(host.database.variables) == expected
    assert (
        host.database.variables["innodb_buffer_pool_size"]
        == mariadb("-N", "-e", "SELECT @@innodb_buffer_pool_size").strip()
    )


def test_mysql80_list_with_empty_values_keeps_every_variable(corpus):
    # Percona Server 8.0.32 SHOW GLOBAL VARIABLES (percona-toolkit sample), with
    # admin_address<TAB> and 57 other empty values, then 19 pt-summary lines
    text = (corpus / "mysql" / "percona-toolkit_pt-mysql-summary_temp_enc008_mysql-variables.txt").read_text()
    names = [ln.split("\t")[0] for ln in text.splitlines() if "\t" in ln]
    facts = parse_mysql_variables(text)
    assert len(facts.variables) == len(names) == 689
    assert facts.variables["admin_address"] == "" and facts.variables["admin_port"] == "33062"
    (error,) = facts.errors
    assert error.message.startswith("variables: 19 lines not in NAME<TAB>VALUE form")
    assert text.splitlines()[error.line - 1].startswith("internal::nice_of_")
    host = pasted("mysql -e 'SHOW GLOBAL VARIABLES'", text)
    assert len(host.database.variables) == 689
    assert any("19 lines not in NAME<TAB>VALUE form" in e.message for e in host.errors)
    # the same list with its tabs turned into spaces
    spaced = parse_mysql_variables(text.replace("\t", "    "))
    assert len(spaced.variables) == 689


def test_partial_parse_keeps_what_is_complete_and_reports_the_rest():
    out = mariadb("-e", "SHOW GLOBAL VARIABLES")
    lines = out.splitlines()
    garbled = "\n".join([*lines[:50], "this line is not a variable", "nor: this one", *lines[50:]])
    facts = parse_mysql_variables(garbled)
    assert len(facts.variables) == server_count()
    (error,) = facts.errors
    assert "2 lines not in NAME<TAB>VALUE form" in error.message
    assert error.line == 51


# ------------------------------------------------------------------ option files


MY_CNF = Path("/etc/mysql/my.cnf")


def option_files(path: Path) -> list[Path]:
    """``path`` and the option files its ``!include`` and ``!includedir``
    lines name, as the server reads them (a stock Debian my.cnf holds only
    ``!includedir /etc/mysql/conf.d/`` and ``/etc/mysql/mariadb.conf.d/``;
    this machine's is one flat file)."""
    files = [path]
    for line in path.read_text().splitlines():
        directive, _, target = line.strip().partition(" ")
        if directive == "!includedir" and Path(target.strip()).is_dir():
            files += sorted(p for p in Path(target.strip()).glob("*.cnf") if p.is_file())
        elif directive == "!include" and Path(target.strip()).is_file():
            files.append(Path(target.strip()))
    return files


def server_options(path: Path, tmp_path: Path) -> str:
    """What ``my_print_defaults`` prints of the server's groups of ``path``
    alone (its include lines dropped: each file is compared on its own)."""
    if shutil.which("my_print_defaults") is None:
        service_unavailable("my_print_defaults missing (apt-get install mariadb-client)")
    own = tmp_path / path.name
    own.write_text(
        "\n".join(ln for ln in path.read_text().splitlines() if not ln.strip().startswith("!include"))
    )
    groups = ("mysqld", "server", "mariadb", "client-server")
    argv = ["my_print_defaults", f"--defaults-file={own}", *groups]
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False).stdout


def test_live_option_file_is_read(tmp_path):
    if not MY_CNF.is_file():
        service_unavailable("/etc/mysql/my.cnf missing (apt-get install mariadb-server)")
    from collectors.parsers.mysql import parse_mysql_config

    compared = 0
    for path in option_files(MY_CNF):
        text = path.read_text()
        printed = server_options(path, tmp_path)
        # my_print_defaults prints exactly the server's options of the file
        expected = {
            ln[2:].split("=", 1)[0].replace("-", "_") for ln in printed.splitlines() if ln.startswith("--")
        }
        if not expected:
            continue  # a file of the clients' options only
        facts = parse_mysql_config(text)
        assert set(facts.variables) == expected, path
        assert set(facts.variable_sources.values()) == {"config"}
        if any(ln.strip() == "skip-name-resolve" for ln in text.splitlines()):
            assert facts.variables["skip_name_resolve"] == "ON"  # a bare flag
        assert facts.errors == []
        assert detect(text).kind == "mysql_config"
        # my_print_defaults output itself
        assert set(parse_mysql_config(printed).variables) == expected
        compared += 1
    if not compared:
        service_unavailable(f"no server options in {MY_CNF} or the files it includes")


def test_live_server_values_beat_configured_ones():
    if not MY_CNF.is_file():
        service_unavailable("/etc/mysql/my.cnf missing")
    files = option_files(MY_CNF)
    cnf = "\n".join(p.read_text().rstrip("\n") for p in files)
    cat = "cat " + " ".join(str(p) for p in files)
    show = mariadb("-e", "SHOW GLOBAL VARIABLES").rstrip("\n")
    server = {line.split("\t", 1)[0] for line in show.splitlines()[1:]}
    for first, second in (
        (f"{cat}\n{cnf}", f"mysql -e 'SHOW GLOBAL VARIABLES'\n{show}"),
        (f"mysql -e 'SHOW GLOBAL VARIABLES'\n{show}", f"{cat}\n{cnf}"),
    ):
        from collectors.archive import load

        host = load(
            f"[root@db01 ~]# {first}\n[root@db01 ~]# {second}\n".encode(), name="p.txt", split=False
        ).host
        db = host.database
        both = set(db.config) & server
        assert both, "no option is both configured and a server variable"
        for name in both:  # e.g. port: the server's value wins, the configured one is kept
            assert db.variable_sources[name] == "server", name
            assert db.config[name]
        for name in set(db.config) - server:  # e.g. user: an option, not a server variable
            assert db.variable_sources[name] == "config", name
        assert len([k for k, v in db.variable_sources.items() if v == "server"]) == server_count()
        assert db.source.artifact.endswith("SHOW GLOBAL VARIABLES'")


def test_option_file_forms():
    from collectors.parsers.mysql import parse_mysql_config

    # the forms MySQL's manual documents for option files (sections, loose-,
    # dashes, bare flags, quotes, comments, includes, version groups)
    text = (
        "[client]\nport = 3307\n\n"
        "[mysqld]\n# comment\n; comment\n"
        "innodb-buffer-pool-size = 16G\nloose-innodb_numa_interleave = 1\nlarge-pages\n"
        "init_connect = 'SET NAMES utf8mb4'\nmax_connections=500 # inline comment\n"
        "!includedir /etc/my.cnf.d/\n"
        "[mysqld_safe]\nnuma-interleave\n"
        "[mariadb-10.11]\ninnodb_buffer_pool_size = 32G\n"
        "[mysqld]\nthis is not an option\n"
    )
    facts = parse_mysql_config(text)
    assert facts.variables == {
        "innodb_buffer_pool_size": str(32 * 1024**3),  # the later group wins
        "innodb_numa_interleave": "1",
        "large_pages": "ON",
        "init_connect": "SET NAMES utf8mb4",
        "max_connections": "500",
    }
    assert facts.config["innodb_buffer_pool_size"] == "32G"
    assert facts.lines["large_pages"] == 9
    (error,) = facts.errors
    assert "1 line not in NAME = VALUE form" in error.message and error.line == 18
    assert parse_mysql_config("[client]\nuser = x\n") == []
    with pytest.raises(ParseError):
        parse_mysql_config("no groups here\n")


def test_option_file_commands_and_paths():
    for command in (
        "cat /etc/my.cnf",
        "sudo cat /etc/my.cnf.d/server.cnf",
        "cat /etc/mysql/mariadb.conf.d/50-server.cnf",
        "grep -v '^#' /etc/mysql/my.cnf",
        "my_print_defaults mysqld",
        "mysqld --print-defaults",
    ):
        assert for_command(command).kind == "mysql_config", command
    for path in ("etc/my.cnf", "etc/my.cnf.d/server.cnf", "etc/mysql/conf.d/mysqld.cnf"):
        assert for_path(path).kind == "mysql_config", path


@pytest.mark.parametrize(
    "make",
    [
        lambda n: "a" + " " * n + "x\n" + "b\t1\n",
        lambda n: "*************************** 1. row ***************************\n" + " " * n + "\n",
        lambda n: "Variable_name\tValue\n" + "x\n" * n,
        lambda n: "[mysqld]\n" + "a = " + " " * n + "#x\n" + "b\n" * (n // 10),
        lambda n: "innodb_a\t1\n" * (n // 10),
    ],
    ids=["space-run", "vertical-spaces", "many-bad-lines", "cnf-spaces", "many-variables"],
)
def test_hostile_variables_cost_linear_time(make):
    from collectors.parsers.mysql import parse_mysql_config
    from tests.collectors.parsers.scaling import assert_linear

    assert_linear(parse_mysql_variables, make)
    assert_linear(parse_mysql_config, make)


def test_published_option_file():
    from collectors.archive import load
    from collectors.parsers.mysql import parse_mysql_config
    from tests.conftest import FIXTURES

    text = (FIXTURES / "mysql" / "percona-toolkit_my.cnf-001.txt").read_text()
    facts = parse_mysql_config(text)
    # only [mysqld]: [mysql.server], [mysqld_safe], [mysql], [xtrabackup] are other programs'
    assert sorted(facts.variables) == sorted(
        [
            "datadir", "socket", "old_passwords", "ssl_key", "ssl_cert", "ssl_ca",
            "innodb_buffer_pool_size", "innodb_flush_method", "innodb_log_file_size",
            "innodb_log_buffer_size", "innodb_flush_log_at_trx_commit", "innodb_file_per_table",
            "ssl", "server_id", "log_bin",
        ]
    )  # fmt: skip
    assert facts.variables["innodb_buffer_pool_size"] == str(16 * 1024**2)
    assert facts.config["innodb_log_file_size"] == "64M"
    assert facts.variables["datadir"] == "/mnt/data/mysql"  # the commented-out line is not read
    assert facts.errors == []
    assert detect(text).kind == "mysql_config"
    uploaded = load(text.encode(), name="my.cnf", split=False).host
    assert len(uploaded.database.variables) == 15
    assert uploaded.database.variable_sources["server_id"] == "config"


def test_published_option_file_after_a_prompt():
    from collectors.archive import load
    from tests.conftest import FIXTURES

    text = (FIXTURES / "mysql" / "percona-toolkit_my.cnf-001.txt").read_text()
    host = load(f"[root@db01 ~]# cat /etc/my.cnf\n{text}".encode(), name="paste.txt", split=False).host
    assert len(host.database.variables) == 15
    assert text.splitlines()[host.database.lines["log_bin"] - 2] == "log-bin=sl1-bin"


# percona/percona-server#483 (tplavcic, 2016-05-05): mycli rules the header off with
# "|---+---|"; the stored excerpt is cut after tls_version, on a lone "|"
PERCONA_MYCLI = """+-------------------------+---------------------------------------------------+
| Variable_name           | Value                                             |
|-------------------------+---------------------------------------------------|
| innodb_version          | 5.7.11-4                                          |
| protocol_version        | 10                                                |
| slave_type_conversions  |                                                   |
| tls_version             | TLSv1,TLSv1.1,TLSv1.2                             |
|
"""


def test_mycli_header_rule_is_a_border_not_a_variable():
    facts = parse_mysql_variables(PERCONA_MYCLI)
    assert facts.variables == {
        "innodb_version": "5.7.11-4",
        "protocol_version": "10",
        "slave_type_conversions": "",
        "tls_version": "TLSv1,TLSv1.1,TLSv1.2",
    }
    # only the cut last line is reported, as a row cut mid-paste
    assert [(e.line, "cut mid-paste" in e.message) for e in facts.errors] == [(8, True)]


# Cacti/Cacti#2831 (evaluation snapshot 78): SHOW GLOBAL VARIABLES LIKE 'innodb%'
# as the stored excerpt shows it, cut in its eleventh row
CACTI_CUT = """+------------------------------------------+------------------------+
| Variable_name                            | Value                  |
+------------------------------------------+------------------------+
| innodb_adaptive_flushing                 | ON                     |
| innodb_adaptive_flushing_lwm             | 10                     |
| innodb_api_trx_level                     | 0                      |
| innodb_autoextend_increment              |
"""


def test_a_variables_row_cut_mid_paste_is_reported_not_read_as_empty():
    facts = parse_mysql_variables(CACTI_CUT)
    assert facts.variables == {
        "innodb_adaptive_flushing": "ON",
        "innodb_adaptive_flushing_lwm": "10",
        "innodb_api_trx_level": "0",
    }
    (error,) = facts.errors
    assert (
        error.line == 7
        and "cut mid-paste" in error.message
        and "innodb_autoextend_increment" in error.message
    )


def test_an_empty_value_in_a_complete_row_is_a_value():
    text = CACTI_CUT.replace(
        "| innodb_autoextend_increment              |\n",
        "| innodb_ft_aux_table                      |                        |\n",
    )
    facts = parse_mysql_variables(text)
    assert facts.variables["innodb_ft_aux_table"] == "" and facts.errors == []


# DataDog/dd-agent#1471 (evaluation snapshot 111): SHOW GLOBAL STATUS in the MariaDB
# client, the first rows of the stored excerpt. The table has SHOW VARIABLES' header.
DATADOG_STATUS = """+-----------------------------------------+-------------+
| Variable_name                           | Value       |
+-----------------------------------------+-------------+
| Innodb_available_undo_logs              | 128         |
| Innodb_background_log_sync              | 245         |
| Innodb_buffer_pool_bytes_data           | 2523136     |
| Innodb_buffer_pool_dump_status          | not started |
| Innodb_buffer_pool_pages_total          | 16383       |
+-----------------------------------------+-------------+
"""

# bitnami/bitnami-docker-mariadb#205 (evaluation snapshot 104): SHOW GLOBAL STATUS
# rows, tab-separated and without a header, the first rows of the stored excerpt
BITNAMI_STATUS_TSV = (
    "Innodb_buffer_pool_dump_status\t\n"
    "Innodb_buffer_pool_load_status\tBuffer pool(s) load completed at 191119 20:20:57\n"
    "Innodb_buffer_pool_resize_status\tCompleted resizing buffer pool at 200101  7:28:30.\n"
    "Innodb_buffer_pool_load_incomplete\tOFF\n"
    "Innodb_buffer_pool_pages_data\t2611438\n"
    "Innodb_buffer_pool_bytes_data\t42785800192\n"
    "Innodb_buffer_pool_pages_dirty\t0\n"
    "Innodb_buffer_pool_bytes_dirty\t0\n"
    "Innodb_buffer_pool_pages_flushed\t16451218\n"
    "Innodb_buffer_pool_pages_free\t8192\n"
    "Innodb_buffer_pool_pages_misc\t1810\n"
    "Innodb_buffer_pool_pages_total\t2621440\n"
    "Innodb_page_size\t16384\n"
)


def test_status_counters_are_status_not_variables():
    facts = parse_mysql_variables(DATADOG_STATUS)
    assert facts.variables == {}
    assert facts.status["innodb_buffer_pool_pages_total"] == "16383"
    assert facts.status["innodb_buffer_pool_dump_status"] == "not started"
    assert facts.lines["status.innodb_available_undo_logs"] == 4


def test_headerless_tab_separated_status_is_recognised_and_read():
    spec = detect(BITNAMI_STATUS_TSV)
    assert spec is not None and spec.kind == "mysql_variables"
    facts = parse_mysql_variables(BITNAMI_STATUS_TSV)
    assert facts.variables == {} and facts.errors == []
    assert facts.status["innodb_buffer_pool_pages_total"] == "2621440"
    assert facts.status["innodb_buffer_pool_dump_status"] == ""


@pytest.mark.parametrize(
    "command",
    [
        "SHOW /*!50002 GLOBAL */ STATUS like 'Innodb%';",
        "show global status;",
        "SHOW /*!50000 GLOBAL */ VARIABLES",
    ],
)
def test_show_status_and_commented_show_variables_are_recognised(command):
    spec = for_command(command)
    assert spec is not None and spec.kind == "mysql_variables"


@pytest.mark.parametrize(
    "command", ["SHOW ENGINE INNODB STATUS\\G", "show slave status;", "SHOW MASTER STATUS"]
)
def test_other_status_statements_are_not_variables(command):
    spec = for_command(command)
    assert spec is None or spec.kind != "mysql_variables"


# major/MySQLTuner-perl#520 (evaluation snapshot 115): "The innoDB section of my.cnf",
# pasted without its [mysqld] line
MYCNF_FRAGMENT = """innodb_log_file_size    = 12G
innodb_buffer_pool_size = 48G
innodb_log_buffer_size  = 8M
innodb_file_per_table   = 1
innodb_open_files       = 400
innodb_io_capacity      = 400
innodb_flush_method     = O_DIRECT
"""


def test_server_options_without_their_group_line_are_the_servers():
    spec = detect(MYCNF_FRAGMENT)
    assert spec is not None and spec.kind == "mysql_config"
    facts = parse_mysql_config(MYCNF_FRAGMENT)
    assert facts.variables["innodb_buffer_pool_size"] == str(48 * 1024**3)
    assert facts.config["innodb_buffer_pool_size"] == "48G"
    assert facts.variable_sources["innodb_buffer_pool_size"] == "config"
    assert facts.lines["innodb_buffer_pool_size"] == 2


def test_other_key_value_files_are_not_server_options():
    # /usr/share/postgresql/15/postgresql.conf.sample (Debian 12), its settings uncommented
    postgres = "max_connections = 100\nshared_buffers = 128MB\nwork_mem = 4MB\nmaintenance_work_mem = 64MB\n"
    # sysctl.conf names hold dots
    sysctl = "vm.swappiness = 1\nvm.zone_reclaim_mode = 0\nkernel.numa_balancing = 0\n"
    for text in (postgres, sysctl):
        spec = detect(text)
        assert spec is None or spec.kind != "mysql_config", text
        with pytest.raises(ParseError):
            parse_mysql_config(text)
