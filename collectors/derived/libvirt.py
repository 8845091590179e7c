"""What a host's libvirt and process facts say: its real guests (not the
test driver's), their vCPUs and pins, whether it runs KVM."""

from __future__ import annotations

import heapq
import itertools
import re
from typing import Any

from collectors.facts import Domain, HostFacts, VirshVersion
from collectors.parsers.qemu_cmdline import QEMU_BINARY


def domain_label(domain: Domain) -> str:
    return domain.name or domain.uuid or (domain.source.artifact if domain.source else "") or "domain"


def domain_vcpus(domain: Domain) -> int:
    return domain.vcpu_current or domain.vcpus or 0


def domain_pinned_cpus(domain: Domain) -> set[int]:
    cpus: set[int] = set()
    for pins in domain.vcpupin.values():
        cpus.update(pins)
    if not cpus and domain.vcpu_cpuset:
        cpus.update(domain.vcpu_cpuset)
    return cpus


def domain_is_pinned(domain: Domain) -> bool:
    """Every vCPU pinned (``vcpupin`` each, a ``<vcpu cpuset>``, or numad
    placement ``auto``)."""
    if domain.vcpu_cpuset or domain.vcpu_placement == "auto":
        return True
    n = domain_vcpus(domain)
    return bool(domain.vcpupin) and all(v in domain.vcpupin for v in range(n))


def domain_memory_bound(domain: Domain) -> bool:
    return bool(
        domain.numatune_memory_nodeset or domain.memnodes or domain.numatune_memory_placement == "auto"
    )


# libvirt's test driver (``virsh -c test:///default``) ships a fake running domain
# named "test" with this UUID; domains read through a test:/// connection are not
# guests of the host.
TEST_DRIVER_UUID = "6695eb01-f6a4-8304-79aa-97f2502e193f"


def _from_test_driver(parsed: Any) -> bool:
    source = getattr(parsed, "source", None)
    return bool(source is not None and "test:///" in (source.artifact or ""))


def is_test_driver_domain(domain: Domain) -> bool:
    return (
        domain.domain_type == "test"
        or (domain.uuid or "").lower() == TEST_DRIVER_UUID
        or _from_test_driver(domain)
    )


def host_domains(host: HostFacts) -> list[Domain]:
    """The host's libvirt domains that are real guests (the test driver's are not)."""
    return [d for d in host.domains if not is_test_driver_domain(d)]


def running_domain_names(host: HostFacts) -> list[str]:
    """Names of running domains from ``virsh list`` (not a test:/// connection's)."""
    if host.virsh_list is None or _from_test_driver(host.virsh_list):
        return []
    fake = _test_driver_names(host)
    return [s.name for s in host.virsh_list.running() if s.name not in fake]


def _test_driver_names(host: HostFacts) -> set[str]:
    """The names of the host's domains that the libvirt test driver made up."""
    return {d.name for d in host.domains if is_test_driver_domain(d) and d.name}


# The hypervisor's own processes in a process list: QEMU (one process per guest,
# its vCPU threads show as "CPU n/KVM") and the kernel's KVM/vhost workers.
# The binaries are collectors.parsers.qemu_cmdline's, which reads their command lines.
_QEMU_PROCESS = re.compile(rf"(^|/)({QEMU_BINARY}|qemu|kvm(-\S+)?|vhost-\d+|CPU \d+/KVM)(\s|$)", re.I)


# The commands that collect a snapshot show up in their own output (top lists
# itself, sosreport runs everything); they are not load of the host.
_COLLECTOR_PROCESS = re.compile(
    r"^(\S*/)?(top|htop|ps|sos|sosreport|sos-collector|collect\.sh|mysql|mysqladmin|mariadb|virsh|numastat|"
    r"numactl|lscpu|dmidecode|sar|sadc|mpstat|iostat|pidstat|vmstat|perf|tc|ping|sysctl|timeout|sudo)"
    r"(\+|:|\s|$)",
    re.I,
)


def is_qemu_process(command: str) -> bool:
    return bool(_QEMU_PROCESS.search((command or "").strip()))


def is_collector_process(command: str) -> bool:
    return bool(_COLLECTOR_PROCESS.match((command or "").strip()))


def is_vm_host(host: HostFacts) -> bool:
    """The host runs KVM guests: real domain XMLs, a virsh list with domains, or
    QEMU processes in its process list (not a guest; not the test driver)."""
    if host.is_guest:
        return False
    if host_domains(host) or running_domain_names(host):
        return True
    return any(is_qemu_process(p.command) for p in (host.cpu_usage.processes if host.cpu_usage else []))


def looks_like_kvm_host(host: HostFacts) -> bool:
    """Signs of a hypervisor even without any guest fact: a virsh version that
    reports a running QEMU, or QEMU processes."""
    if is_vm_host(host):
        return True
    version = host.virsh_version
    if version is None or host.is_guest or _from_test_driver(version):
        return False
    return _reports_qemu(version)


def _reports_qemu(version: VirshVersion) -> bool:
    """Whether ``virsh version`` reports a running QEMU or KVM hypervisor."""
    running = f"{version.hypervisor or ''} {version.hypervisor_version or ''}".upper()
    return "QEMU" in running or "KVM" in running


