"""Remediation generators: from facts to the exact change, with its rollback.

Pure functions, no database: each generator takes plain values (or a guest's
domain XML and its host's facts) and returns a :class:`Remedy` (text to
apply, rollback, disruption, the measures and rules it serves) or a
:class:`NoRemedy` with the reason.

:data:`REMEDIES_BY_MEASURE` says which generator fills in which measure of
``kb/data/measures.yaml``; :func:`remedies_for_host` runs the generators that
the findings of one host call for, with values taken from its facts::

    >>> from collectors.facts import HostFacts, Sysctl
    >>> host = HostFacts(sysctl=Sysctl(values={"vm.zone_reclaim_mode": "0"}))
    >>> [r.path for r in remedies_for_host(host=host, rules={"numa.local_node_pagecache_pressure"})]
    ['/etc/sysctl.d/90-numa.conf']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from django.utils.translation import gettext as _

from collectors.derived.database import observer_cpus
from collectors.facts import HostFacts
from engine.remedies.base import NoRemedy, Remedy, RemedyResult
from engine.remedies.database import mycnf_lines, numactl_dropin, oceanbase_parameters
from engine.remedies.host import irq_affinity, remove_netem, sysctl_file
from engine.remedies.libvirt import RULES as DOMAIN_RULES
from engine.remedies.libvirt import domain_remedy
from engine.remedies.openstack import flavor_properties, nova_cpu_mode
from engine.rules.oceanbase import SMALL_OBSERVER_CPUS

__all__ = [
    "REMEDIES_BY_MEASURE",
    "NoRemedy",
    "Remedy",
    "RemedyResult",
    "domain_remedies",
    "remedies_for_host",
]

REMEDIES_BY_MEASURE: dict[str, Callable[..., RemedyResult]] = {
    "disable-cpu-hotplug": domain_remedy,
    "pin-vcpus": domain_remedy,
    "pin-emulator": domain_remedy,
    "pin-iothreads": domain_remedy,
    "guest-numa-topology": domain_remedy,
    "numatune-memory-binding": domain_remedy,
    "static-hugepages": domain_remedy,
    "cpu-mode-host-passthrough": nova_cpu_mode,
    "flavor-numa-topology": flavor_properties,
    "zone-reclaim-mode": sysctl_file,
    "enable-numa-balancing": sysctl_file,
    "mariadb-numactl-interleave": numactl_dropin,
    "disable-numa-interleave": mycnf_lines,
    "buffer-pool-dump-load": mycnf_lines,
    "mysql-large-pages": mycnf_lines,
    "tune-cpu-quota-concurrency": oceanbase_parameters,
    "tune-net-thread-count": oceanbase_parameters,
    "odp-routing-mode-oceanbase": oceanbase_parameters,
    "remove-netem": remove_netem,
    "irq-softirq-affinity": irq_affinity,
}

_NIC_IRQ = re.compile(r"\b((?:eth|ens|enp|eno|bond|p\d+p)\w*|virtio\d+-input|mlx\w*)", re.IGNORECASE)


def domain_remedies(*, host: HostFacts) -> list[RemedyResult]:
    """One result per domain XML of ``host`` (the guest's domain patch)."""
    return [domain_remedy(domain_xml=d.raw_xml, host=host) for d in host.domains if d.raw_xml]


def _ob_cpus(host: HostFacts) -> int:
    return observer_cpus(host)[0] or SMALL_OBSERVER_CPUS


def remedies_for_host(*, host: HostFacts, rules: Iterable[str]) -> list[RemedyResult]:
    """The generators the fired ``rules`` of ``host`` call for, filled from its facts."""
    rules = set(rules)
    out: list[RemedyResult] = []
    if rules & set(DOMAIN_RULES) and host.domains:
        out += domain_remedies(host=host)
    sysctl: dict[str, str | int] = {}
    if "numa.local_node_pagecache_pressure" in rules:
        sysctl["vm.zone_reclaim_mode"] = 1
    if "numa.balancing_disabled" in rules:
        sysctl["kernel.numa_balancing"] = 1
    if sysctl:
        out.append(sysctl_file(settings=sysctl, previous={k: host.sysctl_value(k) for k in sysctl}))
    if "net.netem_delay" in rules and host.tc:
        out += [
            remove_netem(device=q.device, qdisc_line=q.raw)
            for q in host.tc.qdiscs
            if q.kind == "netem" and q.device
        ]
    if "net.softirq_hotspot" in rules:
        irqs = (
            [
                (int(irq), m.group(1))
                for irq, desc in host.interrupts.descriptions.items()
                if irq.isdigit() and (m := _NIC_IRQ.search(desc))
            ]
            if host.interrupts
            else []
        )
        cpus = list(range(host.logical_cpus() or (len(host.interrupts.cpus) if host.interrupts else 0)))
        if irqs and cpus:
            out.append(irq_affinity(irqs=[i for i, _ in irqs], cpus=cpus, device=irqs[0][1].split("-")[0]))
        else:
            out.append(
                NoRemedy(
                    key="irq",
                    reason=_(
                        "the NIC interrupt numbers are unknown: /proc/interrupts is needed to spread them"
                    ),
                )
            )
    params: dict[str, str | int] = {}
    ob = host.oceanbase.parameters if host.oceanbase else {}
    if "oceanbase.cpu_quota_concurrency_high" in rules:
        params["cpu_quota_concurrency"] = 2
    if "oceanbase.net_thread_count_high" in rules:
        # about a third of the observer's CPUs: 6 on the 16-CPU observers of seed 004
        params["net_thread_count"] = max(1, _ob_cpus(host) * 3 // 8)
    if params:
        out.append(oceanbase_parameters(parameters=params, previous={k: ob.get(k) for k in params}))
    if "oceanbase.proxy_routing_not_default" in rules:
        proxy = host.oceanbase.proxy_config if host.oceanbase else {}
        out.append(
            oceanbase_parameters(
                parameters={"server_routing_mode": "oceanbase"},
                previous={"server_routing_mode": proxy.get("server_routing_mode")},
                proxy=True,
            )
        )
    if "mysql.numa_interleave_unavailable" in rules:
        out.append(numactl_dropin())
    cnf: dict[str, str | int | bool] = {}
    if "mysql.buffer_pool_not_persisted" in rules:
        cnf.update(innodb_buffer_pool_dump_at_shutdown=True, innodb_buffer_pool_load_at_startup=True)
    if "mysql.large_pages_off" in rules:
        cnf["large_pages"] = True
    if cnf:
        variables = host.database.variables if host.database else {}
        out.append(mycnf_lines(settings=cnf, previous={k: variables.get(k) for k in cnf}))
    if "kvm.cpu_model_hides_cache" in rules and not host.domains:
        out.append(nova_cpu_mode())
    if rules & {"kvm.flat_socket_topology", "kvm.guest_numa_missing"} and not host.domains and host.is_guest:
        vcpus = host.logical_cpus() or 0
        out.append(flavor_properties(flavor="<flavor>", vcpus=vcpus, numa_nodes=2 if vcpus >= 2 else 1))
    return out
