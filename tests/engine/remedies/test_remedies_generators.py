"""The non-libvirt generators: exact text, rollback, and the facts dispatcher."""

from __future__ import annotations

import doctest
import importlib

import pytest

from collectors.facts import (
    DatabaseFacts,
    HostFacts,
    Interrupts,
    OceanBaseFacts,
    Qdisc,
    Sysctl,
    TcQdiscs,
)
from engine.remedies import REMEDIES_BY_MEASURE, remedies_for_host
from engine.remedies.database import mycnf_lines, numactl_dropin, oceanbase_parameters
from engine.remedies.host import cpu_mask, irq_affinity, remove_netem, sysctl_file
from engine.remedies.openstack import flavor_properties, nova_cpu_mode


def test_sysctl_file_and_rollback():
    r = sysctl_file(
        settings={"vm.zone_reclaim_mode": 1, "kernel.numa_balancing": 1},
        previous={"vm.zone_reclaim_mode": "0", "kernel.numa_balancing": "0"},
    )
    assert r.path == "/etc/sysctl.d/90-numa.conf"
    assert r.text == "# Casebook: NUMA memory policy\nvm.zone_reclaim_mode = 1\nkernel.numa_balancing = 1\n"
    assert r.rollback == (
        "rm -f /etc/sysctl.d/90-numa.conf\n"
        "sysctl -w vm.zone_reclaim_mode=0\n"
        "sysctl -w kernel.numa_balancing=0"
    )
    assert r.commands[-1] == "sysctl -p /etc/sysctl.d/90-numa.conf"
    assert set(r.measures) == {"zone-reclaim-mode", "enable-numa-balancing"}
    with pytest.raises(ValueError):
        sysctl_file(settings={"vm.x; rm -rf /": 1})


def test_flavor_properties_and_rollback():
    r = flavor_properties(flavor="crm 8x32", vcpus=32, numa_nodes=2, threads=2)
    assert r.text == (
        "openstack flavor set 'crm 8x32' --property hw:numa_nodes=2 --property hw:cpu_sockets=2 \\\n"
        "  --property hw:cpu_cores=8 --property hw:cpu_threads=2 --property hw:cpu_policy=dedicated"
    )
    assert r.rollback == (
        "openstack flavor unset 'crm 8x32' --property hw:numa_nodes --property hw:cpu_sockets "
        "--property hw:cpu_cores --property hw:cpu_threads --property hw:cpu_policy"
    )
    bad = flavor_properties(flavor="f", vcpus=6, numa_nodes=4)
    assert not bad.ok and "cannot be split" in bad.reason


def test_nova_conf_and_rollback():
    r = nova_cpu_mode(previous_mode="custom")
    assert r.text == "[libvirt]\ncpu_mode = host-passthrough" and r.path == "/etc/nova/nova.conf"
    assert r.rollback.startswith("crudini --set /etc/nova/nova.conf libvirt cpu_mode custom\n")
    assert r.measures == ("cpu-mode-host-passthrough",)


def test_systemd_dropin_and_rollback():
    r = numactl_dropin(unit="mysqld.service", binary="/usr/libexec/mysqld", args="--basedir=/usr")
    assert r.path == "/etc/systemd/system/mysqld.service.d/numa-interleave.conf"
    assert r.text.splitlines() == [
        "[Service]",
        "ExecStart=",
        "ExecStart=/usr/bin/numactl --interleave=all /usr/libexec/mysqld --basedir=/usr",
    ]
    assert r.rollback.splitlines() == [
        "rm -f /etc/systemd/system/mysqld.service.d/numa-interleave.conf",
        "systemctl daemon-reload",
        "systemctl restart mysqld.service",
    ]
    assert r.disruption == "service restart"
    with pytest.raises(ValueError):
        numactl_dropin(unit="x.service; reboot")


def test_mycnf_and_rollback():
    r = mycnf_lines(
        settings={"innodb_numa_interleave": False, "large_pages": True},
        previous={"innodb_numa_interleave": "ON"},
    )
    assert r.text == "[mysqld]\ninnodb_numa_interleave = OFF\nlarge_pages = ON"
    assert r.rollback.endswith("# previous values: innodb_numa_interleave = ON")
    assert set(r.measures) == {"disable-numa-interleave", "mysql-large-pages"}
    assert any("vm.nr_hugepages" in n for n in r.notes)


