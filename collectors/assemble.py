"""Run parsers safely and merge their results into one :class:`HostFacts`.

``run_parser`` is the only place a parser is called: a ``ParseError`` becomes an
``ArtifactError`` on that artifact, and any other exception (a parser bug on
hostile input) becomes "internal parser error: <type>" and is logged, never
raised. It also stamps provenance: ``source.artifact`` and, for transcript
blocks, shifts every ``line``/``lines`` so evidence points at the line of the
uploaded file.

Every parse is bounded (``run_parser``): text over ``CASEBOOK_PARSE_MAX_BYTES``
is skipped before parsing, and a parse running over ``CASEBOOK_PARSE_SECONDS``
is stopped and becomes "parsing took longer than N s; skipped". The time budget
uses ``SIGALRM`` (``signal.setitimer``): its handler raises :class:`ParseTimeout`
between two bytecodes of the parser (CPython's regex engine checks for signals
too), which is safe because parsers are pure functions whose partial state is
simply dropped. Signals only reach the main thread, which is where Celery's
prefork pool processes, ``manage.py analyze`` and the tests run parsers; in a
web thread (tasks run in-process when ``REDIS_URL`` is unset) only the byte
budget applies, and with workers the Celery time limits of the whole analysis
(``CASEBOOK_ANALYSIS_SOFT_LIMIT``) remain the backstop.

:class:`HostAssembler` merges results: several NUMA sources into one
``NumaTopology``, several sysctl dumps into one ``Sysctl``, the most detailed CPU
usage, and so on (see each ``_add_*``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import operator
import re
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from types import FrameType
from typing import Any, NoReturn

from django.conf import settings

from collectors import facts as f
from collectors import parsers
from collectors.machines import cpu_map_only, find_conflicts
from collectors.numbers import whole
from collectors.parsers.numastat import NUMASTAT_COUNTERS
from collectors.parsers.qemu_cmdline import domains_of_processes
from collectors.parsers.virsh import domain_from_command

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


def _holds_dataclasses(items: Iterable[Any]) -> bool:
    """Whether any of ``items`` is a dataclass (one look per distinct type:
    a dict of thousands of sysctl strings is not walked in Python)."""
    return any(hasattr(kind, "__dataclass_fields__") for kind in set(map(type, items)))


def _moved(line: int, offset: int, line_map: list[int] | None) -> int:
    if line_map and 1 <= line <= len(line_map):
        return line_map[line - 1]
    return line + offset


def _shift_lines(lines: dict[Any, Any], offset: int, line_map: list[int] | None) -> None:
    if not line_map and set(map(type, lines.values())) <= {int}:
        # plain ints moved by one offset: at C speed
        lines.update(zip(list(lines), map(offset.__add__, list(lines.values())), strict=True))
        return
    for key, line in list(lines.items()):
        if whole(line):
            lines[key] = _moved(line, offset, line_map)


def _shift(obj: Any, offset: int, line_map: list[int] | None = None) -> None:
    """Add ``offset`` to every ``line``/``lines`` in a parser result (in place);
    with ``line_map`` (the original line of each line of the parsed text, when
    normalisation joined or split lines), line k becomes ``line_map[k - 1]``."""
    if offset or line_map:
        _shift_unseen(obj, offset, set(), line_map)


def _shift_unseen(obj: Any, offset: int, seen: set[int], line_map: list[int] | None) -> None:
    """:func:`_shift` of ``obj`` unless it is one of the results ``seen`` (by id) already."""
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        return
    for name in _field_names(type(obj)):
        value = getattr(obj, name)
        if value is not None and not isinstance(value, (str, float)):
            _shift_field(obj, name, value, offset, seen, line_map)


def _shift_field(
    obj: Any, name: str, value: Any, offset: int, seen: set[int], line_map: list[int] | None
) -> None:
    """:func:`_shift` of one field of a parser result: a line, the lines, or the results it holds."""
    if name == "line" and whole(value):
        setattr(obj, name, _moved(value, offset, line_map))
    elif name == "lines" and isinstance(value, dict):
        _shift_lines(value, offset, line_map)
    elif name != "source" and not isinstance(value, int):
        for item in _held_dataclasses(value):
            _shift_unseen(item, offset, seen, line_map)


def _held_dataclasses(value: Any) -> Iterable[Any]:
    """The dataclass instances a field holds: itself, or items of a list,
    tuple or dict (its values)."""
    if isinstance(value, (list, tuple)):
        items: Iterable[Any] = value
    elif isinstance(value, dict):
        items = value.values()
    else:
        return (value,) if dataclasses.is_dataclass(value) else ()
    if not _holds_dataclasses(items):
        return ()
    return [item for item in items if hasattr(item, "__dataclass_fields__")]


def _as_results(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [v for v in value if v is not None]
    return [value]


# Defaults when Django is not configured (the settings of the same names win).
PARSE_SECONDS = 30.0
PARSE_MAX_BYTES = 64 << 20


class ParseTimeout(BaseException):
    """Raised inside a parser that ran past its time budget. A ``BaseException``
    so that no ``except Exception`` in a parser can swallow it."""


def parse_budget() -> tuple[float, int]:
    """(seconds, bytes) one artifact may take to parse; 0 seconds: no limit."""
    try:
        return (
            float(getattr(settings, "CASEBOOK_PARSE_SECONDS", PARSE_SECONDS)),
            int(getattr(settings, "CASEBOOK_PARSE_MAX_BYTES", PARSE_MAX_BYTES)),
        )
    except Exception:  # Django not installed or not configured
        return PARSE_SECONDS, PARSE_MAX_BYTES


_artifact = threading.local()


@contextlib.contextmanager
def artifact_parse_budget(seconds: float | None = None) -> Iterator[None]:
    """Every parse inside the block shares one time budget (default
    ``CASEBOOK_PARSE_SECONDS``): one artifact's whole-text parse, the
    transcript splitter's checks and its blocks. Nested blocks share the
    outermost budget."""
    seconds = parse_budget()[0] if seconds is None else seconds
    if getattr(_artifact, "deadline", None) is not None or seconds <= 0:
        yield
        return
    _artifact.deadline = time.monotonic() + seconds
    try:
        yield
    finally:
        _artifact.deadline = None


@contextlib.contextmanager
def parse_time_budget(seconds: float) -> Iterator[bool]:
    """Raise :class:`ParseTimeout` in the block after ``seconds`` (or when the
    enclosing :func:`artifact_parse_budget` runs out, at once if it has). Yields
    False (and limits nothing) off the main thread, or when a timer is already
    set (someone else's ``SIGALRM``, e.g. pytest-timeout)."""
    seconds = _within_artifact_budget(seconds)
    if not _alarm_usable(seconds):
        yield False
        return

    def on_alarm(signum: int, frame: FrameType | None) -> NoReturn:
        raise ParseTimeout

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _within_artifact_budget(seconds: float) -> float:
    """``seconds`` cut to what the enclosing :func:`artifact_parse_budget` has
    left (raises :class:`ParseTimeout` when it has run out)."""
    deadline: float | None = getattr(_artifact, "deadline", None)
    if deadline is None:
        return seconds
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise ParseTimeout
    return min(seconds, remaining) if seconds > 0 else remaining


def _alarm_usable(seconds: float) -> bool:
    """Whether a ``SIGALRM`` timer can stop a parse after ``seconds``: a limit,
    on the main thread, with no timer set by someone else."""
    return (
        seconds > 0
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and signal.getitimer(signal.ITIMER_REAL)[0] == 0
    )


NOT_PARSED: Any = object()


def run_parser(
    kind: str,
    text: str,
    *,
    artifact: str,
    line_offset: int = 0,
    line_map: list[int] | None = None,
    parsed: Any = NOT_PARSED,
    **kwargs: Any,
) -> tuple[list[Any], f.ArtifactError | None]:
    """Parse ``text`` as ``kind``; never raises (except the Celery time limit of
    the whole analysis, which must reach the task).

    ``line_offset`` is the number of lines before ``text`` in the uploaded file
    (a transcript block starting on line 120 has offset 119); ``line_map``
    gives the uploaded file's line of each line of ``text`` where they are not
    consecutive. A parser that stops early raises ``ParseError`` with its
    ``partial`` result: that result is kept, and the error says what is missing.
    Past the parse budget (:func:`parse_budget`) the artifact is skipped with an error.
    ``parsed`` is what the parser already returned on this very ``text`` (the
    transcript splitter parses to check a split): it is not parsed again.
    """
    spec = parsers.REGISTRY.get(kind)
    if spec is None:
        return [], f.ArtifactError(artifact, f"no parser for kind {kind!r}")
    error: f.ArtifactError | None = None
    seconds, max_bytes = parse_budget()
    if max_bytes > 0 and len(text) > max_bytes:
        return [], f.ArtifactError(
            artifact, f"{kind}: {len(text)} characters is more than the parse budget ({max_bytes}); skipped"
        )
    try:
        results = _parsed_within(seconds, spec, text, parsed, kwargs)
    except ParseTimeout:
        log.warning("parser %s ran over its %g s budget on %s", kind, seconds, artifact)
        return [], f.ArtifactError(artifact, f"{kind}: parsing took longer than {seconds:g} s; skipped")
    except f.ParseError as exc:
        error = f.ArtifactError(
            artifact, f"{kind}: {exc.message}", _file_line(exc.line, line_offset, line_map)
        )
        results = _as_results(exc.partial)  # (none without a partial result)
    except Exception as exc:  # a parser bug must not fail the upload
        return [], _parser_bug(kind, artifact, exc)
    for result in results:
        if isinstance(result, f.Parsed):
            _place(result, kind, artifact, line_offset, line_map)
    return results, error


def _parsed_within(
    seconds: float, spec: parsers.ParserSpec, text: str, parsed: Any, kwargs: dict[str, Any]
) -> list[Any]:
    """The results of the parser ``spec`` on ``text`` (``parsed`` when the
    caller has them already), parsed within ``seconds``."""
    if parsed is not NOT_PARSED:
        return _as_results(parsed)
    with parse_time_budget(seconds):
        return _as_results(parsers.parse(spec, text, **kwargs))


def _parser_bug(kind: str, artifact: str, exc: Exception) -> f.ArtifactError:
    """The error of a parser that raised ``exc`` (logged with its traceback;
    Celery's soft time limit, the end of the whole analysis, is raised on).
    Precondition: called in the ``except`` clause that caught ``exc``."""
    if type(exc).__name__ == "SoftTimeLimitExceeded":  # Celery's: the whole analysis is over
        raise exc
    if isinstance(exc, RecursionError):
        log.exception("parser %s recursed too deep on %s", kind, artifact)
    else:
        log.exception("parser %s failed on %s", kind, artifact)
    return f.ArtifactError(artifact, f"internal parser error: {type(exc).__name__}")


def _file_line(line: int | None, line_offset: int, line_map: list[int] | None) -> int | None:
    """The uploaded file's line of a line of the parsed text."""
    return _moved(line, line_offset, line_map) if isinstance(line, int) else None


def _place(result: f.Parsed, kind: str, artifact: str, line_offset: int, line_map: list[int] | None) -> None:
    """A result's lines, source and errors made the uploaded file's."""
    try:
        _shift(result, line_offset, line_map=line_map)
    except Exception:
        log.exception("could not shift lines of %s result", kind)
    result.source = f.Source(
        artifact=artifact, line=_file_line(result.source.line or 1, line_offset, line_map)
    )
    for err in result.errors:
        err.artifact = artifact
        if not err.message.startswith(f"{kind}:"):
            err.message = f"{kind}: {err.message}"


# --------------------------------------------------------------------- assembling


def _fill(target: dict[Any, Any], values: dict[Any, Any]) -> None:
    """Copy the keys ``target`` does not have yet (the first source wins)."""
    for key, value in values.items():
        target.setdefault(key, value)


def _every_cpu(host: f.HostFacts) -> int | None:
    """The host's CPU count as lscpu says it, else as numactl's node lists do
    when every node lists its CPUs."""
    if host.cpu and host.cpu.cpus:
        return host.cpu.cpus
    if host.numa and all(n.cpus for n in host.numa.nodes.values()):
        return sum(len(n.cpus) for n in host.numa.nodes.values()) or None
    return None


def _merge_process(seen: f.ProcessNuma, proc: f.ProcessNuma) -> None:
    """The same process twice (numastat -c NAME, then -p PID): the per-PID table
    has the categories, and -c cuts names ("qemu-syste")."""
    if proc.categories and not seen.categories:
        seen.node_mb, seen.total_mb = proc.node_mb, proc.total_mb
        seen.categories, seen.line = proc.categories, proc.line
    if proc.name and _fuller_name(seen.name, proc.name):
        seen.name = proc.name


def _fuller_name(held: str | None, name: str) -> bool:
    """Whether ``name`` says more than the ``held`` name of one process (none, or cut short of it)."""
    return not held or (len(name) > len(held) and name.startswith(held))


def _plausible_hostname(name: str) -> bool:
    """Whether ``name`` can be a host name: 1 to 253 word characters, dots and hyphens."""
    return bool(name) and len(name) <= 253 and re.fullmatch(r"[\w.\-]+", name) is not None


def _merge_numa_part(topo: f.NumaTopology, part: f.Parsed, *, hugepage_kb: int) -> None:
    """One NUMA-shaped part into ``topo``: each kind by its ``_merge_*`` function."""
    if isinstance(part, f.NumactlHardware | f.NumaTopology):
        _merge_topology(topo, part)
    elif isinstance(part, f.NodeMeminfo):
        for node_id, values in part.nodes.items():
            _fill(topo.node(node_id).meminfo, values)
    elif isinstance(part, f.Numastat):
        _merge_numastat(topo, part, hugepage_kb=hugepage_kb)
    elif isinstance(part, f.VirshFreecell):
        _merge_freecell(topo, part)
    elif isinstance(part, f.Zoneinfo):
        _merge_zoneinfo(topo, part)


def _fill_node_cpus(topo: f.NumaTopology, cpu: f.CpuTopology) -> None:
    """Give the nodes of ``topo`` that list no CPUs lscpu's CPU list of the node."""
    for node_id, cpus in cpu.numa_node_cpus.items():
        if node_id in topo.nodes and not topo.nodes[node_id].cpus:
            topo.nodes[node_id].cpus = list(cpus)


def _merge_freecell(topo: f.NumaTopology, part: f.VirshFreecell) -> None:
    for node_id, free_kb in part.free_kb.items():
        target = topo.node(node_id)
        if target.free_mb is None:
            target.free_mb = free_kb // 1024


def _merge_topology(topo: f.NumaTopology, part: f.NumactlHardware | f.NumaTopology) -> None:
    for node_id, node in part.nodes.items():
        target = topo.node(node_id)
        if not target.cpus and node.cpus:
            target.cpus = list(node.cpus)
        _fill_unset(target, node, ("size_mb", "free_mb"))
        _fill(target.meminfo, node.meminfo)
        _fill(target.numastat, node.numastat)
    if not topo.distances and part.distances:
        topo.distance_nodes = list(part.distance_nodes)
        topo.distances = [list(row) for row in part.distances]


def _merge_numastat(topo: f.NumaTopology, part: f.Numastat, *, hugepage_kb: int) -> None:
    for node_id, counters in part.nodes.items():
        target = topo.node(node_id)
        for key, value in counters.items():
            if part.unit == "MB" and key.startswith("HugePages_"):
                # numastat -m prints huge pages in MB too; node meminfo counts pages
                target.meminfo.setdefault(key, round(float(value) * 1024 / hugepage_kb))
            elif part.unit == "MB" and key not in NUMASTAT_COUNTERS:
                # numastat -m: per-node meminfo in MB
                target.meminfo.setdefault(key, round(float(value) * 1024))
            else:
                # pages, or MB for `numastat -n` (numa_hit... in MB):
                # the rules only compare counters with each other.
                target.numastat.setdefault(key, int(value))


def _merge_zoneinfo(topo: f.NumaTopology, part: f.Zoneinfo) -> None:
    """Per-node sums of the zones' watermarks and free pages."""
    for node_id, acc in _zone_sums(part).items():
        target = topo.node(node_id)
        if target.watermark_min is None:
            target.watermark_min = acc.get("min")
            target.watermark_low = acc.get("low")
            target.watermark_high = acc.get("high")
            target.free_pages = acc.get("free_pages")


def _zone_sums(part: f.Zoneinfo) -> dict[int, dict[str, int]]:
    """Node -> the sums of its zones' ``min``, ``low``, ``high`` and ``free_pages`` (those known)."""
    sums: dict[int, dict[str, int]] = {}
    for zone in part.zones:
        acc = sums.setdefault(zone.node, {})
        for name in ("min", "low", "high", "free_pages"):
            value = getattr(zone, name)
            if value is not None:
                acc[name] = acc.get(name, 0) + value
    return sums


def _name_domain(r: f.VirshDomainTuning | f.VirshMemoryStats) -> None:
    """A per-domain virsh output without its domain in the text takes it from
    the command line: "transcript:virsh vcpupin db01"."""
    if r.domain is None:
        r.domain = domain_from_command(r.source.artifact.removeprefix("transcript:"))


def _add_new_keys(target: Any, source: Any, name: str, *, prefix: str = "") -> None:
    """Add the keys of ``source``'s map ``name`` that ``target``'s lacks, each
    with its line (``lines[prefix + key]``)."""
    held, more = getattr(target, name), getattr(source, name)
    for key in [key for key in more if key not in held]:
        held[key] = more[key]
        if prefix + key in source.lines:
            target.lines[prefix + key] = source.lines[prefix + key]


def _extend_new(held: list[Any], more: Iterable[Any], key: Callable[[Any], Any]) -> None:
    """Append the items of ``more`` whose ``key`` no item of ``held`` has yet
    (each key once)."""
    seen = {key(item) for item in held}
    for item in more:
        if key(item) not in seen:
            held.append(item)
            seen.add(key(item))


def _fill_unset(target: Any, source: Any, names: Iterable[str]) -> list[str]:
    """Set the fields of ``names`` that ``target`` lacks (None) and ``source``
    has; the names set."""
    names = [name for name in names if getattr(target, name) is None and getattr(source, name) is not None]
    for name in names:
        setattr(target, name, getattr(source, name))
    return names


def _fill_unset_with_lines(target: Any, source: Any, names: Iterable[str]) -> None:
    """:func:`_fill_unset`, with the line of each field set."""
    filled = _fill_unset(target, source, names)
    _fill(target.lines, {name: source.lines[name] for name in filled if name in source.lines})


def _filled(obj: Any) -> int:
    """How many fields of a dataclass hold something (to pick the most complete)."""
    return sum(
        getattr(obj, fld.name) not in (None, "", [], {}, ())
        for fld in dataclasses.fields(obj)
        if fld.name not in ("source", "lines")
    )


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


def _config_only(db: f.DatabaseFacts) -> bool:
    """Facts read from option files only (no live variables, version or log)."""
    return (
        bool(db.variables)
        and all(src == "config" for src in db.variable_sources.values())
        and len(db.variable_sources) == len(db.variables)
        and not db.version
        and not db.events
    )


def _join_device_lists(base: f.GuestSignals, r: f.GuestSignals) -> None:
    """Add to ``base``'s virtio and emulated devices and hints those of ``r`` it lacks (each once)."""
    for key in ("virtio", "emulated", "hints"):
        have = getattr(base, key)
        have.extend(v for v in getattr(r, key) if v not in have)
        if key in r.lines:
            base.lines.setdefault(key, r.lines[key])


def _device_signals(r: f.PciDevices) -> f.GuestSignals | None:
    """A copy of what lspci's devices say of the machine (virtio or emulated
    devices, hints), cited to the lspci output; None when they say nothing."""
    signals = r.signals
    if not (signals.virtio or signals.emulated or signals.hints):
        return None
    signals.source = r.source
    return dataclasses.replace(
        signals,
        virtio=[*signals.virtio],
        emulated=[*signals.emulated],
        hints=[*signals.hints],
        lines=dict(signals.lines),
    )


def _merge_database_identity(db: f.DatabaseFacts, r: f.DatabaseFacts) -> None:
    """The server kind (MariaDB or Percona over plain MySQL) and the first version known."""
    if db.kind is None or (db.kind == "mysql" and r.kind in ("mariadb", "percona")):
        db.kind = r.kind or db.kind
    _merge_database_version(db, r)


def _merge_database_version(db: f.DatabaseFacts, r: f.DatabaseFacts) -> None:
    """The first version known, with its line."""
    if db.version is None and r.version:
        db.version = r.version
        if "version" in r.lines:
            db.lines["version"] = r.lines["version"]


def _merge_database_variables(db: f.DatabaseFacts, r: f.DatabaseFacts) -> None:
    """The first value of a name wins, except that a live server value
    replaces one configured in my.cnf."""
    for key, value in r.variables.items():
        source = r.variable_sources.get(key, "server")
        held = db.variable_sources.get(key, "server") if key in db.variables else None
        if held is None or (held == "config" and source == "server"):
            db.variables[key] = value
            db.variable_sources[key] = source
            if key in r.lines:
                db.lines[key] = r.lines[key]


_CPU_MAP_COUNTS = ("cpus", "sockets", "cores_per_socket", "threads_per_core", "numa_nodes")


def _cpu_map_of(cand: f.CpuTopology, best: f.CpuTopology) -> bool:
    """Whether ``cand`` is a CPU map alone (lscpu -e / -p, no summary) of the
    machine of ``best`` (same CPU count, when both know it)."""
    if not cpu_map_only(cand):
        return False
    return best.cpus is None or cand.cpus is None or best.cpus == cand.cpus


def _fill_from_cpu_map(best: f.CpuTopology, cand: f.CpuTopology) -> None:
    """Fill what ``best`` lacks from the CPU map ``cand``: counts, online CPUs, node CPU lists."""
    best.extra.setdefault("cpu_map_rows", cand.extra["cpu_map_rows"])
    _fill_unset_with_lines(best, cand, _CPU_MAP_COUNTS)
    if not best.online_cpus and cand.online_cpus:
        best.online_cpus = list(cand.online_cpus)
    if not best.numa_node_cpus and cand.numa_node_cpus:
        _copy_node_cpus(best, cand)


def _copy_node_cpus(best: f.CpuTopology, cand: f.CpuTopology) -> None:
    """Give ``best`` the node CPU lists of ``cand``, with their lines."""
    best.numa_node_cpus = {n: list(c) for n, c in cand.numa_node_cpus.items()}
    node_lines = {key: line for key, line in cand.lines.items() if key.startswith("numa_node_cpus.")}
    _fill(best.lines, node_lines)


def _capabilities_cpus(caps: f.VirshCapabilities | None) -> int | None:
    """How many CPUs the cells of ``virsh capabilities`` list (None: none, or no capabilities)."""
    if not caps:
        return None
    return sum(len(c.get("cpus") or []) for c in caps.cells.values()) or None


class _Pinned:
    """Whether an affinity pins: some host CPUs, not all of them (libvirt's
    default); never when the host's CPU count is unknown."""

    def __init__(self, host_cpus: int | None) -> None:
        self.everything = set(range(host_cpus)) if host_cpus else None

    def __call__(self, cpus: list[int]) -> bool:
        return self.everything is not None and bool(cpus) and set(cpus) != self.everything

    def every(self, affinity: dict[int, list[int]]) -> bool:
        return all(self(c) for c in affinity.values())


def _tuning_telling(t: f.VirshDomainTuning, pinned: _Pinned) -> bool:
    """Whether live tuning says something a Domain can hold."""
    return bool(
        t.vcpus
        or (t.affinity and pinned.every(t.affinity))
        or (t.emulator_affinity is not None and pinned(t.emulator_affinity))
        or t.numa_nodeset is not None
    )


def _tune_vcpu_count(dom: f.Domain, t: f.VirshDomainTuning, pinned: _Pinned, own: bool) -> None:
    if t.vcpus and dom.vcpu_current is None:
        dom.vcpu_current = len(t.vcpus)


def _tune_vcpupin(dom: f.Domain, t: f.VirshDomainTuning, pinned: _Pinned, own: bool) -> None:
    if not (t.affinity and not dom.vcpupin and pinned.every(t.affinity)):
        return
    dom.vcpupin = {v: list(c) for v, c in t.affinity.items()}
    if own:
        dom.lines.update({f"vcpupin[{v}]": t.lines[f"affinity[{v}]"] for v in t.affinity})
        dom.lines["vcpupin"] = min(dom.lines[f"vcpupin[{v}]"] for v in t.affinity)


def _tune_emulatorpin(dom: f.Domain, t: f.VirshDomainTuning, pinned: _Pinned, own: bool) -> None:
    if t.emulator_affinity is not None and dom.emulatorpin is None and pinned(t.emulator_affinity):
        dom.emulatorpin = list(t.emulator_affinity)
        if own:
            dom.lines["emulatorpin"] = t.lines["emulator_affinity"]


def _tune_numatune(dom: f.Domain, t: f.VirshDomainTuning, pinned: _Pinned, own: bool) -> None:
    if t.numa_nodeset is not None and dom.numatune_memory_mode is None:
        dom.numatune_memory_mode = t.numa_mode or "strict"
        dom.numatune_memory_nodeset = list(t.numa_nodeset)
        if own:
            dom.lines["numatune"] = dom.lines["numatune_memory_mode"] = t.lines["numa_nodeset"]


# what live tuning fills in a Domain, each only where the XML left it unknown
_TUNING_STEPS = (_tune_vcpu_count, _tune_vcpupin, _tune_emulatorpin, _tune_numatune)


def _names_of(domain: f.Domain) -> set[str]:
    """The name and UUID ``domain`` is known by (those it has)."""
    return {key for key in (domain.name, domain.uuid) if key}


# the CpuTopology fields ``virsh nodeinfo`` knows -> its own field (and line) of each
_NODEINFO_FIELDS = (
    ("architecture", "cpu_model"),
    ("cpus", "cpus"),
    ("sockets", "sockets"),
    ("cores_per_socket", "cores_per_socket"),
    ("threads_per_core", "threads_per_core"),
    ("numa_nodes", "numa_cells"),
)


def _fill_from_nodeinfo(cpu: f.CpuTopology, info: f.VirshNodeInfo) -> None:
    """Fill what ``cpu`` lacks from ``virsh nodeinfo`` (with its lines when
    ``cpu`` stands for nodeinfo itself)."""
    for name, key in _NODEINFO_FIELDS:
        value = getattr(info, key)
        if getattr(cpu, name) is None and value is not None:
            setattr(cpu, name, value)
            if cpu.source is info.source and key in info.lines:
                cpu.lines[name] = info.lines[key]


class HostAssembler:
    """Collects parser results of one host, then :meth:`finish` builds HostFacts."""

    def __init__(self, label: str = ""):
        self.host = f.HostFacts(label=label)
        self._cpu_candidates: list[f.CpuTopology] = []
        self._usage_candidates: list[f.CpuUsage] = []
        self._numa_parts: list[f.Parsed] = []
        self._hostnames: list[str] = []
        # names this host's blocks inherit from prompts that were another machine's
        # (a machine split off a paste, collectors.machines)
        self.not_named: set[str] = set()
        # (uuid, name) of the domains read: thousands of XMLs in one upload dedupe in O(1) each
        self._domain_keys: set[tuple[str, str | None]] = set()
        # guests of QEMU command lines (a libvirt qemu log, a ps row): added
        # at the end, unless a domain XML describes the same guest
        self._cmdline_domains: list[f.Domain] = []

    # -- bookkeeping
    def error(self, artifact: str, message: str, line: int | None = None) -> None:
        self.host.errors.append(f.ArtifactError(artifact, message, line))

    def artifact(self, name: str, kind: str | None, *, lines: int | None, parsed: bool, **extra: Any) -> None:
        entry: dict[str, Any] = {"name": name, "kind": kind, "lines": lines, "parsed": parsed}
        entry.update({k: v for k, v in extra.items() if v is not None})
        self.host.artifacts.append(entry)

    def hostname(self, name: str | None) -> None:
        name = (name or "").strip()
        if name in self.not_named:
            return
        if _plausible_hostname(name) and name not in self._hostnames:
            self._hostnames.append(name)

    # -- results
    def add(self, result: Any, *, kind: str | None = None, node: int | None = None) -> None:
        if isinstance(result, f.Parsed) and result.errors:
            # a partial parse: what it skipped is reported, what it read is kept
            self.host.errors.extend(result.errors)
            result.errors = []
        handler = _handler_for(type(result))
        if handler is not None:
            handler(self, result)
            return
        self.error(
            getattr(getattr(result, "source", None), "artifact", "") or "?",
            f"internal parser error: {kind or '?'} returned {type(result).__name__}",
        )

    def _first(self, attr: str, result: Any) -> None:
        if getattr(self.host, attr) is None:
            setattr(self.host, attr, result)

    def _merge_values(self, attr: str, result: Any, *maps: str, later_wins: bool = False) -> None:
        """Several greps of one family (``grep allocstall /proc/vmstat``, then
        ``grep compact``) add up to one fact: the first artifact keeps its
        values and lines, a later one adds the keys it lacks. With
        ``later_wins``, a setting read again later in the same paste (``cat
        .../scheduler``, then after the author's ``echo cfq > .../scheduler`` the
        same ``cat``) is the host's state now: the later reading replaces the
        earlier one for the keys it has, its lines the evidence (round L, 1601)."""
        current = getattr(self.host, attr)
        if current is None:
            setattr(self.host, attr, result)
            return
        for name in (*maps, "lines"):
            target, values = getattr(current, name), getattr(result, name)
            if later_wins:
                target.update(values)
            else:
                _fill(target, values)

    def _add_cpu_power(self, r: f.CpuPower) -> None:
        current = self.host.cpu_power
        if current is None:
            self.host.cpu_power = r
            return
        _fill(current.governors, r.governors)
        current.driver = current.driver or r.driver
        current.idle_driver = current.idle_driver or r.idle_driver
        current.idle_states = current.idle_states or r.idle_states
        _fill(current.lines, r.lines)

    def _add_tuned(self, r: f.TunedProfile) -> None:
        """tuned-adm's word (active or only preset) beats the file's."""
        current = self.host.tuned
        if current is None or (current.applied is None and r.applied is not None):
            self.host.tuned = r

    # /proc/meminfo beats some of its lines (a grep), which beat free's rounded figures
    _MEMINFO_RANK = {"proc": 0, "subset": 1, "free": 2}

    def _add_meminfo(self, r: f.Meminfo) -> None:
        current = self.host.meminfo
        if current is None:
            self.host.meminfo = r
            return
        rank = self._MEMINFO_RANK.get
        base = current
        if rank(r.origin, 1) < rank(current.origin, 1):
            # the better source becomes the base; what only the other had is kept
            base, r = r, current
            self.host.meminfo = base
        for key, value in r.values.items():
            base.values.setdefault(key, value)
            if key in r.lines:
                base.lines.setdefault(key, r.lines[key])

    def _add_guest_signals(self, r: f.GuestSignals) -> None:
        """DMI, systemd-detect-virt and virtio devices of every artifact: the
        first value of each kept, the devices joined; a hypervisor named by any
        of them makes the machine virtual."""
        base = self.host.guest_signals
        if base is None:
            self.host.guest_signals = r
            return
        _fill_unset(base, r, ("dmi_vendor", "dmi_product", "detected_virt"))
        _join_device_lists(base, r)
        if r.virtual is not None and base.virtual is not True:
            base.virtual = r.virtual

    def _add_pci_devices(self, r: f.PciDevices) -> None:
        """lspci's devices (the first output kept, another's new addresses
        added) and what they say of the machine, with the guest signals."""
        if self.host.pci_devices is None:
            self.host.pci_devices = r
        else:
            seen = {d.address for d in self.host.pci_devices.devices}
            self.host.pci_devices.devices.extend(d for d in r.devices if d.address not in seen)
        signals = _device_signals(r)
        if signals is not None:
            self._add_guest_signals(signals)

    def _add_memory_devices(self, r: f.MemoryDevices) -> None:
        """DIMMs of every dmidecode piece, each slot once; a piece with DIMMs
        becomes the base over one without (a VM's "no SMBIOS", other record types)."""
        current = self.host.memory_devices
        if current is None or (not current.dimms and r.dimms):
            self.host.memory_devices = r
            if current is not None:
                _fill(r.lines, current.lines)
            return
        _extend_new(current.dimms, r.dimms, operator.attrgetter("locator", "bank", "line"))

    def _add_process_numa(self, r: f.ProcessNumaUsage) -> None:
        # keyed by pid only where there is one: a process without a pid is never merged
        known: dict[tuple[int | None, str], f.ProcessNuma] = {
            (p.pid, p.tool): p for p in self.host.process_numa if p.pid is not None
        }
        for proc in r.processes:
            seen = known.get((proc.pid, proc.tool))
            if seen is None:
                self.host.process_numa.append(proc)
                if proc.pid is not None:
                    known[(proc.pid, proc.tool)] = proc
                continue
            _merge_process(seen, proc)

    def _add_numa_boot(self, r: f.NumaBootMessages) -> None:
        target = self.host.numa_boot
        if target is None:
            self.host.numa_boot = r
            return
        for name in ("no_numa_config", "numa_off", "fake_node"):
            if getattr(r, name):
                setattr(target, name, True)
                if name in r.lines:
                    target.lines.setdefault(name, r.lines[name])
        _fill_unset(target, r, ("emulated_nodes",))
        target.nodes = sorted(set(target.nodes) | set(r.nodes))
        target.srat_pxms = sorted(set(target.srat_pxms) | set(r.srat_pxms))
        target.messages.extend(m for m in r.messages if m not in target.messages)

    def _add_processes(self, r: f.ProcessList) -> None:
        self._cmdline_domains.extend(domains_of_processes(r))
        if self.host.processes is None or len(r.processes) > len(self.host.processes.processes):
            self.host.processes = r

    def _add_hugepages(self, r: f.HugePages) -> None:
        if self.host.hugepages is None:
            self.host.hugepages = r
            return
        target = self.host.hugepages
        _fill_unset_with_lines(target, r, ("thp_enabled", "thp_defrag", "nr_hugepages", "hugepagesize_kb"))

    def _add_sysctl(self, r: f.Sysctl) -> None:
        if self.host.sysctl is None:
            self.host.sysctl = r
            return
        _add_new_keys(self.host.sysctl, r, "values")

    def _add_kernel(self, r: f.KernelVersion) -> None:
        if self.host.kernel is None:
            self.host.kernel = r
            return
        _fill_unset(self.host.kernel, r, ("release", "os_release"))

    def _add_tc(self, r: f.TcQdiscs) -> None:
        # "tc qdisc show dev eth0" prints no "dev eth0" on its lines: the device is
        # in the command (transcript block label or archive member name)
        named = re.search(r"\bdev[\s_]+([\w.:@-]+)", r.source.artifact or "")
        if named:
            for q in r.qdiscs:
                if not q.device:
                    q.device = named.group(1)
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
        _extend_new(self.host.df.filesystems, r.filesystems, operator.attrgetter("filesystem", "mounted_on"))

    def _add_domain(self, r: f.Domain) -> None:
        if r.origin == "qemu_cmdline":
            self._cmdline_domains.append(r)
            return
        # /etc/libvirt/qemu/x.xml and "virsh dumpxml x" describe one guest
        if r.uuid:
            if (r.uuid, r.name) in self._domain_keys:
                return
            self._domain_keys.add((r.uuid, r.name))
        self.host.domains.append(r)

    def _add_freecell(self, r: f.VirshFreecell) -> None:
        if self.host.freecell is None:
            self.host.freecell = r
            if r.free_kb:
                self._numa_parts.append(r)

    def _add_tuning(self, r: f.VirshDomainTuning) -> None:
        _name_domain(r)
        self.host.domain_tuning.append(r)

    def _add_memstats(self, r: f.VirshMemoryStats) -> None:
        _name_domain(r)
        self.host.domain_memstats.append(r)

    def _add_irq_affinity(self, r: f.IrqAffinity) -> None:
        if self.host.irq_affinity is None:
            self.host.irq_affinity = r
            return
        _add_new_keys(self.host.irq_affinity, r, "cpus")

    def _add_database(self, r: f.DatabaseFacts) -> None:
        db = self.host.database
        if db is None:
            self.host.database = r
            return
        if _config_only(db) and not _config_only(r):
            # live output becomes the base (its source is what evidence cites),
            # the option file merges into it
            self.host.database = r
            self._add_database(db)
            return
        _merge_database_identity(db, r)
        _merge_database_variables(db, r)
        _fill(db.config, r.config)
        _add_new_keys(db, r, "status", prefix="status.")
        db.events.extend(r.events)
        for level, count in r.log_counts.items():
            db.log_counts[level] = db.log_counts.get(level, 0) + count

    # -- finishing
    def _pick_cpu(self) -> None:
        if not self._cpu_candidates:
            return
        # The most complete lscpu wins (over /proc/cpuinfo, which lacks the NUMA
        # lines); later ones in a transcript are often other machines quoted for
        # comparison, so they are not mixed in.
        best = max(
            enumerate(self._cpu_candidates),
            key=lambda p: ("cpuinfo" not in p[1].extra and "hwloc" not in p[1].extra, _filled(p[1]), -p[0]),
        )[1]
        self.host.cpu = best
        # ... except a CPU map (lscpu -e / -p) of the same machine (same CPU
        # count), which fills what the summary lacks: node CPU lists, counts.
        for cand in self._cpu_candidates:
            if cand is not best and _cpu_map_of(cand, best):
                _fill_from_cpu_map(best, cand)

    def _pick_usage(self) -> None:
        if not self._usage_candidates:
            return

        def score(pair: tuple[int, f.CpuUsage]) -> tuple[int, int, int, int]:
            index, usage = pair
            per_cpu = len([c for c in usage.per_cpu if c.cpu != "all"])
            return (per_cpu, usage.tool == "top", _filled(usage), -index)

        self.host.cpu_usage = max(enumerate(self._usage_candidates), key=score)[1]

    def _build_numa(self) -> None:
        """One NUMA topology from every NUMA-shaped part, the first part that
        knows a value winning (see the ``_merge_*`` functions below)."""
        if not self._numa_parts:
            return
        # hwloc-ls's tree (the only parser that yields a NumaTopology) rounds node
        # sizes to its unit (16GB): the kernel's own figures are merged first
        parts = sorted(self._numa_parts, key=lambda p: isinstance(p, f.NumaTopology))
        topo = f.NumaTopology()
        topo.source = parts[0].source
        hugepage_kb = self._hugepage_kb()
        for part in parts:
            topo.sources.setdefault(type(part).__name__, part.source)
            _fill(topo.lines, part.lines)
            _merge_numa_part(topo, part, hugepage_kb=hugepage_kb)
        if self.host.cpu:
            _fill_node_cpus(topo, self.host.cpu)
        topo.nodes = dict(sorted(topo.nodes.items()))
        self.host.numa = topo

    def _hugepage_kb(self) -> int:
        """The default huge page size in kB: /proc/meminfo's Hugepagesize, else the
        collected hugepages facts, else 2048 (x86_64 and 4K-page aarch64)."""
        size = self.host.meminfo.values.get("Hugepagesize") if self.host.meminfo else None
        if not size and self.host.hugepages:
            size = self.host.hugepages.hugepagesize_kb
        return size if isinstance(size, int) and size > 0 else 2048

    def _hugepages_from_meminfo(self) -> None:
        """/proc/meminfo's huge page count and size, where the hugepages facts
        lack them (or stand in for them)."""
        mem = self.host.meminfo
        if not mem:
            return
        found = f.HugePages(
            source=mem.source,
            nr_hugepages=mem.values.get("HugePages_Total"),
            hugepagesize_kb=mem.values.get("Hugepagesize"),
        )
        if found.nr_hugepages is None and found.hugepagesize_kb is None:
            return
        if "HugePages_Total" in mem.lines:  # (its line is there only with its value)
            found.lines["nr_hugepages"] = mem.lines["HugePages_Total"]
        if self.host.hugepages is None:
            self.host.hugepages = found
        else:
            _fill_unset_with_lines(self.host.hugepages, found, ("nr_hugepages", "hugepagesize_kb"))

    def _role(self) -> None:
        cpu = self.host.cpu
        signals = self.host.guest_signals
        if signals is not None and signals.virtual:
            # DMI "QEMU", a virtio NIC, systemd-detect-virt "kvm": a guest
            self.host.role = "guest"
        if cpu is None:
            return
        vendor = normalise_hypervisor(cpu.hypervisor_vendor)
        if vendor:
            cpu.hypervisor_vendor = vendor
            self.host.role = "guest"
        elif self.host.role == "guest" or cpu.extra.get("hypervisor_flag"):
            # DMI or virtio devices said so, or /proc/cpuinfo's "hypervisor" flag (a hypervisor not named)
            self.host.role = "guest"
        else:
            self.host.role = "physical"

    def _cpu_from_nodeinfo(self) -> None:
        """``virsh nodeinfo`` fills what lscpu did not say (or stands in for it)."""
        info = self.host.nodeinfo
        if info is None:
            return
        if self.host.cpu is None:
            self.host.cpu = f.CpuTopology(source=info.source)
        _fill_from_nodeinfo(self.host.cpu, info)

    def _host_cpu_count(self) -> int | None:
        """The host's CPU count as live tuning, lscpu or ``virsh capabilities`` says it."""
        from_tuning = next((t.host_cpus for t in self.host.domain_tuning if t.host_cpus), None)
        if from_tuning:
            return from_tuning
        if self.host.cpu and self.host.cpu.cpus:
            return self.host.cpu.cpus
        return _capabilities_cpus(self.host.capabilities)

    def _apply_tuning(self) -> None:
        """Live placement onto the domain it names, or onto a ``fragment`` Domain.

        An affinity covering every host CPU is libvirt's default, not a pin; when
        the host's CPU count is unknown an affinity cannot be told from the
        default and is left in ``domain_tuning`` only. Only what the XML left
        unknown is filled in."""
        pinned = _Pinned(self._host_cpu_count())
        for t in self.host.domain_tuning:
            dom = self._tuned_domain(t, pinned)
            if dom is None:
                continue  # nothing a Domain could hold: the tuning fact alone stays
            for step in _TUNING_STEPS:
                # evidence lines only where the Domain's source is this artifact
                step(dom, t, pinned, dom.source is t.source)

    def _tuned_domain(self, t: f.VirshDomainTuning, pinned: _Pinned) -> f.Domain | None:
        """The domain live tuning ``t`` names, else a new ``fragment`` Domain
        when ``t`` says something a Domain can hold, else None."""
        dom = next((d for d in self.host.domains if t.domain and d.name == t.domain), None)
        if dom is None and _tuning_telling(t, pinned):
            dom = f.Domain(name=t.domain, fragment=True, source=t.source)
            self.host.domains.append(dom)
        return dom

    def _add_cmdline_domains(self) -> None:
        """The guests of QEMU command lines that no domain XML (nor an earlier
        command line) describes: the XML says more, and one guest is one domain."""
        known = set().union(*map(_names_of, self.host.domains))
        for d in self._cmdline_domains:
            keys = _names_of(d)
            if not keys & known:
                known |= keys
                self.host.domains.append(d)

    def finish(self, *, hostname: str | None = None) -> f.HostFacts:
        self._add_cmdline_domains()
        self._pick_cpu()
        self._cpu_from_nodeinfo()
        self._apply_tuning()
        self._pick_usage()
        self._build_numa()
        self._hugepages_from_meminfo()
        self._role()
        if hostname:
            self._name_first(hostname)
        host = self.host
        host.hostname = host.hostname or (self._hostnames[0] if self._hostnames else None)
        if not host.label:
            host.label = host.hostname or ""
        host.conflicts = find_conflicts(host, self._numa_parts, self._cpu_candidates)
        self._mark_cut_usage()
        return host

    def _name_first(self, hostname: str) -> None:
        """Put ``hostname`` first of the host's names: the collector's manifest
        or sos's hostname file beats a prompt."""
        self.hostname(hostname)
        if hostname.strip() in self._hostnames:
            self._hostnames.remove(hostname.strip())
            self._hostnames.insert(0, hostname.strip())

    def _mark_cut_usage(self) -> None:
        """A per-CPU table (top's ``%CpuN`` lines) with fewer rows than the
        host's CPUs was cut by the paste (seed 000: Cpu0-Cpu53 of 72)."""
        usage = self.host.cpu_usage
        if usage is None:
            return
        rows = [c for c in usage.per_cpu if c.cpu != "all"]
        total = _every_cpu(self.host)
        if not rows or total is None or len(rows) >= total:
            return
        usage.cut, usage.truncated_after, usage.of_cpus = True, rows[-1].cpu, total


# What each parser result type adds to a host (the first class the result is
# an instance of wins).
_HANDLERS: tuple[tuple[type, Callable[[HostAssembler, Any], Any]], ...] = (
    (f.CpuTopology, lambda a, r: a._cpu_candidates.append(r)),
    (f.NumactlHardware, lambda a, r: a._numa_parts.append(r)),
    (f.NodeMeminfo, lambda a, r: a._numa_parts.append(r)),
    (f.Numastat, lambda a, r: a._numa_parts.append(r)),
    (f.Zoneinfo, lambda a, r: a._numa_parts.append(r)),
    (f.NumaTopology, lambda a, r: a._numa_parts.append(r)),
    (f.Meminfo, lambda a, r: a._add_meminfo(r)),
    (f.HugePages, lambda a, r: a._add_hugepages(r)),
    (f.Sysctl, lambda a, r: a._add_sysctl(r)),
    (f.KernelCmdline, lambda a, r: a._first("cmdline", r)),
    (f.TunedProfile, lambda a, r: a._add_tuned(r)),
    (f.KernelVersion, lambda a, r: a._add_kernel(r)),
    (f.CpuUsage, lambda a, r: a._usage_candidates.append(r)),
    (f.Softirqs, lambda a, r: a._first("softirqs", r)),
    (f.Interrupts, lambda a, r: a._first("interrupts", r)),
    (f.TcQdiscs, lambda a, r: a._add_tc(r)),
    (f.PingResult, lambda a, r: a.host.pings.append(r)),
    (f.DiskStats, lambda a, r: a._add_disks(r)),
    (f.DiskFree, lambda a, r: a._add_df(r)),
    (f.Domain, lambda a, r: a._add_domain(r)),
    (f.VirshVersion, lambda a, r: a._first("virsh_version", r)),
    (f.VirshList, lambda a, r: a._first("virsh_list", r)),
    (f.VirshCapabilities, lambda a, r: a._first("capabilities", r)),
    (f.VirshNodeInfo, lambda a, r: a._first("nodeinfo", r)),
    (f.VirshFreecell, lambda a, r: a._add_freecell(r)),
    (f.VirshDomainTuning, lambda a, r: a._add_tuning(r)),
    (f.NicChannels, lambda a, r: a.host.nic_channels.append(r)),
    (f.IrqAffinity, lambda a, r: a._add_irq_affinity(r)),
    (f.DatabaseFacts, lambda a, r: a._add_database(r)),
    (
        f.OceanBaseFacts,
        lambda a, r: a._merge_values("oceanbase", r, "parameters", "proxy_config", "plan_type_counts"),
    ),
    (f.ServiceLog, lambda a, r: a.host.services.append(r)),
    (f.BenchmarkResults, lambda a, r: a.host.benchmarks.extend(r.results)),
    (f.MemoryDevices, lambda a, r: a._add_memory_devices(r)),
    (f.GuestSignals, lambda a, r: a._add_guest_signals(r)),
    (f.PciDevices, lambda a, r: a._add_pci_devices(r)),
    (f.ProcessNumaUsage, lambda a, r: a._add_process_numa(r)),
    (f.Vmstat, lambda a, r: a._first("vmstat", r)),
    (f.ProcVmstat, lambda a, r: a._merge_values("proc_vmstat", r, "values")),
    (f.KsmState, lambda a, r: a._merge_values("ksm", r, "values")),
    (
        f.IoSchedulers,
        lambda a, r: a._merge_values(
            "io_schedulers", r, "active", "available", "rotational", later_wins=True
        ),
    ),
    (f.CpuPower, lambda a, r: a._add_cpu_power(r)),
    (f.NumaBootMessages, lambda a, r: a._add_numa_boot(r)),
    (f.NetDevStats, lambda a, r: a._first("net_dev", r)),
    (f.ProcessList, lambda a, r: a._add_processes(r)),
    (f.TaskAffinity, lambda a, r: a.host.affinities.append(r)),
    (f.NumaPolicy, lambda a, r: a._first("numa_policy", r)),
    (f.XenVcpuList, lambda a, r: a._first("xen_vcpus", r)),
    (f.VirshMemoryStats, lambda a, r: a._add_memstats(r)),
)


_HANDLER_OF: dict[type, Callable[[HostAssembler, Any], Any] | None] = {}


def _handler_for(kind: type) -> Callable[[HostAssembler, Any], Any] | None:
    """The handler of results of type ``kind`` (looked up once per type)."""
    if kind not in _HANDLER_OF:
        _HANDLER_OF[kind] = next((handler for cls, handler in _HANDLERS if issubclass(kind, cls)), None)
    return _HANDLER_OF[kind]
