"""The rule catalogue.

A rule is a small function registered with :func:`rule`. It takes a
:class:`RuleContext` (the facts of every host analysed together) and returns
zero or more :class:`RuleFinding`. Rules never read files or the database.

IDs are a public contract (API, cases, tests): never rename one.
"""

from __future__ import annotations

import importlib
import pkgutil
import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from collectors.derived.citing import artifact_file, host_name, line_of
from collectors.derived.citing import covering_artifact as _covering_artifact
from collectors.derived.database import db_pool_bytes
from collectors.derived.libvirt import (
    TEST_DRIVER_UUID,
    domain_is_pinned,
    domain_label,
    domain_memory_bound,
    domain_pinned_cpus,
    domain_vcpus,
    host_domains,
    is_collector_process,
    is_qemu_process,
    is_test_driver_domain,
    is_vm_host,
    looks_like_kvm_host,
    running_domain_names,
)
from collectors.derived.topology import (
    cpu_node_map,
    host_ram_kb,
    is_multinode,
    node_cpu_counts,
    node_mem_totals_kb,
)
from collectors.derived.values import as_bool, as_int
from collectors.facts import Domain, DomainDisk, HostFacts, NumaTopology, SnapshotFacts, Source
from collectors.sizes import size_bytes
from config.language import in_language
from engine.severity import SEVERITIES

# Derived helpers (``collectors.derived``), re-exported for the rule modules.
__all__ = [
    "SEVERITIES",
    "TEST_DRIVER_UUID",
    "artifact_file",
    "as_bool",
    "as_int",
    "cpu_node_map",
    "db_pool_bytes",
    "domain_is_pinned",
    "domain_label",
    "domain_memory_bound",
    "domain_pinned_cpus",
    "domain_vcpus",
    "host_domains",
    "host_name",
    "host_ram_kb",
    "is_collector_process",
    "is_multinode",
    "is_qemu_process",
    "is_test_driver_domain",
    "is_vm_host",
    "line_of",
    "looks_like_kvm_host",
    "node_cpu_counts",
    "node_mem_totals_kb",
    "running_domain_names",
    "size_bytes",
]


@dataclass
class Evidence:
    fact: str  # dotted path into the facts, e.g. "numa.nodes.0.meminfo.MemUsed"
    value: Any
    artifact: str = ""
    line: int | None = None
    host: str = ""


@dataclass
class RuleFinding:
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
    # which of the rule's explanation templates was filled, and with what: the
    # explanations above are ``RuleSpec.explain(template, values)``
    template: str = ""
    values: dict[str, Any] = field(default_factory=dict)
    # a finding on several hosts (a fleet rule's): the hosts it blames, never
    # the reference it compares them with; empty: every host of the run
    affected: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Phrase:
    """A part of an explanation: the rule's template ``template`` filled with
    ``values``, rendered in the language of the sentence it is a value of."""

    template: str
    values: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Joined:
    """Values (phrases or data) joined by the rule's template ``separator``
    (e.g. ``"; "`` in English, ``"；"`` in Chinese)."""

    separator: str
    items: tuple[Any, ...]


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
    func: Callable[[RuleContext], Iterable[RuleFinding]]
    severity: str
    title: str
    title_zh: str
    condition: str  # one sentence: when it fires (docs/rules.md)
    condition_zh: str  # the same in Simplified Chinese (the rule pages in 中文)
    # names of facts it needs; see engine.run.FACT_CHECKS for their meaning
    requires: tuple[str, ...]
    measures: tuple[str, ...]
    seeds: tuple[str, ...]  # founding case slugs
    thresholds: dict[str, Any]
    references: tuple[str, ...] = ()
    # "any": needs one of ``requires``; "all": needs every one
    requires_mode: str = "all"
    # why the thresholds sit where they do: the magnitude at which it matters (docs/rules.md)
    rationale: str = ""
    rationale_zh: str = ""
    # (ctx, host) -> the facts (keys of engine.run.HOST_FACT_CHECKS) the rule decides
    # on for this host, every one of them (a fact it needs to tell whether the host is
    # in scope too: an unknown node count is not "one node"); () only when the host's
    # facts put it out of scope. A host that lacks one is listed under ``not_checked``
    # with the commands that produce it and the rule is not ``checked``
    # (tests/engine/test_rules_by_fact.py walks every rule)
    relevant: Callable[[RuleContext, HostFacts], tuple[str, ...]] | None = None
    # name -> (English, Simplified Chinese) explanation templates, filled by
    # :func:`finding` with ``str.format`` (the single template of a rule that has
    # one is named "")
    explanations: dict[str, tuple[str, str]] = field(default_factory=dict)
    # the peers' equivalent check (insights-core, obdiag, MySQLTuner, a vendor
    # note ...) or "none", shown in docs/rules.md
    peer: str = ""

    def join_requires(self, names: Iterable[str]) -> str:
        """``names`` (of facts it requires) joined as its mode reads them: "a or
        b" when one of them is enough, else "a, b"."""
        return (" or " if self.requires_mode == "any" else ", ").join(names)

    def explain(self, template: str, values: Mapping[str, Any]) -> tuple[str, str]:
        """The explanation ``template`` filled with ``values``, in English and
        in Simplified Chinese."""
        return self._render(Phrase(template, values), 0), self._render(Phrase(template, values), 1)

    def _render(self, value: Any, lang: int) -> Any:
        """``value`` in language ``lang`` (0 English, 1 Chinese): phrases and
        joined values become text, data stays as it is for its format spec."""
        if isinstance(value, Phrase):
            filled = {k: self._render(v, lang) for k, v in value.values.items()}
            return self.explanations[value.template][lang].format_map(filled)
        if isinstance(value, Joined):
            separator = self.explanations[value.separator][lang]
            return separator.join(str(self._render(v, lang)) for v in value.items)
        return value

    def text(self, name: str, zh: bool) -> str:
        """``title``, ``condition`` or ``rationale`` in the reader's language
        (``config.language.in_language``)."""
        return in_language(getattr(self, name), getattr(self, f"{name}_zh"), zh)