# A guest's "other guests on its CPUs" evidence names this many, then how many more.
SHARING_NAMES_SHOWN = 20


def _cpu_mask(cpus: set[int]) -> int:
    mask = 0
    for cpu in cpus:
        mask |= 1 << cpu
    return mask


def _may_share(mask: int | None, mine: int | None) -> bool:
    """Whether a guest pinned to ``mask`` is not provably pinned apart from one
    pinned to ``mine`` (None: not provably pinned)."""
    return not mine or mask is None or bool(mask & mine)


def _by_name_or_uuid(domains: list[Domain]) -> dict[str, Domain]:
    """Name or UUID -> the first of ``domains`` known by it."""
    by_key: dict[str, Domain] = {}
    for d in domains:
        for key in (d.name, d.uuid):
            if key:
                by_key.setdefault(key, d)
    return by_key


class CpuSharing:
    """Which other guests of a host may run on a guest's CPUs, for every guest
    of the host at once (``kvm.host_contention``): the running ones (by name,
    from ``virsh list``), or without a virsh list the host's other domains,
    unless both guests are pinned to CPUs they do not share. Without a virsh list only
    domains that name themselves (name or UUID) are guests: XML pieces without either
    (a page that splits one guest's dumpxml by its explanations, separate snippets of
    a note) cannot be told apart from the guest itself, and neither side of them counts.

    Each guest's pins are read once, as a bit mask, and the candidates are
    grouped by mask, so one guest's answer costs a test per distinct mask and
    the names it shows, not a test per other guest: thousands of domains in
    one upload stay linear.

    >>> from collectors.facts import Domain
    >>> a = Domain(name="a", vcpus=2, vcpupin={0: [0], 1: [1]})
    >>> b = Domain(name="b", vcpus=2, vcpupin={0: [2], 1: [3]})
    >>> c = Domain(name="c", vcpus=2)
    >>> sharing = CpuSharing([a, b, c], running=[], listed=False)
    >>> sharing.others(a), sharing.others(c)
    ((1, ['c']), (2, ['a', 'b']))
    >>> piece = Domain(vcpus=1)
    >>> CpuSharing([c, piece], running=[], listed=False).others(c)
    (0, [])
    """

    def __init__(self, domains: list[Domain], *, running: list[str], listed: bool) -> None:
        self._pins: dict[int, int | None] = {
            id(d): (_cpu_mask(domain_pinned_cpus(d)) if domain_is_pinned(d) else None) for d in domains
        }
        # the candidates, in order: (name shown, pin mask or None when not provably pinned)
        self._labels: list[str] = []
        self._masks: list[int | None] = []
        self._index_of_domain: dict[int, int] = {}
        self._indexes_of_name: dict[str, list[int]] = {}
        if listed:
            self._add_running(domains, running)
        else:
            self._add_domains(domains)
        self._groups: dict[int | None, list[int]] = {}
        for index, mask in enumerate(self._masks):
            self._groups.setdefault(mask, []).append(index)

    def _add_running(self, domains: list[Domain], running: list[str]) -> None:
        """The candidates are the guests ``virsh list`` shows running, pinned as
        the XML of the same name or UUID says."""
        by_name = _by_name_or_uuid(domains)
        for name in running:
            xml = by_name.get(name)
            self._indexes_of_name.setdefault(name, []).append(len(self._labels))
            self._labels.append(name)
            self._masks.append(self._pins[id(xml)] if xml is not None else None)

    def _add_domains(self, domains: list[Domain]) -> None:
        """Without ``virsh list``, the candidates are the named domain XMLs."""
        for d in domains:
            if not (d.name or d.uuid):
                continue
            self._index_of_domain[id(d)] = len(self._labels)
            self._labels.append(domain_label(d))
            self._masks.append(self._pins[id(d)])

    def _selves(self, d: Domain) -> set[int]:
        """The candidates that are ``d`` itself (the domain, or its name or UUID in virsh list)."""
        if id(d) in self._index_of_domain:
            return {self._index_of_domain[id(d)]}
        return {i for key in (d.name, d.uuid) if key for i in self._indexes_of_name.get(key, [])}

    def _groups_sharing(self, mine: int | None) -> list[list[int]]:
        """The candidates (indexes, by pin mask) that may run on the CPUs of the pin mask ``mine``."""
        return [indexes for mask, indexes in self._groups.items() if _may_share(mask, mine)]

    def others(self, d: Domain, *, shown: int = SHARING_NAMES_SHOWN) -> tuple[int, list[str]]:
        """How many other guests may share ``d``'s CPUs, and the first ``shown`` of their names."""
        if not self._indexes_of_name and not (d.name or d.uuid):
            return 0, []  # an unnamed XML piece: which guest it belongs to is unknown
        mine = self._pins.get(id(d))
        groups = self._groups_sharing(mine)
        selves = {i for i in self._selves(d) if _may_share(self._masks[i], mine)}
        # the first ``shown`` of the others, in the candidates' order
        others = (self._labels[index] for index in heapq.merge(*groups) if index not in selves)
        return sum(len(g) for g in groups) - len(selves), list(itertools.islice(others, shown))
