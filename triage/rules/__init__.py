"""The rule catalogue.

A rule is a small function registered with :func:`rule`. It takes a
:class:`RuleContext` (the facts of every host analysed together) and returns
zero or more :class:`Finding`. Rules never read files or the database.

IDs are a public contract (API, cases, tests): never rename one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from collectors.facts import HostFacts, SnapshotFacts

SEVERITIES = ("critical", "warning", "info")


@dataclass
class Evidence:
    fact: str  # dotted path into the facts, e.g. "numa.nodes.0.meminfo.MemUsed"
    value: Any
    artifact: str = ""
    line: int | None = None
    host: str = ""


@dataclass
class Finding:
    rule: str
    severity: str
    title: str
    explanation: str
    title_zh: str = ""
    explanation_zh: str = ""
    evidence: list[Evidence] = field(default_factory=list)
    measures: list[str] = field(default_factory=list)
    host: str = ""
    # severity weight x how far past its threshold (set by the engine); findings
    # are ordered by it, largest first
    impact: float = 0.0
    # how far past its threshold the finding is: observed / threshold (>= 1); 1 for
    # rules whose condition is a yes/no fact. The engine turns it into ``impact``.
    past: float = 1.0


@dataclass
class RuleContext:
    snapshot: SnapshotFacts

    @property
    def hosts(self) -> list[HostFacts]:
        return self.snapshot.hosts

    def physical_hosts(self) -> list[HostFacts]:
        return self.snapshot.physical_hosts()

    def guests(self) -> list[HostFacts]:
        return self.snapshot.guests()


@dataclass(frozen=True)
class RuleSpec:
    id: str
    func: Callable[[RuleContext], Iterable[Finding]]
    severity: str
    title: str
    title_zh: str
    condition: str  # one sentence: when it fires (docs/rules.md)
    # names of facts it needs; see triage.engine.FACT_CHECKS for their meaning
    requires: tuple[str, ...]
    measures: tuple[str, ...]
    seeds: tuple[str, ...]  # founding case slugs
    thresholds: dict[str, Any]
    references: tuple[str, ...] = ()
    # "any": needs one of ``requires``; "all": needs every one
    requires_mode: str = "all"
    # why the thresholds sit where they do: the magnitude at which it matters (docs/rules.md)
    rationale: str = ""
    # (ctx, host) -> the facts (keys of triage.engine.HOST_FACT_CHECKS) this host needs
    # for a verdict when the rule is relevant to it, else (): a relevant host that lacks
    # one of them is listed under ``not_checked`` with the commands that produce it
    relevant: Callable[[RuleContext, HostFacts], tuple[str, ...]] | None = None


REGISTRY: dict[str, RuleSpec] = {}


def rule(
    id: str,
    *,
    severity: str,
    title: str,
    title_zh: str,
    condition: str,
    requires: tuple[str, ...],
    measures: tuple[str, ...] = (),
    seeds: tuple[str, ...] = (),
    thresholds: dict[str, Any] | None = None,
    references: tuple[str, ...] = (),
    requires_mode: str = "all",
    rationale: str = "",
    relevant: Callable[[RuleContext, HostFacts], tuple[str, ...]] | None = None,
):
    """Register a rule function under a stable ``id``."""
    if severity not in SEVERITIES:
        raise ValueError(f"bad severity {severity!r}")

    def decorator(func):
        if id in REGISTRY and REGISTRY[id].func is not func:
            raise RuntimeError(f"rule {id!r} registered twice")
        REGISTRY[id] = RuleSpec(
            id=id,
            func=func,
            severity=severity,
            title=title,
            title_zh=title_zh,
            condition=condition,
            requires=requires,
            measures=measures,
            seeds=seeds,
            thresholds=dict(thresholds or {}),
            references=references,
            requires_mode=requires_mode,
            rationale=rationale,
            relevant=relevant,
        )
        return func

    return decorator


def load_all() -> dict[str, RuleSpec]:
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    return REGISTRY


# ----------------------------------------------------------------------------
# Helpers shared by the rule modules. They only read facts; none of them
# raises on unknown values (unknown is "cannot tell", never "zero").


def host_name(host: HostFacts) -> str:
    if host.label or host.hostname:
        return host.label or host.hostname
    # a transcript without hostnames in its prompts: name it after its file
    for entry in host.artifacts:
        name = str(entry.get("name") or "").rsplit("/", 1)[-1].split(":", 1)[0]
        if name:
            return name.rsplit(".", 1)[0] if "." in name else name
    return "host"


def line_of(parsed: Any, *keys: str) -> int | None:
    """The line a fact was read from: the first of ``keys`` found in
    ``parsed.lines``, else the artifact's own line."""
    if parsed is None:
        return None
    lines = getattr(parsed, "lines", None) or {}
    for key in keys:
        if key in lines:
            return lines[key]
    source = getattr(parsed, "source", None)
    return source.line if source is not None else None