REGISTRY: dict[str, RuleSpec] = {}

RuleFunc = TypeVar("RuleFunc", bound=Callable[[RuleContext], Iterable[RuleFinding]])


def rule(
    id: str,
    *,
    severity: str,
    title: str,
    title_zh: str,
    condition: str,
    condition_zh: str,
    requires: tuple[str, ...],
    measures: tuple[str, ...] = (),
    seeds: tuple[str, ...] = (),
    thresholds: dict[str, Any] | None = None,
    references: tuple[str, ...] = (),
    requires_mode: str = "all",
    rationale: str = "",
    rationale_zh: str = "",
    relevant: Callable[[RuleContext, HostFacts], tuple[str, ...]] | None = None,
    explanation: str = "",
    explanation_zh: str = "",
    explanations: Mapping[str, tuple[str, str]] | None = None,
    peer: str = "",
) -> Callable[[RuleFunc], RuleFunc]:
    """Register a rule function under a stable ``id``.

    The prose of its findings is declared here, never built by the rule body:
    ``explanation``/``explanation_zh`` for a rule with one sentence, or
    ``explanations``, named (English, Chinese) pairs for a rule with several.
    They are ``str.format`` templates that :func:`finding` fills.
    """
    if severity not in SEVERITIES:
        raise ValueError(f"bad severity {severity!r}")
    templates = _templates(id, explanation, explanation_zh, explanations)

    def decorator(func: RuleFunc) -> RuleFunc:
        if id in REGISTRY and REGISTRY[id].func is not func:
            raise RuntimeError(f"rule {id!r} registered twice")
        REGISTRY[id] = RuleSpec(
            id=id,
            func=func,
            severity=severity,
            title=title,
            title_zh=title_zh,
            condition=condition,
            condition_zh=condition_zh,
            requires=requires,
            measures=measures,
            seeds=seeds,
            thresholds=dict(thresholds or {}),
            references=references,
            requires_mode=requires_mode,
            rationale=rationale,
            rationale_zh=rationale_zh,
            relevant=relevant,
            explanations=templates,
            peer=peer,
        )
        return func

    return decorator


def template_fields(template: str) -> set[str]:
    """The names a ``str.format`` template fills (``{host}``, ``{avg:.2f}``)."""
    return {name for _text, name, _spec, _conv in string.Formatter().parse(template) if name is not None}


