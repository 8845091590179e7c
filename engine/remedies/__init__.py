"""Remediation generators: from facts to the exact change, with its rollback.

Pure functions, no database: each generator takes plain values (or a guest's
domain XML and its host's facts) and returns a :class:`Remedy` (text to
apply, rollback, disruption, the measures and rules it serves) or a
:class:`NoRemedy` with the reason.

:data:`RECIPES` is the one table: which fired rules call for which change,
the measures of ``kb/data/measures.yaml`` it fills in and how it is built;
:data:`REMEDIES_BY_MEASURE` (measure -> generator) is read from it, and
:func:`remedies_for_host` runs the recipes that the findings of one host call
for, with values taken from its facts::

    >>> from collectors.facts import HostFacts, Sysctl
    >>> host = HostFacts(sysctl=Sysctl(values={"vm.zone_reclaim_mode": "0"}))
    >>> [r.path for r in remedies_for_host(host=host, rules={"numa.local_node_pagecache_pressure"})]
    ['/etc/sysctl.d/90-numa.conf']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.utils.translation import gettext as _

from collectors.derived.database import observer_cpus
from collectors.derived.workload import DATABASE_WORKLOADS, workloads
from collectors.facts import HostFacts
from engine.remedies.base import NoRemedy, Remedy, RemedyResult
from engine.remedies.database import (
    mycnf_for,
    mycnf_lines,
    numactl_dropin,
    numactl_dropin_for,
    oceanbase_parameters,
)
from engine.remedies.host import irq_affinity, remove_netem, sysctl_file
from engine.remedies.libvirt import MEASURES as DOMAIN_MEASURES
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

_NIC_IRQ = re.compile(r"\b((?:eth|ens|enp|eno|bond|p\d+p)\w*|virtio\d+-input|mlx\w*)", re.IGNORECASE)


def domain_remedies(*, host: HostFacts) -> list[RemedyResult]:
    """One result per domain XML of ``host`` (the guest's domain patch)."""
    return [domain_remedy(domain_xml=d.raw_xml, host=host) for d in host.domains if d.raw_xml]


def _ob_cpus(host: HostFacts) -> int:
    return observer_cpus(host)[0] or SMALL_OBSERVER_CPUS


def _domain_patches(host: HostFacts, rules: set[str]) -> list[RemedyResult]:
    return domain_remedies(host=host)


def _numa_sysctl(host: HostFacts, rules: set[str]) -> list[RemedyResult]:
    wanted = {
        "numa.local_node_pagecache_pressure": ("vm.zone_reclaim_mode", 1),
        "numa.balancing_disabled": ("kernel.numa_balancing", 1),
    }
    if workloads(host) & DATABASE_WORKLOADS:
        # a database host: zone reclaim on is the cause there, not the cure (the
        # finding asks to place the database's memory instead)
        wanted.pop("numa.local_node_pagecache_pressure")
    settings: dict[str, str | int] = dict(value for rule, value in wanted.items() if rule in rules)
    if not settings:
        return []
    return [sysctl_file(settings=settings, previous={k: host.sysctl_value(k) for k in settings})]


def _netem_removals(host: HostFacts, rules: set[str]) -> list[RemedyResult]:
    if not host.tc:
        return []
    return [
        remove_netem(device=q.device, qdisc_line=q.raw)
        for q in host.tc.qdiscs
        if q.kind == "netem" and q.device
    ]


def _nic_irqs(host: HostFacts) -> list[tuple[int, str]]:
    """(IRQ, device) of the NIC queues /proc/interrupts names."""
    if not host.interrupts:
        return []
    return [
        (int(irq), m.group(1))
        for irq, desc in host.interrupts.descriptions.items()
        if irq.isdigit() and (m := _NIC_IRQ.search(desc))
    ]


def _irq_spread(host: HostFacts, rules: set[str]) -> list[RemedyResult]:
    irqs = _nic_irqs(host)
    cpus = list(range(host.logical_cpus() or (len(host.interrupts.cpus) if host.interrupts else 0)))
    if irqs and cpus:
        return [irq_affinity(irqs=[i for i, _ in irqs], cpus=cpus, device=irqs[0][1].split("-")[0])]
    reason = _("the NIC interrupt numbers are unknown: /proc/interrupts is needed to spread them")
    return [NoRemedy(key="irq", reason=reason)]


def _observer_parameters(host: HostFacts, rules: set[str]) -> list[RemedyResult]:
    params: dict[str, str | int] = {}
    if "oceanbase.cpu_quota_concurrency_high" in rules:
        params["cpu_quota_concurrency"] = 2
    if "oceanbase.net_thread_count_high" in rules:
        # about a third of the observer's CPUs: 6 on the 16-CPU observers of seed 004
        params["net_thread_count"] = max(1, _ob_cpus(host) * 3 // 8)
    ob = host.oceanbase.parameters if host.oceanbase else {}
    return [oceanbase_parameters(parameters=params, previous={k: ob.get(k) for k in params})]


def _proxy_routing(host: HostFacts, rules: set[str]) -> list[RemedyResult]:
    proxy = host.oceanbase.proxy_config if host.oceanbase else {}
    return [
        oceanbase_parameters(
            parameters={"server_routing_mode": "oceanbase"},
            previous={"server_routing_mode": proxy.get("server_routing_mode")},
            proxy=True,
        )
    ]


def _numactl_dropin(host: HostFacts, rules: set[str]) -> list[RemedyResult]:
    return [numactl_dropin_for(host)]


def _mycnf(host: HostFacts, rules: set[str]) -> list[RemedyResult]:
    cnf: dict[str, str | int | bool] = {}
    if "mysql.buffer_pool_not_persisted" in rules:
        cnf.update(innodb_buffer_pool_dump_at_shutdown=True, innodb_buffer_pool_load_at_startup=True)
    if "mysql.large_pages_off" in rules:
        cnf["large_pages"] = True
    variables = host.database.variables if host.database else {}
    return [mycnf_for(host, settings=cnf, previous={k: variables.get(k) for k in cnf})]


def _nova_cpu_mode(host: HostFacts, rules: set[str]) -> list[RemedyResult]:
    return [] if host.domains else [nova_cpu_mode()]


def _flavor(host: HostFacts, rules: set[str]) -> list[RemedyResult]:
    if host.domains or not host.is_guest:
        return []
    vcpus = host.logical_cpus() or 0
    return [flavor_properties(flavor="<flavor>", vcpus=vcpus, numa_nodes=2 if vcpus >= 2 else 1)]


@dataclass(frozen=True)
class _Recipe:
    """Which fired rules call for a change, the measures of
    ``kb/data/measures.yaml`` it fills in (with ``generator``), and how it is
    built from the host's facts."""

    rules: frozenset[str]
    measures: tuple[str, ...]
    generator: Callable[..., RemedyResult]
    build: Callable[[HostFacts, set[str]], list[RemedyResult]]


def _recipe(
    rules: Iterable[str],
    measures: Iterable[str],
    generator: Callable[..., RemedyResult],
    build: Callable[[HostFacts, set[str]], list[RemedyResult]],
) -> _Recipe:
    return _Recipe(frozenset(rules), tuple(measures), generator, build)


# In the order the remedies are listed.
RECIPES: tuple[_Recipe, ...] = (
    # the domain patch's measures (cpu-mode-host-passthrough's generator is the
    # Nova one below, for a guest without its domain XML)
    _recipe(DOMAIN_RULES, (*DOMAIN_MEASURES, "static-hugepages"), domain_remedy, _domain_patches),
    _recipe(
        ("numa.local_node_pagecache_pressure", "numa.balancing_disabled"),
        ("zone-reclaim-mode", "enable-numa-balancing"),
        sysctl_file,
        _numa_sysctl,
    ),
    _recipe(("net.netem_delay",), ("remove-netem",), remove_netem, _netem_removals),
    _recipe(("net.softirq_hotspot",), ("irq-softirq-affinity",), irq_affinity, _irq_spread),
    _recipe(
        ("oceanbase.cpu_quota_concurrency_high", "oceanbase.net_thread_count_high"),
        ("tune-cpu-quota-concurrency", "tune-net-thread-count"),
        oceanbase_parameters,
        _observer_parameters,
    ),
    _recipe(
        ("oceanbase.proxy_routing_not_default",),
        ("odp-routing-mode-oceanbase",),
        oceanbase_parameters,
        _proxy_routing,
    ),
    _recipe(
        ("mysql.numa_interleave_unavailable",),
        ("mariadb-numactl-interleave",),
        numactl_dropin,
        _numactl_dropin,
    ),
    _recipe(
        ("mysql.buffer_pool_not_persisted", "mysql.large_pages_off"),
        ("buffer-pool-dump-load", "mysql-large-pages", "disable-numa-interleave"),
        mycnf_lines,
        _mycnf,
    ),
    _recipe(("kvm.cpu_model_hides_cache",), ("cpu-mode-host-passthrough",), nova_cpu_mode, _nova_cpu_mode),
    _recipe(
        ("kvm.flat_socket_topology", "kvm.guest_numa_missing"),
        ("flavor-numa-topology",),
        flavor_properties,
        _flavor,
    ),
)

# measure slug -> the generator that fills it in
REMEDIES_BY_MEASURE: dict[str, Callable[..., RemedyResult]] = {
    measure: recipe.generator for recipe in RECIPES for measure in recipe.measures
}


def remedies_for_host(*, host: HostFacts, rules: Iterable[str]) -> list[RemedyResult]:
    """The generators the fired ``rules`` of ``host`` call for (:data:`RECIPES`),
    filled from its facts."""
    fired = set(rules)
    return [remedy for recipe in RECIPES if fired & recipe.rules for remedy in recipe.build(host, fired)]
