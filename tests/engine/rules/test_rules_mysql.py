"""MySQL / MariaDB / Percona rules on real-format client and log output."""

from __future__ import annotations

from tests.conftest import FIXTURES

ZSTACK = "zstack-mariadb-v2v"
PERCONA = "percona-numa-interleave-startup"
DB = "db-3301.txt"
INTERLEAVE_ROW = (
    "| innodb_numa_interleave              | ON                                                 |"
)

# seed 003's syslog lines, with the numactl -H of the same 2-node server
LOG_ONLY = """```console
[root@db-3301 ~]# numactl -H
available: 2 nodes (0-1)
node 0 cpus: 0 2 4 6 8 10
node 0 size: 257923 MB
node 0 free: 30214 MB
node 1 cpus: 1 3 5 7 9 11
node 1 size: 258048 MB
node 1 free: 31089 MB
node distances:
node   0   1
  0:  10  21
  1:  21  10
[root@db-3301 ~]# grep mysqld-3301 /var/log/messages
Jul 7 12:00:44 mysqld-3301[95109]: InnoDB: Initializing buffer pool, total size = 432G, instances = 24, chunk size = 256M
Jul 7 12:00:44 mysqld-3301[95109]: InnoDB: Setting NUMA memory policy to MPOL_INTERLEAVE
Jul 7 12:08:04 mysqld-3301[95109]: InnoDB: Setting NUMA memory policy to MPOL_DEFAULT
Jul 7 12:08:04 mysqld-3301[95109]: InnoDB: Completed initialization of buffer pool
```
"""  # noqa: E501 (real iostat/syslog lines)


def _zstack(analyze_texts, seed_text, state):
    return analyze_texts(
        seed_text(ZSTACK, state, "zstack-9.txt"), seed_text(ZSTACK, state, "infoplus-db.txt")
    )


def test_interleave_unavailable_fires_for_mariadb_guest_on_two_node_host(analyze_texts, seed_text):
    result = _zstack(analyze_texts, seed_text, "before")
    finding = next(f for f in result.findings if f.rule == "mysql.numa_interleave_unavailable")
    assert finding.host == "infoplus-db"
    assert finding.evidence[0].value == "10.4.14-MariaDB-log"


def test_interleave_unavailable_quiet_when_guest_is_bound_to_one_node(analyze_texts, seed_text):
    assert "mysql.numa_interleave_unavailable" not in _zstack(analyze_texts, seed_text, "after").rule_ids


def test_interleave_unavailable_quiet_when_the_variable_exists(analyze_texts, seed_text):
    assert "mysql.numa_interleave_unavailable" not in analyze_texts(seed_text(PERCONA, "before", DB)).rule_ids


def test_populate_startup_fires_on_percona_version_and_log(analyze_texts, seed_text):
    result = analyze_texts(seed_text(PERCONA, "before", DB))
    finding = next(f for f in result.findings if f.rule == "mysql.numa_interleave_populate_startup")
    values = {e.fact: e.value for e in finding.evidence}
    assert values["database.startup_populate_seconds"] == 440
    assert values["database.version"] == "5.7.22-22-log"


def test_populate_startup_fires_on_the_error_log_alone(analyze_texts):
    assert "mysql.numa_interleave_populate_startup" in analyze_texts(LOG_ONLY).rule_ids


def test_populate_startup_quiet_with_interleave_off(analyze_texts, seed_text):
    text = seed_text(PERCONA, "after", DB, {INTERLEAVE_ROW: INTERLEAVE_ROW.replace(" ON ", " OFF")})
    assert "mysql.numa_interleave_populate_startup" not in analyze_texts(text).rule_ids


def test_populate_startup_quiet_with_large_pages_and_fast_start(analyze_texts, seed_text):
    assert (
        "mysql.numa_interleave_populate_startup"
        not in analyze_texts(seed_text(PERCONA, "after", DB)).rule_ids
    )


def test_buffer_pool_not_persisted_fires_and_clears(analyze_texts, seed_text):
    result = analyze_texts(seed_text(PERCONA, "before", DB))
    finding = next(f for f in result.findings if f.rule == "mysql.buffer_pool_not_persisted")
    assert {e.fact for e in finding.evidence} == {
        "database.variables.innodb_buffer_pool_dump_at_shutdown",
        "database.variables.innodb_buffer_pool_load_at_startup",
    }
    assert "mysql.buffer_pool_not_persisted" not in analyze_texts(seed_text(PERCONA, "after", DB)).rule_ids


def test_large_pages_off_fires_and_clears(analyze_texts, seed_text):
    assert "mysql.large_pages_off" in analyze_texts(seed_text(PERCONA, "before", DB)).rule_ids
    assert "mysql.large_pages_off" not in analyze_texts(seed_text(PERCONA, "after", DB)).rule_ids


def test_small_pool_needs_neither_dump_nor_large_pages(analyze_texts, seed_text):
    text = seed_text(
        PERCONA,
        "before",
        DB,
        {
            "| innodb_buffer_pool_size             | 463856467968 ": (
                "| innodb_buffer_pool_size             | 8589934592   "
            )
        },
    )
    ids = analyze_texts(text).rule_ids
    assert not ids & {"mysql.buffer_pool_not_persisted", "mysql.large_pages_off"}


# this machine's MariaDB 10.11: SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool%' (25 rows),
# on the 2-node host of bokotomo/RooflineMeasurement's README (evaluation snapshot 102)
TWO_NODES = """[root@db ~]# numactl -H
available: 2 nodes (0-1)
node 0 cpus: 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17
node 0 size: 130958 MB
node 0 free: 121570 MB
node 1 cpus: 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35
node 1 size: 131072 MB
node 1 free: 126148 MB
node distances:
node   0   1
  0:  10  21
  1:  21  10
"""


def test_a_status_dump_is_not_a_variable_list_without_interleave(analyze_texts):
    # 25 status counters were counted as a "full variable list" without
    # innodb_numa_interleave: a false alarm on any multi-node host
    status = (FIXTURES / "mysql" / "this-vm-global-status-buffer-pool.txt").read_text(encoding="utf-8")
    result = analyze_texts(TWO_NODES + status, names=["db.txt"])
    assert "mysql.numa_interleave_unavailable" not in result.rule_ids
