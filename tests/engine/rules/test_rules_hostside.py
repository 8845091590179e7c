"""Host-side rules of data stores (THP, zone reclaim, swappiness, overcommit,
listen backlog, placement) on published incidents and vendor-tuned hosts
(tests/fixtures/published/hostside, sources in tests/fixtures/published/README.md)."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES

HOSTSIDE = FIXTURES / "published" / "hostside"


def _text(name: str) -> str:
    return (HOSTSIDE / name).read_text(encoding="utf-8")


def _fired(result, rule_id: str) -> list:
    return [f for f in result.findings if f.rule == rule_id]


# ---------------------------------------------------------------- THP


@pytest.mark.parametrize(
    "name",
    [
        "mongo34-thp-always.log",  # docker-library/mongo#34, MongoDB 3.0 text log
        "mongodb-k8s-operator-1400-startup-warnings.txt",  # mongosh start-up warnings summary
        "umbrella-224-mongo-thp.log",  # NatLabRockies/api-umbrella#224
    ],
)
def test_thp_on_latency_db_fires_on_mongodb_thp_always(analyze_texts, name):
    result = analyze_texts(_text(name))
    assert "memory.thp_on_latency_db" in result.rule_ids
    (f,) = _fired(result, "memory.thp_on_latency_db")
    assert f.severity == "warning"
    assert f.evidence[0].fact == "services[mongodb].thp_enabled"
    assert f.evidence[0].value == "always"
    assert f.evidence[0].line is not None


def test_thp_on_latency_db_fires_on_redis_latency_doctor(analyze_texts):
    # zalando-incubator/kubernetes-on-aws#1880: LATENCY DOCTOR saw anonymous huge pages
    result = analyze_texts(_text("zalando-1880-redis-latency-doctor.txt"))
    assert "memory.thp_on_latency_db" in result.rule_ids
    (f,) = _fired(result, "memory.thp_on_latency_db")
    assert f.template == "in_use"


def test_thp_on_latency_db_quiet_on_redis_before_608_with_madvise(analyze_texts):
    # redis#3058: THP madvise, Redis 3.x warns anyway (its check wanted [never])
    result = analyze_texts(_text("redis-3058-thp-madvise.txt"))
    assert "memory.thp_on_latency_db" not in result.rule_ids
    assert "memory.thp_defrag_always" not in result.rule_ids


@pytest.mark.parametrize("name", ["lantern-aws-213-redis307.log", "ansible-redis-138-redis326-syslog.txt"])
def test_thp_on_latency_db_quiet_on_old_redis_warning_without_the_value(analyze_texts, name):
    # Redis 3.0.7 / 3.2.6 warn whenever THP is not [never]: the warning is no proof of "always"
    result = analyze_texts(_text(name))
    assert "memory.thp_on_latency_db" not in result.rule_ids


def test_thp_on_latency_db_not_for_mongodb8(analyze_texts):
    # r-universe-org/help#509: MongoDB 8 asks for THP on; the opposite rule fires instead
    result = analyze_texts(_text("r-universe-509-mongodb8-warnings.txt"))
    assert "memory.thp_on_latency_db" not in result.rule_ids
    assert "memory.thp_off_for_mongodb_tcmalloc" in result.rule_ids
    (f,) = _fired(result, "memory.thp_off_for_mongodb_tcmalloc")
    assert f.evidence[0].fact == "services[mongodb].thp_sysfs"


def test_thp_off_for_mongodb_tcmalloc_quiet_on_mongodb_before_8(analyze_texts):
    result = analyze_texts(_text("mongo34-thp-always.log"))
    assert "memory.thp_off_for_mongodb_tcmalloc" not in result.rule_ids


@pytest.mark.parametrize("name", ["mongo34-thp-always.log", "umbrella-224-mongo-thp.log"])
def test_thp_defrag_always_fires_when_mongodb_reports_it(analyze_texts, name):
    result = analyze_texts(_text(name))
    assert "memory.thp_defrag_always" in result.rule_ids
    (f,) = _fired(result, "memory.thp_defrag_always")
    assert f.severity == "warning"
    assert f.evidence[0].fact == "services[mongodb].thp_defrag"


def test_thp_defrag_always_quiet_without_defrag_warning(analyze_texts):
    # the operator's mongosh summary shows THP always but no defrag warning
    result = analyze_texts(_text("mongodb-k8s-operator-1400-startup-warnings.txt"))
    assert "memory.thp_defrag_always" not in result.rule_ids


# ---------------------------------------------------------------- zone reclaim


@pytest.mark.parametrize(
    "name",
    [
        "frost-pg-numactl-zone-reclaim.txt",
        "gsmith-pg-numactl-zone-reclaim.txt",
        "pt-summary-007-sysctl.txt",
        "pt-summary-006-sysctl.txt",
    ],
)
def test_zone_reclaim_on_cache_host_quiet_without_a_store_in_sight(analyze_texts, name):
    # Jeff Frost's and Greg Smith's PostgreSQL hosts (numactl -H as printed, zone_reclaim_mode
    # = 1 as the text states) name PostgreSQL only in prose: no output shows the store, so
    # the rule does not judge them; the pt-summary hosts have zone_reclaim_mode = 0
    result = analyze_texts(_text(name))
    assert "numa.zone_reclaim_on_cache_host" not in result.rule_ids


def test_zone_reclaim_on_cache_host_quiet_on_the_founding_stream_fix(analyze_texts, seed_text):
    # founding case kunpeng-stream-zone-reclaim: zone_reclaim_mode = 1 was the fix (STREAM)
    result = analyze_texts(seed_text("kunpeng-stream-zone-reclaim", "after", "gp-sdw03.txt"))
    assert "numa.zone_reclaim_on_cache_host" not in result.rule_ids


def test_zone_reclaim_on_cache_host_fires_on_mongodb_warning(analyze_texts):
    # ityouknow's 5-server MongoDB 3.4 cluster (128 GB each): mongod reports
    # zone_reclaim_mode 1 together with NUMA, THP and defrag warnings
    result = analyze_texts(_text("ityouknow-mongodb34-cluster-warnings.log"))
    assert "numa.zone_reclaim_on_cache_host" in result.rule_ids
    (f,) = _fired(result, "numa.zone_reclaim_on_cache_host")
    assert f.severity == "warning"
    assert (f.evidence[0].fact, f.evidence[0].value, f.evidence[0].line) == (
        "services[mongodb].zone_reclaim",
        "1",
        12,
    )
    assert {
        "numa.process_placement",
        "memory.thp_on_latency_db",
        "memory.thp_defrag_always",
    } <= result.rule_ids


def test_zone_reclaim_on_cache_host_with_sysctl_and_a_store(analyze_texts):
    # Logic test, not an incident: Frost's host given together with a MongoDB log
    # (cisagov/cyhy_amis#76) so that a store is in sight: sysctl's value is cited
    text = _text("frost-pg-numactl-zone-reclaim.txt") + "\n" + _text("cyhy-amis-76-mongo-numa.txt")
    result = analyze_texts(text)
    (f,) = _fired(result, "numa.zone_reclaim_on_cache_host")
    assert f.evidence[0].fact == "sysctl.vm.zone_reclaim_mode"


# ---------------------------------------------------------------- swappiness


def test_swappiness_zero_oom_fires_on_rhel6_backport_kernel(analyze_texts):
    # Percona, "OOM relation to vm.swappiness=0 in new kernel": CentOS 6.4, 2.6.32-358
    result = analyze_texts(_text("percona-swappiness0-centos64.txt"))
    assert "memory.swappiness_zero_oom" in result.rule_ids
    (f,) = _fired(result, "memory.swappiness_zero_oom")
    assert f.template == "strict"
    assert [e.fact for e in f.evidence[:2]] == ["sysctl.vm.swappiness", "kernel.release"]


def test_swappiness_zero_oom_quiet_on_percona_tuned_host(analyze_texts):
    # pt-summary sample 007 (Percona support host): swappiness 1
    result = analyze_texts(_text("pt-summary-007-sysctl.txt"))
    assert "memory.swappiness_zero_oom" not in result.rule_ids


def test_swappiness_zero_is_strict_by_kernel():
    from engine.rules.vm_policy import swappiness_zero_is_strict

    assert swappiness_zero_is_strict("3.10.0-1160.el7.x86_64") is True
    assert swappiness_zero_is_strict("2.6.32-220.el6.x86_64") is False
    assert swappiness_zero_is_strict("3.2.0-4-amd64") is False


# ---------------------------------------------------------------- overcommit, backlog


@pytest.mark.parametrize(
    ("name", "mode"),
    [("lantern-aws-213-redis307.log", "0"), ("jemalloc-2756-redis741.log", "!= 1")],
)
def test_overcommit_policy_fires_on_redis_warnings(analyze_texts, name, mode):
    result = analyze_texts(_text(name))
    assert "memory.overcommit_policy" in result.rule_ids
    (f,) = _fired(result, "memory.overcommit_policy")
    assert f.evidence[0].value == mode


def test_overcommit_policy_quiet_without_a_store(analyze_texts):
    # pt-summary 006: overcommit 0 on a host with no Redis or MongoDB in sight
    result = analyze_texts(_text("pt-summary-006-sysctl.txt"))
    assert "memory.overcommit_policy" not in result.rule_ids


@pytest.mark.parametrize(
    "name",
    ["lantern-aws-213-redis307.log", "jemalloc-2756-redis741.log", "ansible-redis-138-redis326-syslog.txt"],
)
def test_somaxconn_low_fires_on_redis_backlog_warning(analyze_texts, name):
    result = analyze_texts(_text(name))
    assert "net.somaxconn_low" in result.rule_ids
    (f,) = _fired(result, "net.somaxconn_low")
    assert f.values["somaxconn"] == 128


def test_somaxconn_low_quiet_on_redis_without_the_warning(analyze_texts):
    result = analyze_texts(_text("zalando-1880-redis-latency-doctor.txt"))
    assert "net.somaxconn_low" not in result.rule_ids


# ---------------------------------------------------------------- placement


@pytest.mark.parametrize(
    "name",
    ["cyhy-amis-76-mongo-numa.txt", "ansible-mongodb-25-mongo2610-numa.txt", "coreos-305-mongo-numa.log"],
)
def test_process_placement_fires_on_mongodb_numa_warning(analyze_texts, name):
    result = analyze_texts(_text(name))
    assert "numa.process_placement" in result.rule_ids
    (f,) = _fired(result, "numa.process_placement")
    assert f.template == "warned"


def test_process_placement_quiet_on_mongodb_without_numa_warning(analyze_texts):
    result = analyze_texts(_text("mongodb-k8s-operator-1400-startup-warnings.txt"))
    assert "numa.process_placement" not in result.rule_ids


# ---------------------------------------------------------------- Redis fork


@pytest.mark.parametrize(
    ("name", "severity", "ms"),
    [
        ("redis-1154-latest-fork-usec.txt", "warning", 981.432),  # redis#1154: EC2 (Xen), INFO
        ("redis-9030-bgsave-fork-97s.log", "warning", 97421.0),  # redis#9030: 97 s fork in a pod
        ("redis-2820-cluster-bgsave.log", "info", 190.0),  # redis#2820: 100 GB cluster node
    ],
)
def test_redis_fork_latency_fires_on_slow_forks(analyze_texts, name, severity, ms):
    result = analyze_texts(_text(name))
    assert "redis.fork_latency" in result.rule_ids
    (f,) = _fired(result, "redis.fork_latency")
    assert (f.severity, f.values["ms"]) == (severity, ms)


def test_redis_fork_latency_quiet_on_millisecond_forks(analyze_texts):
    # nextcloud-snap#2563: a small Redis whose forks take 1 ms
    result = analyze_texts(_text("nextcloud-2563-redis-bgsave.log"))
    assert "redis.fork_latency" not in result.rule_ids


# ---------------------------------------------------------------- virtio-net queues


@pytest.mark.parametrize("name", ["insights-rhosp-guest.xml", "insights-rhel74-guest.xml"])
def test_virtio_net_single_queue_fires_on_real_guest_xml(analyze_texts, name):
    result = analyze_texts(_text(name), names=[name])
    assert "kvm.virtio_net_single_queue" in result.rule_ids
    (f,) = _fired(result, "kvm.virtio_net_single_queue")
    assert (f.severity, f.values["vcpus"]) == ("info", 4)
    assert f.evidence[0].line is not None


def test_virtio_net_single_queue_fires_on_the_zstack_founding_guest(analyze_texts, seed_text):
    # the founding case's 32-vCPU MariaDB guest: its virtio NIC has no queues
    result = analyze_texts(seed_text("zstack-mariadb-v2v", "before", "zstack-9.txt"))
    (f,) = _fired(result, "kvm.virtio_net_single_queue")
    assert f.values["vcpus"] == 32


def test_virtio_net_single_queue_quiet_on_user_mode_networking(analyze_texts):
    # a 4-vCPU KVM guest's virtio NIC on -netdev user (slirp): one queue pair whatever is set,
    # libvirt refuses queues on it, so there is nothing to advise
    text = (FIXTURES / "published" / "qemu" / "aarch64-kvm-tpm-run-script-cache-direct.sh").read_text()
    result = analyze_texts(text, names=["run.sh"])
    assert "kvm.virtio_net_single_queue" not in result.rule_ids


@pytest.mark.parametrize("name", ["insights-numa-guest.xml", "libvirt-net-vhostuser-multiq.xml"])
def test_virtio_net_single_queue_quiet(analyze_texts, name):
    # no virtio NIC; a 1-vCPU guest (its multi-queue NIC is read: queues 4)
    result = analyze_texts(_text(name), names=[name])
    assert "kvm.virtio_net_single_queue" not in result.rule_ids