def evidence(
    host: HostFacts, fact: str, value: Any, parsed: Any = None, *keys: str, line: int | None = None
) -> Evidence:
    """Evidence citing ``parsed``'s artifact and the line of ``keys``."""
    source = getattr(parsed, "source", None)
    artifact = source.artifact if source is not None else ""
    if line is None:
        line = line_of(parsed, *keys)
    return Evidence(
        fact=fact,
        value=value,
        artifact=_covering_artifact(host, artifact, line),
        line=line,
        host=host_name(host),
    )


def _covering_artifact(host: HostFacts, artifact: str, line: int | None) -> str:
    """Facts merged from several blocks of one transcript (database variables
    and error log, say) keep the first block as their source; the block that
    holds ``line`` is the precise artifact."""
    if not line or not artifact.startswith("transcript:"):
        return artifact
    # A host read from several files (an upload and evidence added later):
    # line numbers are those of the file the cited block came from.
    files = {artifact_file(e) for e in host.artifacts if e.get("source") == artifact}
    for entry in host.artifacts:
        start, count = entry.get("start_line"), entry.get("lines")
        if files and artifact_file(entry) not in files:
            continue
        if start and count and start <= line < start + count and entry.get("source"):
            return entry["source"]
    return artifact


def artifact_file(entry: dict) -> str:
    """The file of a transcript block named ``<file>:<first line>``."""
    head, sep, tail = str(entry.get("name") or "").rpartition(":")
    return head if sep and tail.isdigit() else str(entry.get("name") or "")


def finding(spec_id: str, host: HostFacts | None, explanation: str, explanation_zh: str, **kw) -> Finding:
    """A finding of a registered rule, with title, severity and measures from
    its registration unless overridden."""
    spec = REGISTRY[spec_id]
    return Finding(
        rule=spec_id,
        severity=kw.pop("severity", spec.severity),
        title=kw.pop("title", spec.title),
        title_zh=kw.pop("title_zh", spec.title_zh),
        explanation=explanation,
        explanation_zh=explanation_zh,
        evidence=kw.pop("evidence", []),
        measures=list(kw.pop("measures", spec.measures)),
        host=host_name(host) if host is not None else kw.pop("host_label", ""),
        past=max(1.0, float(kw.pop("past", 1.0) or 1.0)),
    )


def as_bool(value: Any) -> bool | None:
    """MySQL/sysctl style booleans; ``None`` when unknown or not boolean."""
    if value is None:
        return None
    text = str(value).strip().strip("'\"").upper()
    if text in ("ON", "1", "YES", "TRUE", "ENABLED"):
        return True
    if text in ("OFF", "0", "NO", "FALSE", "DISABLED"):
        return False
    return None


def as_int(value: Any) -> int | None:
    if value is None:
        return None
    try:
        return int(str(value).strip().split()[0])
    except (ValueError, IndexError):
        return None


