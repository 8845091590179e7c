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


def test_hugepages_absent_and_large_pages_off_both_fire_on_the_percona_seed(analyze_texts, seed_text):
    # no pages reserved on the host and large_pages=OFF in mysqld: two settings, two findings
    result = analyze_texts(seed_text(PERCONA, "before", "db-3301.txt"))
    assert {"memory.hugepages_absent", "mysql.large_pages_off"} <= result.rule_ids


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


# ------------------------------------------------------------ huge pages: magnitude

LARGE_PAGES_ROW = (
    "| large_pages                         | OFF                                                |\n"
)
POOL_ROW = "| innodb_buffer_pool_size             | 463856467968 "


def _percona_without_large_pages(seed_text, pool: str | None = None) -> str:
    """Seed 003's host with its large_pages row removed (so the rule is this one's),
    optionally with another pool size."""
    replace = {LARGE_PAGES_ROW: ""}
    if pool is not None:
        replace[POOL_ROW] = POOL_ROW.replace("463856467968", pool.ljust(12))
    return seed_text(PERCONA, "before", "db-3301.txt", replace)


def test_hugepages_absent_warns_for_a_432_gib_pool(analyze_texts, seed_text):
    result = analyze_texts(_percona_without_large_pages(seed_text))
    finding = next(f for f in result.findings if f.rule == "memory.hugepages_absent")
    assert finding.severity == "warning"
    assert {e.fact: e.value for e in finding.evidence}["database.variables.innodb_buffer_pool_size"] == (
        463856467968
    )
    assert finding.past > 9  # 432 GiB is 54x the 8 GiB threshold (capped in the impact)


def test_hugepages_absent_is_info_for_a_2_gib_pool(analyze_texts, seed_text):
    # 2 GiB of a 504 GiB host: above the 1 GiB info threshold, below 8 GiB and 25 %
    result = analyze_texts(_percona_without_large_pages(seed_text, "2147483648"))
    finding = next(f for f in result.findings if f.rule == "memory.hugepages_absent")
    assert finding.severity == "info"


def test_hugepages_absent_quiet_for_a_128_mib_pool(analyze_texts, seed_text):
    # MariaDB/MySQL's default pool: nothing to gain from a reserved huge page pool
    result = analyze_texts(_percona_without_large_pages(seed_text, "134217728"))
    assert "memory.hugepages_absent" not in result.rule_ids


def test_hugepages_absent_vm_host_warning_scales_with_the_largest_guest(analyze_texts, seed_text):
    # seed 000: a 32 GiB guest is twice the 16 GiB threshold
    result = analyze_texts(seed_text(ZSTACK, "before", "zstack-9.txt"))
    finding = next(f for f in result.findings if f.rule == "memory.hugepages_absent")
    assert finding.severity == "warning" and finding.past == 2.0
    small = seed_text(
        ZSTACK,
        "before",
        "zstack-9.txt",
        {
            "<memory unit='KiB'>33554432</memory>": "<memory unit='KiB'>2097152</memory>",
            "<currentMemory unit='KiB'>33554432</currentMemory>": (
                "<currentMemory unit='KiB'>2097152</currentMemory>"
            ),
        },
    )
    assert "memory.hugepages_absent" not in analyze_texts(small).rule_ids


# ------------------------------------------------------------ DIMM population
# Facts in the shape ``dmidecode -t memory`` gives (HostFacts.memory_devices): the
# locators and bank locators below are those printed by a Threadripper board
# ("DIMM 0"/"DIMM 1", "P0 CHANNEL A", memtest86plus issue 123) and Supermicro /
# Dell 2-socket boards ("P1-DIMMA1", "CPU1_DIMM_A1").


def _host_with_dimms(dimms):
    from collectors.facts import HostFacts, MemoryDevices, Source

    host = HostFacts(label="dimms", role="physical")
    host.memory_devices = MemoryDevices(source=Source(artifact="dmidecode -t memory", line=1), dimms=dimms)
    return host


def _dimm(locator, socket, channel, size_mb, line):
    from collectors.facts import Dimm

    return Dimm(locator=locator, socket=socket, channel=channel, size_mb=size_mb, type="DDR4", line=line)


def _analyze_host(host):
    from collectors.facts import SnapshotFacts
    from engine.run import analyze

    return analyze(SnapshotFacts(hosts=[host]))


def test_dimm_population_unbalanced_fires_when_sockets_hold_different_memory():
    dimms = [_dimm(f"CPU1_DIMM_{c}1", 0, c, 16384, i * 20) for i, c in enumerate("ABCD")]
    dimms += [
        _dimm(f"CPU2_DIMM_{c}1", 1, c, 16384 if c in "AB" else None, 100 + i * 20)
        for i, c in enumerate("ABCD")
    ]
    result = _analyze_host(_host_with_dimms(dimms))
    finding = next(f for f in result.findings if f.rule == "memory.dimm_population_unbalanced")
    assert finding.severity == "warning"
    assert finding.evidence[0].value == {"0": 65536, "1": 32768}
    assert "socket 1 has 2 of 4 channels empty" in finding.explanation


def test_dimm_population_unbalanced_quiet_when_every_channel_matches():
    dimms = [
        _dimm(f"P{s + 1}-DIMM{c}1", s, c, 32768, s * 100 + i * 20)
        for s in (0, 1)
        for i, c in enumerate("ABCDEF")
    ]
    result = _analyze_host(_host_with_dimms(dimms))
    assert "memory.dimm_population_unbalanced" not in result.rule_ids
    assert "memory.dimm_population_unbalanced" in result.checked


def test_dimm_population_mixed_sizes_within_a_socket_are_info():
    # one socket, channels A and B: 16 GB + 8 GB (the Threadripper board's bank locators)
    dimms = [
        _dimm("DIMM 0", 0, "A", None, 1),
        _dimm("DIMM 1", 0, "A", 16384, 15),
        _dimm("DIMM 0", 0, "B", None, 35),
        _dimm("DIMM 1", 0, "B", 8192, 49),
    ]
    result = _analyze_host(_host_with_dimms(dimms))
    finding = next(f for f in result.findings if f.rule == "memory.dimm_population_unbalanced")
    assert finding.severity == "info"
