"""Memory policy rules on real-format transcripts."""

from __future__ import annotations

ZSTACK = "zstack-mariadb-v2v"
PERCONA = "percona-numa-interleave-startup"
KUNPENG = "kunpeng-stream-zone-reclaim"

INTERLEAVE_ROW = (
    "| innodb_numa_interleave              | ON                                                 |"
)


def test_hugepages_absent_fires_on_vm_host_without_static_pages(analyze_texts, seed_text):
    result = analyze_texts(seed_text(ZSTACK, "before", "zstack-9.txt"))
    finding = next(f for f in result.findings if f.rule == "memory.hugepages_absent")
    assert finding.host == "zstack-9"
    assert finding.evidence[0].value == 0
    assert finding.measures == ["static-hugepages"]


def test_hugepages_absent_quiet_when_vm_host_reserves_pages(analyze_texts, seed_text):
    text = seed_text(
        ZSTACK,
        "before",
        "zstack-9.txt",
        {
            "Node 1 HugePages_Total: 0": "Node 1 HugePages_Total: 16384",
            "Node 0 HugePages_Total: 0": "Node 0 HugePages_Total: 16384",
            "vm.nr_hugepages = 0": "vm.nr_hugepages = 32768",
        },
    )
    assert "memory.hugepages_absent" not in analyze_texts(text).rule_ids


def test_hugepages_absent_quiet_on_host_without_guests_or_database(analyze_texts, seed_text):
    assert (
        "memory.hugepages_absent" not in analyze_texts(seed_text(KUNPENG, "before", "gp-sdw01.txt")).rule_ids
    )


def test_hugepages_absent_leaves_known_large_pages_to_mysql_rule(analyze_texts, seed_text):
    result = analyze_texts(seed_text(PERCONA, "before", "db-3301.txt"))
    assert "memory.hugepages_absent" not in result.rule_ids
    assert "mysql.large_pages_off" in result.rule_ids


def test_db_exceeds_node_fires_without_interleave(analyze_texts, seed_text):
    text = seed_text(
        PERCONA, "before", "db-3301.txt", {INTERLEAVE_ROW: INTERLEAVE_ROW.replace(" ON ", " OFF")}
    )
    result = analyze_texts(text)
    finding = next(f for f in result.findings if f.rule == "memory.db_exceeds_node")
    assert finding.evidence[0].value == 463856467968  # 432 GiB against 251 GiB nodes


def test_db_exceeds_node_quiet_with_interleave(analyze_texts, seed_text):
    assert "memory.db_exceeds_node" not in analyze_texts(seed_text(PERCONA, "before", "db-3301.txt")).rule_ids


def test_db_exceeds_node_quiet_when_pool_fits_a_node(analyze_texts, seed_text):
    text = seed_text(
        PERCONA,
        "before",
        "db-3301.txt",
        {
            INTERLEAVE_ROW: INTERLEAVE_ROW.replace(" ON ", " OFF"),
            "| innodb_buffer_pool_size             | 463856467968 ": (
                "| innodb_buffer_pool_size             | 137438953472 "
            ),
        },
    )
    assert "memory.db_exceeds_node" not in analyze_texts(text).rule_ids
