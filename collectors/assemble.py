"""Run parsers safely and merge their results into one :class:`HostFacts`.

``run_parser`` is the only place a parser is called: a ``ParseError`` becomes an
``ArtifactError`` on that artifact, and any other exception (a parser bug on
hostile input) becomes "internal parser error: <type>" and is logged, never
raised. It also stamps provenance: ``source.artifact`` and, for transcript
blocks, shifts every ``line``/``lines`` so evidence points at the line of the
uploaded file.

:class:`HostAssembler` merges results: several NUMA sources into one
``NumaTopology``, several sysctl dumps into one ``Sysctl``, the most detailed CPU
usage, and so on (see each ``_add_*``).
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import re
from collections.abc import Iterable
from typing import Any

from collectors import facts as f
from collectors import parsers
from collectors.parsers.numastat import NUMASTAT_COUNTERS

log = logging.getLogger(__name__)

# lscpu "Hypervisor vendor" values that mean "this is a guest". lscpu prints
# other strings on bare metal now and then (seed 004 shows "vertical").
KNOWN_HYPERVISORS = {
    "kvm",
    "vmware",
    "microsoft",
    "xen",
    "qemu",
    "innotek",  # VirtualBox: "innotek GmbH"
    "virtualbox",
    "parallels",
    "bhyve",
    "acrn",
    "hyper-v",
    "pr/sm",  # s390 LPAR
    "z/vm",
    "ibm/s390",
    "phyp",  # PowerVM
    "powervm",
    "spar",
    "unisys",
    "oracle",
    "apple",
    "qnx",
    "vbox",
    "linux kvm",
    "openvz",
    "lxc",
    "docker",
    "wsl",
}


# --------------------------------------------------------------------- provenance


@functools.cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(fld.name for fld in dataclasses.fields(cls))


def _shift(obj: Any, offset: int, seen: set[int] | None = None, line_map: list[int] | None = None) -> None:
    """Add ``offset`` to every ``line``/``lines`` in a parser result (in place);
    with ``line_map`` (the original line of each line of the parsed text, when
    normalisation joined or split lines), line k becomes ``line_map[k - 1]``."""
    if offset == 0 and not line_map:
        return
    seen = seen if seen is not None else set()
    if id(obj) in seen:
        return
    seen.add(id(obj))

    def moved(line: int) -> int:
        if line_map and 1 <= line <= len(line_map):
            return line_map[line - 1]
        return line + offset

    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for name in _field_names(type(obj)):
            value = getattr(obj, name)
            if name == "line" and isinstance(value, int) and not isinstance(value, bool):
                setattr(obj, name, moved(value))
            elif name == "lines" and isinstance(value, dict):
                for key, line in list(value.items()):
                    if isinstance(line, int) and not isinstance(line, bool):
                        value[key] = moved(line)
            elif name == "source" or value is None or isinstance(value, (str, int, float)):
                continue
            elif isinstance(value, (list, tuple)):
                for item in value:
                    if hasattr(item, "__dataclass_fields__"):
                        _shift(item, offset, seen, line_map)
            elif isinstance(value, dict):
                for item in value.values():
                    if hasattr(item, "__dataclass_fields__"):
                        _shift(item, offset, seen, line_map)
            elif dataclasses.is_dataclass(value):
                _shift(value, offset, seen, line_map)


def _as_results(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [v for v in value if v is not None]
    return [value]


def run_parser(
    kind: str,
    text: str,
    *,
    artifact: str,
    line_offset: int = 0,
    line_map: list[int] | None = None,
    **kwargs: Any,
) -> tuple[list[Any], f.ArtifactError | None]:
    """Parse ``text`` as ``kind``; never raises.

    ``line_offset`` is the number of lines before ``text`` in the uploaded file
    (a transcript block starting on line 120 has offset 119); ``line_map``
    gives the uploaded file's line of each line of ``text`` where they are not
    consecutive. A parser that stops early raises ``ParseError`` with its
    ``partial`` result: that result is kept, and the error says what is missing.
    """
    spec = parsers.REGISTRY.get(kind)
    if spec is None:
        return [], f.ArtifactError(artifact, f"no parser for kind {kind!r}")
    error: f.ArtifactError | None = None

    def where(line: int | None) -> int | None:
        if not isinstance(line, int):
            return None
        if line_map and 1 <= line <= len(line_map):
            return line_map[line - 1]
        return line + line_offset

    try:
        results = _as_results(spec.func(text, **kwargs))
    except f.ParseError as exc:
        error = f.ArtifactError(artifact, f"{kind}: {exc.message}", where(exc.line))
        partial = getattr(exc, "partial", None)
        if partial is None:
            return [], error
        results = _as_results(partial)
    except RecursionError:
        log.exception("parser %s recursed too deep on %s", kind, artifact)
        return [], f.ArtifactError(artifact, "internal parser error: RecursionError")
    except Exception as exc:  # a parser bug must not fail the upload
        log.exception("parser %s failed on %s", kind, artifact)
        return [], f.ArtifactError(artifact, f"internal parser error: {type(exc).__name__}")
    out = []
    for result in results:
        if isinstance(result, f.Parsed):
            try:
                _shift(result, line_offset, line_map=line_map)
            except Exception:
                log.exception("could not shift lines of %s result", kind)
            result.source = f.Source(artifact=artifact, line=where(result.source.line or 1))
        out.append(result)
    return out, error


# --------------------------------------------------------------------- assembling


def _filled(obj: Any) -> int:
    """How many fields of a dataclass hold something (to pick the most complete)."""
    count = 0
    for fld in dataclasses.fields(obj):
        if fld.name in ("source", "lines"):
            continue
        value = getattr(obj, fld.name)
        if value not in (None, "", [], {}, ()):
            count += 1
    return count


def normalise_hypervisor(vendor: str | None) -> str | None:
    """``"K VM"`` (OCR) -> ``"KVM"``; None when the vendor is not a hypervisor."""
    if not vendor:
        return None
    vendor = vendor.strip()
    squeezed = re.sub(r"\s+", "", vendor).lower()
    for known in KNOWN_HYPERVISORS:
        if squeezed == known.replace(" ", ""):
            return re.sub(r"\s+", "", vendor)
        if vendor.lower().startswith(known):
            return vendor
    return None


class HostAssembler:
    """Collects parser results of one host, then :meth:`finish` builds HostFacts."""

    def __init__(self, label: str = ""):
        self.host = f.HostFacts(label=label)
        self._cpu_candidates: list[f.CpuTopology] = []
        self._usage_candidates: list[f.CpuUsage] = []
        self._numa_parts: list[f.Parsed] = []
        self._hostnames: list[str] = []

    # -- bookkeeping
    def error(self, artifact: str, message: str, line: int | None = None) -> None:
        self.host.errors.append(f.ArtifactError(artifact, message, line))

    def artifact(self, name: str, kind: str | None, *, lines: int | None, parsed: bool, **extra: Any) -> None:
        entry: dict[str, Any] = {"name": name, "kind": kind, "lines": lines, "parsed": parsed}
        entry.update({k: v for k, v in extra.items() if v is not None})
        self.host.artifacts.append(entry)

    def hostname(self, name: str | None) -> None:
        name = (name or "").strip()
        if name and len(name) <= 253 and re.fullmatch(r"[\w.\-]+", name) and name not in self._hostnames:
            self._hostnames.append(name)

    # -- results
    def add(self, result: Any, *, kind: str | None = None, node: int | None = None) -> None:
        handlers = (
            (f.CpuTopology, self._cpu_candidates.append),
            (f.NumactlHardware, self._numa_parts.append),
            (f.NodeMeminfo, self._numa_parts.append),
            (f.Numastat, self._numa_parts.append),
            (f.Zoneinfo, self._numa_parts.append),
            (f.NumaTopology, self._numa_parts.append),
            (f.Meminfo, self._add_meminfo),
            (f.HugePages, self._add_hugepages),
            (f.Sysctl, self._add_sysctl),
            (f.KernelCmdline, lambda r: self._first("cmdline", r)),
            (f.KernelVersion, self._add_kernel),
            (f.CpuUsage, self._usage_candidates.append),
            (f.Softirqs, lambda r: self._first("softirqs", r)),
            (f.Interrupts, lambda r: self._first("interrupts", r)),
            (f.TcQdiscs, self._add_tc),
            (f.PingResult, self.host.pings.append),
            (f.DiskStats, self._add_disks),
            (f.DiskFree, self._add_df),
            (f.Domain, self._add_domain),
            (f.VirshVersion, lambda r: self._first("virsh_version", r)),
            (f.VirshList, lambda r: self._first("virsh_list", r)),
            (f.VirshCapabilities, lambda r: self._first("capabilities", r)),
            (f.DatabaseFacts, self._add_database),
            (f.OceanBaseFacts, self._add_oceanbase),
            (f.BenchmarkResults, lambda r: self.host.benchmarks.extend(r.results)),
        )
        for cls, handler in handlers:
            if isinstance(result, cls):
                handler(result)
                return
        self.error(
            getattr(getattr(result, "source", None), "artifact", "") or "?",
            f"internal parser error: {kind or '?'} returned {type(result).__name__}",
        )

    def _first(self, attr: str, result: Any) -> None:
        if getattr(self.host, attr) is None:
            setattr(self.host, attr, result)

    def _add_meminfo(self, r: f.Meminfo) -> None:
        if self.host.meminfo is None:
            self.host.meminfo = r
            return
        for key, value in r.values.items():
            self.host.meminfo.values.setdefault(key, value)
            if key in r.lines:
                self.host.meminfo.lines.setdefault(key, r.lines[key])

    def _add_hugepages(self, r: f.HugePages) -> None:
        if self.host.hugepages is None:
            self.host.hugepages = r
            return
        target = self.host.hugepages
        for name in ("thp_enabled", "thp_defrag", "nr_hugepages", "hugepagesize_kb"):
            if getattr(target, name) is None and getattr(r, name) is not None:
                setattr(target, name, getattr(r, name))
                if name in r.lines:
                    target.lines[name] = r.lines[name]

    def _add_sysctl(self, r: f.Sysctl) -> None:
        if self.host.sysctl is None:
            self.host.sysctl = r
            return
        target = self.host.sysctl
        for key, value in r.values.items():
            if key not in target.values:
                target.values[key] = value
                if key in r.lines:
                    target.lines[key] = r.lines[key]

    def _add_kernel(self, r: f.KernelVersion) -> None:
        if self.host.kernel is None:
            self.host.kernel = r
            return
        for name in ("release", "os_release"):
            if getattr(self.host.kernel, name) is None and getattr(r, name) is not None:
                setattr(self.host.kernel, name, getattr(r, name))

    def _add_tc(self, r: f.TcQdiscs) -> None:
        if self.host.tc is None:
            self.host.tc = r
        else:
            self.host.tc.qdiscs.extend(r.qdiscs)

    def _add_disks(self, r: f.DiskStats) -> None:
        if self.host.disks is None:
            self.host.disks = r
        else:
            self.host.disks.devices.extend(r.devices)

    def _add_df(self, r: f.DiskFree) -> None:
        if self.host.df is None:
            self.host.df = r
            return
        known = {(fs.filesystem, fs.mounted_on) for fs in self.host.df.filesystems}
        for fs in r.filesystems:
            if (fs.filesystem, fs.mounted_on) not in known:
                self.host.df.filesystems.append(fs)
                known.add((fs.filesystem, fs.mounted_on))

    def _add_domain(self, r: f.Domain) -> None:
        for existing in self.host.domains:
            # /etc/libvirt/qemu/x.xml and "virsh dumpxml x" describe one guest
            if r.uuid and existing.uuid == r.uuid and existing.name == r.name:
                return
        self.host.domains.append(r)

    def _add_database(self, r: f.DatabaseFacts) -> None:
        db = self.host.database
        if db is None:
            self.host.database = r
            return
        if db.kind is None or (db.kind == "mysql" and r.kind in ("mariadb", "percona")):
            db.kind = r.kind or db.kind
        if db.version is None and r.version:
            db.version = r.version
            if "version" in r.lines:
                db.lines["version"] = r.lines["version"]
        for key, value in r.variables.items():
            if key not in db.variables:
                db.variables[key] = value
                if key in r.lines:
                    db.lines[key] = r.lines[key]
        db.events.extend(r.events)
        for level, count in r.log_counts.items():
            db.log_counts[level] = db.log_counts.get(level, 0) + count

    def _add_oceanbase(self, r: f.OceanBaseFacts) -> None:
        ob = self.host.oceanbase
        if ob is None:
            self.host.oceanbase = r
            return
        for key, value in r.parameters.items():
            ob.parameters.setdefault(key, value)
        for key, value in r.proxy_config.items():
            ob.proxy_config.setdefault(key, value)
        for plan_type, count in r.plan_type_counts.items():
            ob.plan_type_counts.setdefault(plan_type, count)
        for key, line in r.lines.items():
            ob.lines.setdefault(key, line)

    # -- finishing
    def _pick_cpu(self) -> None:
        if not self._cpu_candidates:
            return
        # The most complete lscpu wins; later ones in a transcript are often
        # other machines quoted for comparison, so they are not mixed in.
        best = max(enumerate(self._cpu_candidates), key=lambda p: (_filled(p[1]), -p[0]))[1]
        self.host.cpu = best

    def _pick_usage(self) -> None:
        if not self._usage_candidates:
            return

        def score(pair: tuple[int, f.CpuUsage]) -> tuple[int, int, int, int]:
            index, usage = pair
            per_cpu = len([c for c in usage.per_cpu if c.cpu != "all"])
            return (per_cpu, usage.tool == "top", _filled(usage), -index)

        self.host.cpu_usage = max(enumerate(self._usage_candidates), key=score)[1]

    def _build_numa(self) -> None:
        if not self._numa_parts:
            return
        topo = f.NumaTopology()
        topo.source = self._numa_parts[0].source
        for part in self._numa_parts:
            part_kind = type(part).__name__
            topo.sources.setdefault(part_kind, part.source)
            for key, line in part.lines.items():
                topo.lines.setdefault(key, line)
            if isinstance(part, f.NumactlHardware | f.NumaTopology):
                for node_id, node in part.nodes.items():
                    target = topo.node(node_id)
                    if not target.cpus and node.cpus:
                        target.cpus = list(node.cpus)
                    target.size_mb = target.size_mb if target.size_mb is not None else node.size_mb
                    target.free_mb = target.free_mb if target.free_mb is not None else node.free_mb
                    for key, value in node.meminfo.items():
                        target.meminfo.setdefault(key, value)
                    for key, value in node.numastat.items():
                        target.numastat.setdefault(key, value)
                if not topo.distances and part.distances:
                    topo.distance_nodes = list(part.distance_nodes)
                    topo.distances = [list(row) for row in part.distances]
            elif isinstance(part, f.NodeMeminfo):
                for node_id, values in part.nodes.items():
                    target = topo.node(node_id)
                    for key, value in values.items():
                        target.meminfo.setdefault(key, value)
            elif isinstance(part, f.Numastat):
                for node_id, counters in part.nodes.items():
                    target = topo.node(node_id)
                    for key, value in counters.items():
                        if part.unit == "MB" and key not in NUMASTAT_COUNTERS:
                            # numastat -m: per-node meminfo in MB
                            target.meminfo.setdefault(key, round(float(value) * 1024))
                        else:
                            # pages, or MB for `numastat -n` (numa_hit... in MB):
                            # the rules only compare counters with each other.
                            target.numastat.setdefault(key, int(value))
            elif isinstance(part, f.Zoneinfo):
                sums: dict[int, dict[str, int]] = {}
                for zone in part.zones:
                    acc = sums.setdefault(zone.node, {})
                    for name in ("min", "low", "high", "free_pages"):
                        value = getattr(zone, name)
                        if value is not None:
                            acc[name] = acc.get(name, 0) + value
                for node_id, acc in sums.items():
                    target = topo.node(node_id)
                    if target.watermark_min is None:
                        target.watermark_min = acc.get("min")
                        target.watermark_low = acc.get("low")
                        target.watermark_high = acc.get("high")
                        target.free_pages = acc.get("free_pages")
        cpu = self.host.cpu
        if cpu and cpu.numa_node_cpus:
            for node_id, cpus in cpu.numa_node_cpus.items():
                if node_id in topo.nodes and not topo.nodes[node_id].cpus:
                    topo.nodes[node_id].cpus = list(cpus)
        topo.nodes = dict(sorted(topo.nodes.items()))
        self.host.numa = topo

    def _hugepages_from_meminfo(self) -> None:
        mem = self.host.meminfo
        if not mem:
            return
        total, size = mem.values.get("HugePages_Total"), mem.values.get("Hugepagesize")
        if total is None and size is None:
            return
        if self.host.hugepages is None:
            self.host.hugepages = f.HugePages(source=mem.source)
        hp = self.host.hugepages
        if hp.nr_hugepages is None and total is not None:
            hp.nr_hugepages = total
            if "HugePages_Total" in mem.lines:
                hp.lines["nr_hugepages"] = mem.lines["HugePages_Total"]
        if hp.hugepagesize_kb is None and size is not None:
            hp.hugepagesize_kb = size

    def _role(self) -> None:
        cpu = self.host.cpu
        if cpu is None:
            return
        vendor = normalise_hypervisor(cpu.hypervisor_vendor)
        if vendor:
            cpu.hypervisor_vendor = vendor
            self.host.role = "guest"
        else:
            self.host.role = "physical"

    def finish(self, *, hostname: str | None = None) -> f.HostFacts:
        self._pick_cpu()
        self._pick_usage()
        self._build_numa()
        self._hugepages_from_meminfo()
        self._role()
        if hostname:
            # the collector's manifest or sos's hostname file beats a prompt
            self.hostname(hostname)
            if hostname.strip() in self._hostnames:
                self._hostnames.remove(hostname.strip())
                self._hostnames.insert(0, hostname.strip())
        host = self.host
        host.hostname = host.hostname or (self._hostnames[0] if self._hostnames else None)
        if not host.label:
            host.label = host.hostname or ""
        return host


def add_all(assembler: HostAssembler, results: Iterable[Any], *, kind: str | None = None) -> None:
    for result in results:
        assembler.add(result, kind=kind)