def _templates(
    rule_id: str, en: str, zh: str, named: Mapping[str, tuple[str, str]] | None
) -> dict[str, tuple[str, str]]:
    """The explanation templates of a rule: one or several, each in both
    languages."""
    if (en or zh) and named:
        raise ValueError(f"rule {rule_id!r}: explanation and explanations both given")
    templates = dict(named) if named else {"": (en, zh)}
    for name, texts in templates.items():
        _check_template_pair(rule_id, name, texts)
    return templates


def _check_template_pair(rule_id: str, name: str, texts: tuple[str, str]) -> None:
    """Raise ValueError unless explanation ``name`` of rule ``rule_id`` has
    both languages (``texts``: English, Chinese), each well formed."""
    if not texts[0] or not texts[1]:
        raise ValueError(f"rule {rule_id!r}: explanation {name!r} needs English and Chinese")
    for text in texts:
        template_fields(text)  # raises ValueError when malformed


def load_all() -> dict[str, RuleSpec]:
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")
    return REGISTRY


def rule_title(rule_id: str, zh: bool) -> str:
    """The registered rule's title in the reader's language; "" for a rule
    that is not registered (any more)."""
    spec = load_all().get(rule_id)
    return spec.text("title", zh) if spec is not None else ""


# ----------------------------------------------------------------------------
# Helpers shared by the rule modules. They only read facts; none of them
# raises on unknown values (unknown is "cannot tell", never "zero").


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


def finding(
    spec_id: str,
    host: HostFacts | None,
    template: str = "",
    *,
    values: Mapping[str, Any],
    **kw: Any,
) -> RuleFinding:
    """A finding of a registered rule, its explanation ``template`` (a name
    declared with the rule) filled with ``values`` (``host`` defaults to the
    host's name), with title, severity and measures from its registration
    unless overridden."""
    spec = REGISTRY[spec_id]
    filled = {"host": host_name(host) if host is not None else "", **values}
    explanation, explanation_zh = spec.explain(template, filled)
    return RuleFinding(
        rule=spec_id,
        severity=kw.pop("severity", spec.severity),
        title=kw.pop("title", spec.title),
        title_zh=kw.pop("title_zh", spec.title_zh),
        explanation=explanation,
        explanation_zh=explanation_zh,
        template=template,
        values=filled,
        evidence=kw.pop("evidence", []),
        measures=list(kw.pop("measures", spec.measures)),
        host=host_name(host) if host is not None else kw.pop("host_label", ""),
        past=max(1.0, float(kw.pop("past", 1.0) or 1.0)),
        affected=list(kw.pop("affected", [])),
    )


def hypervisor_hosts(ctx: RuleContext) -> list[HostFacts]:
    """Hosts that run guests (domain XMLs or a virsh list), else the physical
    multi-node hosts: the candidates for "the host of this guest"."""
    with_domains = [h for h in ctx.hosts if host_domains(h) or running_domain_names(h)]
    if with_domains:
        return with_domains
    return [h for h in ctx.physical_hosts() if is_multinode(h)]


def host_of_guest(ctx: RuleContext, guest: HostFacts) -> HostFacts | None:
    """The hypervisor host of ``guest`` when the snapshot makes it unambiguous."""
    candidates = [h for h in hypervisor_hosts(ctx) if h is not guest]
    if len(candidates) == 1:
        return candidates[0]
    matched = [h for h in candidates if domain_of_guest(ctx, guest, hosts=[h]) is not None]
    return matched[0] if len(matched) == 1 else None


def domain_of_guest(
    ctx: RuleContext, guest: HostFacts, hosts: list[HostFacts] | None = None
) -> Domain | None:
    """The libvirt domain that is ``guest``: by name/hostname, else the only
    domain with the guest's vCPU count."""
    hosts = hosts if hosts is not None else [h for h in ctx.hosts if h is not guest]
    domains = [d for h in hosts for d in host_domains(h)]
    return _the_one(_named_as(domains, guest)) or _the_one(_with_vcpus_of(domains, guest))


def _named_as(domains: list[Domain], guest: HostFacts) -> list[Domain]:
    """The domains called by the guest's hostname or label (any case) or UUID."""
    names = {n.lower() for n in (guest.hostname, guest.label) if n}
    return [d for d in domains if _called(d, names)]


def _with_vcpus_of(domains: list[Domain], guest: HostFacts) -> list[Domain]:
    """The domains with as many vCPUs as the guest shows CPUs (none when it shows none)."""
    cpus = guest.logical_cpus()
    return [d for d in domains if domain_vcpus(d) == cpus] if cpus else []