def test_oceanbase_statements_and_rollback():
    r = oceanbase_parameters(parameters={"cpu_quota_concurrency": 2}, previous={"cpu_quota_concurrency": "4"})
    assert r.text == "ALTER SYSTEM SET cpu_quota_concurrency = 2;"
    assert r.rollback == "ALTER SYSTEM SET cpu_quota_concurrency = '4';"
    odp = oceanbase_parameters(
        parameters={"server_routing_mode": "oceanbase"},
        previous={"server_routing_mode": "random"},
        proxy=True,
    )
    assert odp.text == "ALTER PROXYCONFIG SET server_routing_mode = 'oceanbase';"
    assert odp.rollback == "ALTER PROXYCONFIG SET server_routing_mode = 'random';"
    quoted = oceanbase_parameters(parameters={"x": "a'b"})
    assert quoted.text == "ALTER SYSTEM SET x = 'a''b';" and "previous value unknown" in quoted.rollback
    assert not oceanbase_parameters(parameters={}).ok


def test_tc_netem_removal_and_rollback():
    r = remove_netem(device="ens3", qdisc_line="qdisc netem 8001: root refcnt 2 limit 1000 delay 1ms")
    assert r.text == "tc qdisc del dev ens3 root"
    assert r.rollback == "tc qdisc add dev ens3 root netem limit 1000 delay 1ms"
    with pytest.raises(ValueError):
        remove_netem(device="eth0 root; reboot")


def test_irq_and_rps_affinity_and_rollback():
    r = irq_affinity(irqs=[120, 121, 122], cpus=[0, 1, 40], device="eth1", rx_queues=2)
    assert r.text.splitlines() == [
        "systemctl stop irqbalance",
        "echo 1 > /proc/irq/120/smp_affinity",
        "echo 2 > /proc/irq/121/smp_affinity",
        "echo 100,00000000 > /proc/irq/122/smp_affinity",
        "echo 100,00000003 > /sys/class/net/eth1/queues/rx-0/rps_cpus",
        "echo 100,00000003 > /sys/class/net/eth1/queues/rx-1/rps_cpus",
    ]
    assert r.rollback.splitlines()[-1] == "systemctl start irqbalance"
    assert "echo 0 > /sys/class/net/eth1/queues/rx-1/rps_cpus" in r.rollback
    assert cpu_mask(range(64)) == "ffffffff,ffffffff"


def test_every_mapped_measure_exists_in_the_catalogue():
    import yaml

    from tests.conftest import ROOT

    slugs = {m["slug"] for m in yaml.safe_load((ROOT / "kb" / "data" / "measures.yaml").read_text())}
    assert set(REMEDIES_BY_MEASURE) <= slugs


def test_dispatcher_fills_values_from_facts():
    host = HostFacts(
        sysctl=Sysctl(values={"kernel.numa_balancing": "0"}),
        tc=TcQdiscs(
            qdiscs=[Qdisc(kind="netem", device="eth0", raw="qdisc netem 8001: root refcnt 2 delay 1ms")]
        ),
        interrupts=Interrupts(
            cpus=["CPU0", "CPU1"], descriptions={"45": "PCI-MSI eth0-TxRx-0", "0": "timer"}
        ),
        oceanbase=OceanBaseFacts(
            parameters={"cpu_quota_concurrency": "4", "net_thread_count": "32", "cpu_count": "16"},
            proxy_config={"server_routing_mode": "random"},
        ),
        database=DatabaseFacts(variables={"large_pages": "OFF"}),
    )
    rules = {
        "numa.balancing_disabled",
        "net.netem_delay",
        "net.softirq_hotspot",
        "oceanbase.cpu_quota_concurrency_high",
        "oceanbase.net_thread_count_high",
        "oceanbase.proxy_routing_not_default",
        "mysql.large_pages_off",
        "mysql.numa_interleave_unavailable",
    }
    by_key = {r.key: r for r in remedies_for_host(host=host, rules=rules)}
    assert by_key["sysctl:90-numa"].rollback.endswith("sysctl -w kernel.numa_balancing=0")
    assert by_key["tc:eth0"].rollback == "tc qdisc add dev eth0 root netem delay 1ms"
    assert "/proc/irq/45/smp_affinity" in by_key["irq:eth0"].text
    assert by_key["oceanbase"].text.splitlines() == [
        "ALTER SYSTEM SET cpu_quota_concurrency = 2;",
        "ALTER SYSTEM SET net_thread_count = 6;",
    ]
    assert by_key["odp"].rollback == "ALTER PROXYCONFIG SET server_routing_mode = 'random';"
    assert by_key["mycnf"].text == "[mysqld]\nlarge_pages = ON"
    assert by_key["systemd:mariadb.service"].ok


@pytest.mark.parametrize(
    "module", ["base", "topology", "xmledit", "libvirt", "host", "openstack", "database", "__init__"]
)
def test_docstring_samples(module):
    name = "engine.remedies" if module == "__init__" else f"engine.remedies.{module}"
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted and not result.failed