_SIZE_UNITS = {"": 1, "B": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


def size_bytes(value: Any) -> int | None:
    """``"432G"``, ``"463856467968"``, ``"8M"`` -> bytes."""
    if value is None:
        return None
    text = str(value).strip().upper().rstrip("B").replace("I", "")
    if not text:
        return None
    unit = text[-1] if text[-1] in _SIZE_UNITS else ""
    number = text[:-1] if unit else text
    try:
        return int(float(number) * _SIZE_UNITS[unit])
    except ValueError:
        return None


def cpu_node_map(host: HostFacts) -> dict[int, int]:
    """Host CPU id -> NUMA node id, from numactl/sysfs, lscpu or ``virsh capabilities``."""
    out: dict[int, int] = {}
    if host.numa and host.numa.nodes:
        for node_id, node in host.numa.nodes.items():
            for cpu in node.cpus:
                out[cpu] = node_id
    if not out and host.cpu and host.cpu.numa_node_cpus:
        for node_id, cpus in host.cpu.numa_node_cpus.items():
            for cpu in cpus:
                out[cpu] = node_id
    if not out and host.capabilities and host.capabilities.cells:
        for node_id, cell in host.capabilities.cells.items():
            for cpu in cell.get("cpus") or []:
                out[cpu] = node_id
    return out


def node_cpu_counts(host: HostFacts) -> dict[int, int]:
    counts: dict[int, int] = {}
    for node in cpu_node_map(host).values():
        counts[node] = counts.get(node, 0) + 1
    return counts


def node_mem_totals_kb(host: HostFacts) -> dict[int, int]:
    """Memory of each host NUMA node, from numactl/sysfs, else ``virsh capabilities``."""
    out = {}
    for node_id, node in (host.numa.nodes if host.numa else {}).items():
        total = node.mem_total_kb()
        if total:
            out[node_id] = total
    if not out and host.capabilities and host.capabilities.cells:
        for node_id, cell in host.capabilities.cells.items():
            if cell.get("memory_kb"):
                out[node_id] = cell["memory_kb"]
    return out


def hypervisor_hosts(ctx: RuleContext) -> list[HostFacts]:
    """Hosts that run guests (domain XMLs or a virsh list), else the physical
    multi-node hosts: the candidates for "the host of this guest"."""
    with_domains = [h for h in ctx.hosts if host_domains(h) or running_domain_names(h)]
    if with_domains:
        return with_domains
    return [h for h in ctx.physical_hosts() if (h.numa_node_count() or 0) >= 2]


def host_of_guest(ctx: RuleContext, guest: HostFacts) -> HostFacts | None:
    """The hypervisor host of ``guest`` when the snapshot makes it unambiguous."""
    candidates = [h for h in hypervisor_hosts(ctx) if h is not guest]
    if len(candidates) == 1:
        return candidates[0]
    matched = [h for h in candidates if domain_of_guest(ctx, guest, hosts=[h]) is not None]
    return matched[0] if len(matched) == 1 else None


def domain_of_guest(ctx: RuleContext, guest: HostFacts, hosts: list[HostFacts] | None = None):
    """The libvirt domain that is ``guest``: by name/hostname, else the only
    domain with the guest's vCPU count."""
    hosts = hosts if hosts is not None else [h for h in ctx.hosts if h is not guest]
    domains = [d for h in hosts for d in host_domains(h)]
    names = {n.lower() for n in (guest.hostname, guest.label) if n}
    by_name = [d for d in domains if (d.name and d.name.lower() in names) or (d.uuid and d.uuid in names)]
    if len(by_name) == 1:
        return by_name[0]
    cpus = guest.logical_cpus()
    if cpus:
        by_size = [d for d in domains if (d.vcpu_current or d.vcpus) == cpus]
        if len(by_size) == 1:
            return by_size[0]
    return None


def domain_host(ctx: RuleContext, domain) -> HostFacts | None:
    for h in ctx.hosts:
        if any(d is domain for d in h.domains):
            return h
    return None


def domain_label(domain) -> str:
    return domain.name or domain.uuid or (domain.source.artifact if domain.source else "") or "domain"


def domain_vcpus(domain) -> int:
    return domain.vcpu_current or domain.vcpus or 0


def domain_pinned_cpus(domain) -> set[int]:
    cpus: set[int] = set()
    for pins in domain.vcpupin.values():
        cpus.update(pins)
    if not cpus and domain.vcpu_cpuset:
        cpus.update(domain.vcpu_cpuset)
    return cpus


def domain_is_pinned(domain) -> bool:
    """Every vCPU pinned (``vcpupin`` each, a ``<vcpu cpuset>``, or numad
    placement ``auto``)."""
    if domain.vcpu_cpuset or domain.vcpu_placement == "auto":
        return True
    n = domain_vcpus(domain)
    return bool(domain.vcpupin) and all(v in domain.vcpupin for v in range(n))


def domain_memory_bound(domain) -> bool:
    return bool(
        domain.numatune_memory_nodeset or domain.memnodes or domain.numatune_memory_placement == "auto"
    )


def domain_host_nodes(domain, host: HostFacts | None) -> set[int] | None:
    """Host NUMA nodes the domain's pinned vCPUs run on (None: cannot tell)."""
    if host is None:
        return None
    cpu_map = cpu_node_map(host)
    pinned = domain_pinned_cpus(domain)
    if not pinned or not cpu_map:
        return None
    nodes = {cpu_map[c] for c in pinned if c in cpu_map}
    return nodes or None


def guest_bound_to_one_node(ctx: RuleContext, guest: HostFacts) -> bool:
    """The guest's domain is pinned within one host node (interleaving or
    balancing inside it would gain nothing)."""
    domain = domain_of_guest(ctx, guest)
    if domain is None:
        return False
    nodes = domain_host_nodes(domain, domain_host(ctx, domain))
    return nodes is not None and len(nodes) == 1


def numa_evidence(host: HostFacts, fact: str, value: Any, part: str, *keys: str) -> Evidence:
    """Evidence for a NUMA fact, citing the artifact it was merged from
    (``part``: "NumactlHardware", "NodeMeminfo", "Numastat", "Zoneinfo")."""
    numa = host.numa
    sources = getattr(numa, "sources", None) or {}
    source = sources.get(part) or (numa.source if numa is not None else None)
    line = None
    if numa is not None:
        for key in keys:
            if key in numa.lines:
                line = numa.lines[key]
                break
    if line is None and source is not None:
        line = source.line
    artifact = _covering_artifact(host, source.artifact if source else "", line)
    return Evidence(fact=fact, value=value, artifact=artifact, line=line, host=host_name(host))


def artifact_evidence(host: HostFacts, kind: str, fact: str, value: Any, line: int | None) -> Evidence:
    """Evidence for a fact that carries only a line (benchmarks): the artifact
    is the first one of ``kind`` the host was built from."""
    artifact = next(
        (a.get("source") or a.get("name", "") for a in host.artifacts if a.get("kind") == kind), ""
    )
    return Evidence(fact=fact, value=value, artifact=artifact, line=line, host=host_name(host))


# ----------------------------------------------------------------------------
# What a host is (shared by the rules and their ``relevant`` declarations).

# libvirt's test driver (``virsh -c test:///default``) ships a fake running domain
# named "test" with this UUID; domains read through a test:/// connection are not
# guests of the host.
TEST_DRIVER_UUID = "6695eb01-f6a4-8304-79aa-97f2502e193f"


def _from_test_driver(parsed: Any) -> bool:
    source = getattr(parsed, "source", None)
    return bool(source is not None and "test:///" in (source.artifact or ""))


def is_test_driver_domain(domain) -> bool:
    return (
        domain.domain_type == "test"
        or (domain.uuid or "").lower() == TEST_DRIVER_UUID
        or _from_test_driver(domain)
    )


def host_domains(host: HostFacts) -> list:
    """The host's libvirt domains that are real guests (the test driver's are not)."""
    return [d for d in host.domains if not is_test_driver_domain(d)]


def running_domain_names(host: HostFacts) -> list[str]:
    """Names of running domains from ``virsh list`` (not a test:/// connection's)."""
    if host.virsh_list is None or _from_test_driver(host.virsh_list):
        return []
    fake = {d.name for d in host.domains if is_test_driver_domain(d) and d.name}
    return [s.name for s in host.virsh_list.running() if s.name not in fake]


# The hypervisor's own processes in a process list: QEMU (one process per guest,
# its vCPU threads show as "CPU n/KVM") and the kernel's KVM/vhost workers.
_QEMU_PROCESS = re.compile(r"(^|/)(qemu(-kvm|-system-\S+)?|kvm(-\S+)?|vhost-\d+|CPU \d+/KVM)(\s|$)", re.I)
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
    running = f"{version.hypervisor or ''} {version.hypervisor_version or ''}".upper()
    return "QEMU" in running or "KVM" in running


def db_pool_bytes(host: HostFacts) -> int | None:
    """The database's buffer pool in bytes (None: no database or unknown)."""
    if host.database is None:
        return None
    return size_bytes(host.database.variables.get("innodb_buffer_pool_size"))


def host_ram_kb(host: HostFacts) -> int | None:
    """Total RAM of the host in kB: /proc/meminfo, else the nodes, else top."""
    if host.meminfo and host.meminfo.values.get("MemTotal"):
        return host.meminfo.values["MemTotal"]
    totals = node_mem_totals_kb(host)
    if totals:
        return sum(totals.values())
    if host.cpu_usage and host.cpu_usage.mem_total_kb:
        return host.cpu_usage.mem_total_kb
    return None


def is_multinode(host: HostFacts) -> bool:
    return (host.numa_node_count() or 0) >= 2