def _called(domain: Domain, names: set[str]) -> bool:
    """``domain``'s name (any case) or UUID is one of ``names`` (lower case)."""
    return bool(domain.name and domain.name.lower() in names) or bool(domain.uuid and domain.uuid in names)


def _the_one(domains: list[Domain]) -> Domain | None:
    """The domain when there is exactly one: two candidates are no answer."""
    return domains[0] if len(domains) == 1 else None


def domain_host(ctx: RuleContext, domain: Domain) -> HostFacts | None:
    for h in ctx.hosts:
        if any(d is domain for d in h.domains):
            return h
    return None


def guest_disks(domain: Domain) -> list[DomainDisk]:
    """The domain's disks (``<disk device='disk'>``: not its CD-ROMs or floppies), in XML order."""
    return [disk for disk in domain.disks if disk.device == "disk"]


# how a finding names the cloud manager that writes a domain XML (``Domain.manager``)
MANAGER_NAMES = {"openstack": "OpenStack nova", "zstack": "ZStack"}


def domain_manager_name(domain: Domain) -> str:
    """The cloud manager that writes the domain XML, as a finding names it ("" when none)."""
    return MANAGER_NAMES.get(domain.manager or "", "")


def domain_is_partial(domain: Domain) -> bool:
    """Only part of the domain XML is known: a pasted fragment (completed to parse it or
    not) or a document the paste cut."""
    return domain.fragment or domain.recovered or domain.cut


def domain_explanation(domain: Domain, *, partial: bool) -> str:
    """The explanation of a finding on a domain XML: "partial" for part of one, "managed"
    when a cloud manager writes it (a virsh edit does not last), else the plain one."""
    if partial:
        return "partial"
    return "managed" if domain.manager else ""


def domain_host_nodes(domain: Domain, host: HostFacts | None) -> set[int] | None:
    """Host NUMA nodes the domain's pinned vCPUs run on (None: cannot tell)."""
    if host is None:
        return None
    cpu_map = cpu_node_map(host)
    nodes = {cpu_map[c] for c in domain_pinned_cpus(domain) if c in cpu_map}
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
    line, source = _numa_citation(host.numa, part, keys) if host.numa is not None else (None, None)
    if line is None and source is not None:
        line = source.line
    artifact = _covering_artifact(host, source.artifact if source else "", line)
    return Evidence(fact=fact, value=value, artifact=artifact, line=line, host=host_name(host))


def _numa_citation(numa: NumaTopology, part: str, keys: tuple[str, ...]) -> tuple[int | None, Source]:
    """(line, source) of a NUMA fact: the line of the first of ``keys`` in
    ``part``'s artifact, else of numastat -m's row for it, else no line."""
    source = numa.sources.get(part) or numa.source
    line = next((numa.lines[key] for key in keys if key in numa.lines), None)
    if line is None and "Numastat" in numa.sources:
        row_line = _numastat_row_line(numa, keys)
        if row_line is not None:
            return row_line, numa.sources["Numastat"]
    return line, source


def _numastat_row_line(numa: NumaTopology, keys: tuple[str, ...]) -> int | None:
    """numastat -m has one row per key for every node ("MemUsed"), where node
    meminfo has one line per node and key ("0.MemUsed"): the line of the row
    of the first per-node key that numastat shows."""
    rows = [key.split(".", 1)[1] for key in keys if key.split(".", 1)[0].isdigit()]
    return next((numa.lines[row] for row in rows if row in numa.lines), None)


# ----------------------------------------------------------------------------
# What a host is (shared by the rules and their ``relevant`` declarations).


def kvm_host_needs_domains(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    """A KVM host (virsh list, QEMU processes, a libvirt that runs QEMU) needs its domain XMLs."""
    return ("domains",) if looks_like_kvm_host(host) else ()


def numa_needs(host: HostFacts, *facts: str) -> tuple[str, ...]:
    """What a NUMA rule decides on for ``host``: ``facts`` on a multi-node host,
    and the node count first when no artifact gave it (unknown is not "one
    node"); nothing on a host known to have one node."""
    nodes = host.numa_node_count()
    if nodes is None:
        return ("numa", *facts)
    return facts if nodes >= 2 else ()
