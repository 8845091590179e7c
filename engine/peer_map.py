# ruff: noqa: E501  (a table of one row per peer check: long rows read better unwrapped)
"""The peers' checks in this domain (research/breadth.md §1) and what Casebook
does with each: the rule that covers it, or why it is out of scope. Rendered
into docs/rules.md by ``engine.rules_doc``; a rule named here must exist (a
test checks it)."""

from __future__ import annotations

# (peer, its check, our rule IDs (comma-separated) or "", why / how it differs)
PEER_MAP: tuple[tuple[str, str, str, str], ...] = (
    # --- NUMA
    (
        "MongoDB; obdiag `system/parameter.py`; arp142 `2315`; DataStax; WiredTiger",
        "vm.zone_reclaim_mode != 0 on a DB/cache host",
        "numa.zone_reclaim_on_cache_host",
        "judged only where a data store is seen; a host without one is left alone (zone reclaim is right for the founding STREAM case)",
    ),
    (
        "obdiag; arp142 `2200`; tuned oracle/mssql/sap-hana/network-latency/hpc-compute",
        "kernel.numa_balancing must be 0",
        "numa.balancing_disabled",
        "conflict (breadth §1.3.1): ours warns when it is 0; not changed here",
    ),
    (
        "MongoDB (`numa_maps`); MySQLTuner 'Task 6'",
        "DB process memory not interleaved/bound on a multi-node host",
        "numa.process_placement, memory.db_exceeds_node, mysql.numa_interleave_unavailable",
        "MongoDB's own warning and numastat -p for any store; MySQL through its variables",
    ),
    (
        "arp142 `2220`, `1210`, `2230`",
        "topology sanity: distances, SNC/CoD, CPU vs memory nodes",
        "numa.high_remote_distance, numa.memoryless_node, numa.single_node_multi_socket",
        "",
    ),
    (
        "arp142 `2210_numad_rhel`",
        "numad running",
        "",
        "out of scope: numad is one placement tool among several; its absence is no fault",
    ),
    (
        "pt-summary (prints only)",
        "per-node free memory, numa_miss, page cache vs watermark",
        "numa.node_memory_imbalance, numa.remote_access_dominant, numa.local_node_pagecache_pressure",
        "",
    ),
    # --- THP / huge pages
    (
        "Redis; MongoDB <= 7.0; obdiag `dependent_software.py`; arp142 `2000`; Oracle PRVE-00024; tuned postgresql/oracle/network-latency; Splunk; Cloudera; EDB",
        "THP enabled = always on a DB host",
        "memory.thp_on_latency_db",
        "version-aware; only `always` (madvise passes)",
    ),
    (
        "MongoDB 8.0 docs (tcmalloc-performance); tuned mssql",
        "THP should be on (always)",
        "memory.thp_off_for_mongodb_tcmalloc",
        "MongoDB 8.0 only; MSSQL is not detected (no SQL Server parser)",
    ),
    ("MongoDB; arp142 `2010`", "THP defrag = always", "memory.thp_defrag_always", ""),
    (
        "Redis LATENCY DOCTOR",
        "AnonHugePages used by the Redis process",
        "memory.thp_on_latency_db",
        "read from the doctor's advice text",
    ),
    (
        "postgresqltuner (3 advices); pgtune; pt-variable-advisor `large_pages`; Oracle; RH guide 8",
        "static huge pages for a large DB pool / VM",
        "memory.hugepages_absent, mysql.large_pages_off, postgresql.huge_pages_unused, oracle.sga_not_in_huge_pages",
        "MySQL pools and VMs; PostgreSQL shared_buffers (SHOW ALL / postgresql.conf); Oracle SGA (alert log, parameters)",
    ),
    (
        "postgresqltuner (`nr_hugepages` sizing)",
        "huge pages reserved but unused / not sized; PageTables large",
        "memory.hugepages_unused, postgresql.huge_pages_unused, oracle.sga_not_in_huge_pages, memory.page_tables_large",
        "reserved and all free; too few for PostgreSQL's shared memory or Oracle's SGA; PageTables >= 2 GiB "
        "(or a tenth of RAM)",
    ),
    (
        "arp142 `2001`; obdiag `vm.nr_hugepages=0`",
        "persistent huge pages must be 0 (HANA, OceanBase)",
        "",
        "conflict with memory.hugepages_absent for those stores; HANA/OceanBase are not detected as data stores",
    ),
    # --- memory
    (
        "MySQLTuner (>10); obdiag (=0); arp142 `2325`; tuned (10/3/1/30)",
        "vm.swappiness value",
        "memory.swappiness_zero_oom",
        "only 0 on kernels with the 3.5 semantics is a fault; obdiag's '= 0' is the OOM risk itself",
    ),
    (
        "risu `swap-usage-high`; obdiag `swapon`; Redis checklist; Elasticsearch",
        "swap in use / swap activity on a DB host",
        "memory.swap_activity",
        "activity, not use: si + so over vmstat's intervals on any host with swap (swap used but not moving is not a fault); /proc/vmstat's cumulative pswpin/pswpout leave it not checked",
    ),
    (
        "Redis (=1); postgresqltuner (=2); MongoDB (!=2); obdiag (=0); arp142 `2320`",
        "vm.overcommit_memory",
        "memory.overcommit_policy",
        "per store: Redis 1, MongoDB not 2; PostgreSQL's 2 and obdiag's 0 are not enforced",
    ),
    (
        "obdiag (32768-2097152); arp142 `2310`; tuned hpc-compute",
        "vm.min_free_kbytes / watermarks",
        "memory.direct_reclaim_stalls",
        "judged by its effect (direct reclaim and compaction stalls in /proc/vmstat), not by the value: the right reserve depends on RAM and burst size",
    ),
    (
        "RH guide 9.4; tuned realtime-virtual-host; risu `ksm-disabled-on-nfv`; arp142 `2400`",
        "KSM on a virtualisation host",
        "kvm.ksm_active",
        "KSM merging (run = 1, pages_sharing > 0); merge_across_nodes = 1 on a multi-node host is named in the finding, not a rule of its own (no public multi-node KSM output found)",
    ),
    (
        "MySQLTuner; postgresqltuner; obdiag `memory_limit_vs_phy_mem`",
        "DB memory vs RAM; OOM in log",
        "memory.db_exceeds_node",
        "per node only",
    ),
    (
        "tuned; arp142 `5050`; pt-summary (prints)",
        "dirty ratios",
        "",
        "out of scope for now: the right value depends on the storage write cache",
    ),
    (
        "obdiag `system/parameter.py`",
        "vm.max_map_count, fs.aio-max-nr, fs.nr_open and other limits",
        "mongodb.max_map_count_low",
        "vm.max_map_count for MongoDB (its own warning or sysctl); the other limits are start-up failures with their own error messages, out of scope",
    ),
    # --- CPU
    (
        "tuned; arp142 `1300/1400/1410/1500/1600`; risu `disablecstates`; DataStax",
        "governor / C-states / EPB / P-states",
        "cpu.governor_not_performance, cpu.deep_cstates",
        "the governor; C-states from cpupower idle-info, calibrated on tuned's latency profiles (force_latency=cstate.id:1: nothing deeper than C1), info since deep states are every server's default; EPB / P-state limits not parsed",
    ),
    (
        "risu `nova/numa.sh`; tuned cpu-partitioning",
        "isolcpus/nohz_full vs pinned CPUs",
        "kvm.no_cpu_isolation",
        "",
    ),
    ("obdiag `cpu/oversold`", "CPU oversubscription", "kvm.host_contention", ""),
    (
        "kubelet issues (breadth §2 #34-36); insights `kubepods_cpu_quota`",
        "Kubernetes CPU/topology manager policy",
        "",
        "not done: needs a kubelet configuration/state parser (k8s.topology_policy proposed)",
    ),
    # --- KVM
    (
        "RH guide ch. 3, 9; risu `nova/numa.sh`",
        "cpu mode, topology, vcpupin, emulatorpin, iothreads, numatune, guest NUMA",
        "kvm.cpu_model_hides_cache, kvm.flat_socket_topology, kvm.vcpus_unpinned, kvm.emulator_unpinned, kvm.iothread_unpinned, kvm.memory_not_bound, kvm.guest_numa_missing, kvm.pinning_spans_nodes, kvm.vcpu_hotplug_enabled",
        "",
    ),
    ("RH guide 9.3; nova `hw:mem_page_size`", "guest huge pages backing", "memory.hugepages_absent", ""),
    (
        "RH guide 5.4.2",
        "multi-queue virtio-net",
        "kvm.virtio_net_single_queue",
        "info from the domain XML (queues per vCPU); the guest's ethtool -l is not yet compared",
    ),
    (
        "RH guide 5.2-5.3",
        "vhost_net",
        "kvm.vhost_net_disabled",
        "a virtio NIC with <driver name='qemu'> on a KVM guest; TCG guests left out",
    ),
    (
        "RH guide 7.2-7.4",
        "disk cache / io mode",
        "kvm.disk_cache_mode",
        "cache mode per disk (I/O-heavy guests; unsafe on any); the io mode is not judged: the guide advises none",
    ),
    (
        "RH guide 9.3; CERN (EPT)",
        "PCI locality, EPT",
        "",
        "out of scope for now: not parsed from the domain XML yet",
    ),
    # --- IRQ / network
    ("insights `softnet_stat`, `interrupts` (parsers)", "softirq concentration", "net.softirq_hotspot", ""),
    (
        "arp142 `1700`; tuned cpu-partitioning; RHEL network guide",
        "irqbalance service / IRQ affinity vs isolated CPUs",
        "net.irq_single_cpu",
        "NIC queue interrupts on one CPU (with whether ps shows irqbalance); IRQs on isolated CPUs not checked",
    ),
    ("insights `softnet_stat`, `ethtool`", "NIC queues / RSS / RPS, softnet drops", "", "not done"),
    (
        "obdiag `network/*`",
        "TCP retransmission, drops, NIC speed and speed difference, clock offset",
        "",
        "out of scope: not parsed",
    ),
    (
        "obdiag (13 `net.*`); arp142 (~16); tuned; Redis",
        "net sysctls (somaxconn, rmem/wmem, tcp_*)",
        "net.somaxconn_low",
        "somaxconn against Redis's backlog only; the others are workload-specific",
    ),
    (
        "Cloudflare (breadth §2 #41)",
        "tcp_rmem too large (tcp_collapse)",
        "",
        "not done (low priority in breadth)",
    ),
    # --- disk
    (
        "arp142 `5010`; postgresqltuner; DataStax; pt-summary (prints)",
        "I/O scheduler",
        "disk.io_scheduler",
        "cfq/bfq on a data device: warning on a host with a data store or guests, info elsewhere; none, mq-deadline, noop, deadline and kyber quiet (MySQL, Oracle, ScyllaDB, TiDB, Elastic guidance)",
    ),
    ("tuned; MongoDB; DataStax; arp142 `4110`", "readahead, mount options, filesystem", "", "not done"),
    ("obdiag `disk_iops`", "disk latency / utilisation / IOPS", "disk.latency_high", ""),
    ("obdiag `disk/*`", "disk full, XFS", "", "out of scope: capacity, not performance placement"),
    # --- databases
    (
        "MySQLTuner; pt-variable-advisor",
        "MySQL host-facing variables (interleave, large_pages, BP dump/load, pool vs node, flush method)",
        "mysql.numa_interleave_unavailable, mysql.numa_interleave_populate_startup, mysql.buffer_pool_not_persisted, mysql.large_pages_off, memory.db_exceeds_node, mysql.flush_method_buffered",
        "innodb_flush_method fsync (or printed empty on 5.x): warning with a pool >= half of RAM, info when the share is not shown",
    ),
    (
        "MySQLTuner",
        "server variables unrelated to the host (query cache, connections, ...)",
        "",
        "out of scope: database tuning, not host placement",
    ),
    (
        "pt-variable-advisor (66 rule ids)",
        "variable advice (66)",
        "",
        "out of scope except `large_pages` and `innodb_buffer_pool_size` (covered above)",
    ),
    (
        "postgresqltuner; pgtune; tuned postgresql; EDB",
        "PostgreSQL host-facing (huge_pages, overcommit, THP, shared_buffers vs RAM)",
        "memory.thp_on_latency_db, memory.overcommit_policy, postgresql.huge_pages_unused",
        "settings from SHOW ALL / postgresql.conf; shared_buffers vs RAM is database tuning, out of scope",
    ),
    (
        "Redis warnings + LATENCY DOCTOR",
        "Redis (overcommit, THP, somaxconn, fork latency, swap)",
        "memory.overcommit_policy, memory.thp_on_latency_db, net.somaxconn_low, redis.fork_latency",
        "fork time from INFO latest_fork_usec or the log's save lines; swap on a Redis host not done",
    ),
    (
        "mongod start-up warnings",
        "MongoDB (NUMA, zone reclaim, THP version-aware, overcommit, rlimits)",
        "numa.process_placement, numa.zone_reclaim_on_cache_host, memory.thp_on_latency_db, memory.thp_defrag_always, memory.thp_off_for_mongodb_tcmalloc, memory.overcommit_policy, mongodb.max_map_count_low",
        "rlimits and filesystem warnings are out of scope",
    ),
    (
        "Oracle CVU; tuned oracle",
        "Oracle (HugePages for SGA, THP, AMM vs HugePages)",
        "memory.thp_on_latency_db, oracle.sga_not_in_huge_pages",
        "the alert log's Large Pages Information, memory_target (AMM) and use_large_pages",
    ),
    (
        "obdiag (151 tasks)",
        "OceanBase parameters and cluster checks",
        "oceanbase.cpu_quota_concurrency_high, oceanbase.net_thread_count_high, oceanbase.proxy_routing_not_default, oceanbase.remote_plans_high",
        "the rest of obdiag's tasks are OceanBase administration, out of scope",
    ),
    (
        "obdiag `clock_source`, `arm_smmu`, `kernel_bad_version`",
        "clock source, SMMU, bad kernel versions",
        "memory.swappiness_zero_oom, kernel.known_regression",
        "a table of sourced regressions (4.11-rc KSM lockup, EL7 XFS allocation deadlock, Linux 7.0 and PostgreSQL); obdiag's 3.10 + cgroup check is OceanBase deployment, not included",
    ),
    (
        "risu (778 plugins)",
        "the ~10 in this domain (nova NUMA, cpupinning, RT kernel, KSM, DPDK pages, tuned profile, swap, memory, mysql, postgresql)",
        "kvm.no_cpu_isolation, kvm.vcpus_unpinned, kvm.pinning_spans_nodes",
        "RT-kernel and DPDK checks are out of scope",
    ),
    (
        "insights-core (parsers, no public rules)",
        "852 specs",
        "",
        "parsers only: nothing to map; their specs inform our FACT_SOURCES commands",
    ),
    (
        "PingCAP Clinic / tiup check",
        "THP, swap, governor, sysctl, NIC speed",
        "memory.thp_on_latency_db",
        "TiDB/TiKV are not detected as data stores",
    ),
)
