"""Patch a KVM guest's domain XML: pinning, guest NUMA, memory binding.

:func:`domain_remedy` takes the guest's current domain XML and its host's facts
and returns the patched XML, a unified diff against the current text, the
equivalent ``virsh`` commands and the rollback. Only the elements below are
touched; everything else in the document is written back byte for byte.

==================  =========================================================
``<vcpu>``           ``placement='static'``, no ``current``/``cpuset``: the
                     guest keeps its current vCPU count, hot-plug slots go
``<maxMemory>``      removed (memory hot-plug blocks guest NUMA)
``<iothreads>``      one iothread added for virtio data disks that have none
``<cputune>``        ``vcpupin`` per vCPU, ``emulatorpin``, ``iothreadpin``
``<numatune>``       ``<memory mode='strict' nodeset=…>`` + ``<memnode>`` per cell
``<cpu>``            ``mode='host-passthrough'``, ``<topology>`` mirroring the
                     host (threads=2 on SMT), ``<numa>`` cells
``<memoryBacking>``  ``<hugepages/>`` when the node has enough free huge pages
==================  =========================================================

Sample (a 2-vCPU guest on a 2-node host without SMT)::

    >>> from collectors.facts import HostFacts, NumaNode, NumaTopology
    >>> host = HostFacts(numa=NumaTopology(nodes={
    ...     0: NumaNode(0, cpus=[0, 1, 2, 3], free_mb=4096),
    ...     1: NumaNode(1, cpus=[4, 5, 6, 7], free_mb=8192)}))
    >>> xml = "<domain type='kvm'><name>db</name><memory>1048576</memory><vcpu>2</vcpu></domain>"
    >>> r = domain_remedy(domain_xml=xml, host=host)
    >>> [c for c in r.commands if "vcpupin" in c]
    ['virsh vcpupin db 0 4 --config', 'virsh vcpupin db 1 5 --config']
"""

from __future__ import annotations

import difflib
import re
import shlex
import xml.etree.ElementTree as ET
from collections.abc import Iterator

from django.utils.translation import gettext as _

from collectors.cpulist import format_cpulist, parse_cpulist
from collectors.derived.libvirt import domain_vcpus
from collectors.facts import Domain, DomainDisk, HostFacts, ParseError
from collectors.parsers.libvirt import parse_domain
from engine.remedies import xmledit
from engine.remedies.base import NoRemedy, Remedy
from engine.remedies.cloud import manager_notes
from engine.remedies.topology import (
    CellPlan,
    HostTopology,
    Placement,
    check_placement,
    host_topology,
    plan_placement,
)
from engine.rules import guest_disks

MEASURES = (
    "disable-cpu-hotplug",
    "pin-vcpus",
    "pin-emulator",
    "pin-iothreads",
    "guest-numa-topology",
    "numatune-memory-binding",
    "cpu-mode-host-passthrough",
)
RULES = (
    "kvm.vcpu_hotplug_enabled",
    "kvm.vcpus_unpinned",
    "kvm.emulator_unpinned",
    "kvm.iothread_unpinned",
    "kvm.guest_numa_missing",
    "kvm.memory_not_bound",
    "kvm.pinning_spans_nodes",
    "kvm.cpu_model_hides_cache",
    "kvm.flat_socket_topology",
)
# cputune children that libvirt writes before the pins
_CPUTUNE_SCALARS = (
    "shares",
    "period",
    "quota",
    "global_period",
    "global_quota",
    "emulator_period",
    "emulator_quota",
    "iothread_period",
    "iothread_quota",
)
_MEMORY_DEVICES = ("dimm", "nvdimm", "virtio-mem", "virtio-pmem", "sgx-epc")
_NOISE_FREE = re.compile(r"^(\s|<!--.*?-->|<\?xml[^>]*\?>)*$", re.DOTALL)


def _label(d: Domain) -> str:
    return d.name or d.uuid or "domain"


def _refuse(d: Domain, root: ET.Element) -> str | None:
    """Why this domain cannot get a patch, or None."""
    if d.recovered:
        return _(
            "the XML is a pasted fragment, not a whole domain: the patch needs the complete "
            "`virsh dumpxml --inactive` output"
        )
    if d.xml_root == "domstatus":
        return _(
            "this is libvirt's runtime status file (<domstatus>), not a definition: "
            "use `virsh dumpxml --inactive <domain>` as input"
        )
    if d.domain_type != "kvm":
        return _(
            "domain type is %(type)s, not kvm: pinning and host-passthrough only help "
            "hardware-virtualised guests"
        ) % {"type": d.domain_type or _("missing")}
    if d.vcpus is None:
        return _("the domain has no <vcpu> element, so there are no vCPUs to pin")
    return _memory_devices_reason(root)


def _memory_devices_reason(root: ET.Element) -> str | None:
    """Why attached memory devices (DIMMs, virtio-mem ...) stop the patch, or None without any."""
    models = sorted({m.get("model") or "" for m in root.iter("memory") if m.get("model") in _MEMORY_DEVICES})
    if not models:
        return None
    return _(
        "memory devices (%(models)s) are attached: hot-unplug them and remove maxMemory first, "
        "the guest NUMA cells cannot be sized automatically around them"
    ) % {"models": ", ".join(models)}


def _iothread_ids(d: Domain) -> list[int]:
    """Existing iothread ids; libvirt numbers unlisted ones with the lowest free ids."""
    ids = list(d.iothread_ids)
    candidate = 1
    while len(ids) < d.iothreads:
        if candidate not in ids:
            ids.append(candidate)
        candidate += 1
    return sorted(ids)


def _el(tag: str, **attrs: str) -> ET.Element:
    return ET.Element(tag, {k.rstrip("_"): v for k, v in attrs.items()})


def _patch_iothreads(
    root: ET.Element, d: Domain, new_id: int | None, thread_less: list[str], notes: list[str]
) -> None:
    """Give the virtio data disks ``thread_less`` the new iothread ``new_id``."""
    if new_id is None:
        return
    _declare_iothread(root, new_id, total=len(_iothread_ids(d)) + 1)
    for disk in _disks_named(root, thread_less):
        driver = disk.find("driver")
        if driver is None:
            driver = xmledit.add_first(disk, _el("driver", name="qemu"), level=3)
        driver.set("iothread", str(new_id))
    notes.append(
        _("iothread %(id)s added for data disk(s) %(disks)s")
        % {"id": new_id, "disks": ", ".join(thread_less)}
    )


def _declare_iothread(root: ET.Element, new_id: int, *, total: int) -> None:
    """Add iothread ``new_id`` to ``<iothreadids>`` and count ``total`` in
    ``<iothreads>`` (added when the domain declares neither)."""
    ids_el = root.find("iothreadids")
    count_el = root.find("iothreads")
    if ids_el is not None:
        xmledit.add_child(ids_el, _el("iothread", id=str(new_id)), level=2)
    if count_el is not None:
        count_el.text = str(total)
    elif ids_el is None:
        count = _el("iothreads")
        count.text = str(total)
        xmledit.add_child(root, count, level=1, after=("vcpu", "vcpus"))


def _disks_named(root: ET.Element, targets: list[str]) -> Iterator[ET.Element]:
    """The ``<disk device='disk'>`` elements whose target is one of ``targets``."""
    for disk in root.iter("disk"):
        target = disk.find("target")
        if disk.get("device", "disk") == "disk" and target is not None and target.get("dev") in targets:
            yield disk


def _data_disks(d: Domain) -> list[DomainDisk]:
    """The data disks: the domain's disks (not its CD-ROMs or floppies) after the first, its system disk."""
    return guest_disks(d)[1:]


def _data_disks_without_thread(d: Domain) -> list[str]:
    """virtio data disks without an iothread (only virtio-blk takes the attribute)."""
    return [x.target for x in _data_disks(d) if x.iothread is None and x.bus == "virtio" and x.target]


def _patch_cputune(root: ET.Element, placement: Placement) -> None:
    cputune = root.find("cputune")
    if cputune is None:
        cputune = xmledit.add_child(
            root, _el("cputune"), level=1, after=("vcpu", "vcpus", "iothreads", "iothreadids")
        )
    for old in [c for c in cputune if c.tag in ("vcpupin", "emulatorpin", "iothreadpin")]:
        xmledit.remove_child(cputune, old)
    after = list(_CPUTUNE_SCALARS)
    for child in _pin_elements(placement):
        xmledit.add_child(cputune, child, level=2, after=tuple(after))
        after.append(child.tag)


def _pin_elements(placement: Placement) -> list[ET.Element]:
    """The placement's ``<vcpupin>``s, ``<emulatorpin>`` and ``<iothreadpin>``s, in libvirt's order."""
    return [
        *(_el("vcpupin", vcpu=str(v), cpuset=str(c)) for v, c in sorted(placement.vcpupin.items())),
        _el("emulatorpin", cpuset=format_cpulist(placement.emulator_cpus)),
        *(
            _el("iothreadpin", iothread=str(i), cpuset=format_cpulist(cpus))
            for i, cpus in sorted(placement.iothread_cpus.items())
        ),
    ]


def _patch_numatune(root: ET.Element, placement: Placement) -> None:
    old = root.find("numatune")
    if old is not None:
        index = list(root).index(old)
        xmledit.remove_child(root, old)
        anchor = tuple(c.tag for c in list(root)[max(index - 1, 0) : index]) or ("cputune",)
    else:
        anchor = ("vcpu", "vcpus", "iothreads", "iothreadids", "cputune")
    numatune = _el("numatune")
    numatune.append(_el("memory", mode="strict", nodeset=format_cpulist(placement.nodes)))
    for cell in placement.cells:
        numatune.append(_el("memnode", cellid=str(cell.cell), mode="strict", nodeset=str(cell.node)))
    xmledit.add_child(root, numatune, level=1, after=anchor)


def _patch_cpu(root: ET.Element, placement: Placement, distances: dict[tuple[int, int], int]) -> None:
    cpu = root.find("cpu")
    if cpu is None:
        cpu = xmledit.add_child(root, _el("cpu"), level=1, after=("os", "features"))
    kept = {k: v for k, v in cpu.attrib.items() if k in ("check", "migratable")}
    attrs = {"mode": "host-passthrough", **kept}
    cpu.attrib.clear()
    cpu.attrib.update(attrs)
    # a named model/vendor contradicts host-passthrough
    for child in [c for c in cpu if c.tag in ("model", "vendor")]:
        xmledit.remove_child(cpu, child)
    _patch_cpu_topology(cpu, placement)
    _patch_cpu_numa(cpu, placement, distances)


def _patch_cpu_topology(cpu: ET.Element, placement: Placement) -> None:
    topo = cpu.find("topology")
    if topo is None:
        topo = xmledit.add_first(cpu, _el("topology"), level=2)
    new = {"sockets": str(placement.sockets)}
    for extra in ("dies", "clusters"):
        if extra in topo.attrib:
            new[extra] = "1"
    new.update(cores=str(placement.cores), threads=str(placement.threads))
    topo.attrib.clear()
    topo.attrib.update(new)


def _patch_cpu_numa(cpu: ET.Element, placement: Placement, distances: dict[tuple[int, int], int]) -> None:
    """The guest's NUMA cells, one per placement cell (keeping each old cell's
    memAccess/discard), with the host nodes' distances between them."""
    old_cells = _remove_old_cells(cpu)
    numa = _el("numa")
    for plan in placement.cells:
        cell = _el(
            "cell",
            id=str(plan.cell),
            cpus=format_cpulist(plan.vcpus),
            memory=str(plan.memory_kb),
            unit="KiB",
            **old_cells.get(str(plan.cell), {}),
        )
        siblings = _cell_distances(plan, placement, distances) if len(placement.cells) > 1 else None
        if siblings is not None and len(siblings):
            cell.append(siblings)
        numa.append(cell)
    xmledit.add_child(cpu, numa, level=2, after=("topology", "feature", "cache", "maxphysaddr"))


def _remove_old_cells(cpu: ET.Element) -> dict[str, dict[str, str]]:
    """Remove the guest's ``<numa>`` (HMAT interconnects refer to its old
    cells), keeping each cell's memAccess/discard by cell id."""
    numa = cpu.find("numa")
    if numa is None:
        return {}
    old_cells = {
        cell.get("id") or "": {k: v for k, v in cell.attrib.items() if k in ("memAccess", "discard")}
        for cell in numa.findall("cell")
    }
    xmledit.remove_child(cpu, numa)
    return old_cells


def _cell_distances(
    plan: CellPlan, placement: Placement, distances: dict[tuple[int, int], int]
) -> ET.Element | None:
    """A cell's ``<distances>``: the host distance from its node to each
    cell's node (None without host distances)."""
    if not distances:
        return None
    dist = _el("distances")
    for other in placement.cells:
        value = distances.get((plan.node, other.node))
        if value is not None:
            dist.append(_el("sibling", id=str(other.cell), value=str(value)))
    return dist


def _fit_hugepage_nodesets(root: ET.Element, placement: Placement, notes: list[str]) -> None:
    """``<page nodeset=…>`` names guest cells; keep only cells that still exist."""
    hugepages = root.find("memoryBacking/hugepages")
    if hugepages is None:
        return
    cells = {c.cell for c in placement.cells}
    for page in [p for p in hugepages.findall("page") if p.get("nodeset") is not None]:
        wanted = _page_cells(page)
        kept = wanted & cells
        if kept == wanted:
            continue
        if kept:
            page.set("nodeset", format_cpulist(kept))
        else:
            xmledit.remove_child(hugepages, page)
        notes.append(
            _("huge page size for guest cell(s) %(cells)s dropped: the new guest topology has no such cell")
            % {"cells": format_cpulist(wanted - kept)}
        )


def _page_cells(page: ET.Element) -> set[int]:
    """The guest cells a ``<page nodeset=…>`` names (none when the nodeset cannot be read)."""
    try:
        return set(parse_cpulist(page.get("nodeset") or ""))
    except ValueError:
        return set()


def _patch_hugepages(root: ET.Element) -> None:
    backing = root.find("memoryBacking")
    if backing is None:
        backing = xmledit.add_child(root, _el("memoryBacking"), level=1, after=("memory", "currentMemory"))
    if backing.find("hugepages") is None:
        xmledit.add_child(backing, _el("hugepages"), level=2)


def _measure_commands(
    name: str, d: Domain, placement: Placement, new_iothread: int | None, n: int
) -> dict[str, list[str]]:
    """The virsh commands of each measure, in the order they are run."""
    dom = shlex.quote(name)
    out = _hotplug_commands(dom, d, n)
    out["pin-vcpus"] = [f"virsh vcpupin {dom} {v} {c} --config" for v, c in sorted(placement.vcpupin.items())]
    out["pin-emulator"] = [f"virsh emulatorpin {dom} {format_cpulist(placement.emulator_cpus)} --config"]
    out["pin-iothreads"] = ([f"virsh iothreadadd {dom} {new_iothread} --config"] if new_iothread else []) + [
        f"virsh iothreadpin {dom} {i} {format_cpulist(cpus)} --config"
        for i, cpus in sorted(placement.iothread_cpus.items())
    ]
    out["numatune-memory-binding"] = [
        f"virsh numatune {dom} --mode strict --nodeset {format_cpulist(placement.nodes)} --config"
    ]
    return out


def _hotplug_commands(dom: str, d: Domain, n: int) -> dict[str, list[str]]:
    """The commands that leave domain ``dom`` with ``n`` vCPUs and no hot-plug
    slots; none when it has that already."""
    if (d.vcpus or 0) == n and (d.vcpu_current or n) == n:
        return {}
    return {
        "disable-cpu-hotplug": [
            f"virsh setvcpus {dom} {n} --maximum --config",
            f"virsh setvcpus {dom} {n} --config",
        ]
    }


def _commands(name: str, per_measure: dict[str, list[str]]) -> list[str]:
    dom = shlex.quote(name)
    out = [
        f"virsh dumpxml --inactive --security-info {dom} > {shlex.quote(name + '.original.xml')}"
        "  # keep for rollback",
    ]
    for commands in per_measure.values():
        out += commands
    out.append(
        "# no virsh command for guest NUMA cells, <memnode>, CPU mode/topology, the disk's iothread, "
        "huge pages and removing maxMemory: define the patched XML (it also carries everything above)"
    )
    out.append(f"virsh define {shlex.quote(name + '.patched.xml')}")
    out.append(f"virsh shutdown {dom}  # then, once it is off: virsh start {dom}")
    return out


def _iothread_fragment(doc: xmledit.Document, iothreadpins: list[ET.Element], thread_less: list[str]) -> str:
    """The disks' new drivers, the iothreads and their pins."""
    root = doc.root
    disk_drivers = [
        f"<!-- disk {target} -->\n" + xmledit.fragment([driver], doc)
        for target, driver in _disk_drivers(root, thread_less)
    ]
    threads = [e for e in (root.find("iothreads"), root.find("iothreadids")) if e is not None]
    parts = (
        *disk_drivers,
        xmledit.fragment(threads, doc),
        xmledit.fragment(iothreadpins, doc, wrapper="cputune"),
    )
    return "\n".join(part for part in parts if part)


def _disk_drivers(root: ET.Element, targets: list[str]) -> Iterator[tuple[str, ET.Element]]:
    """(target, ``<driver>``) of each disk whose target is one of ``targets`` and that has a driver."""
    for disk in root.iter("disk"):
        target = disk.find("target")
        driver = disk.find("driver")
        if target is not None and target.get("dev") in targets and driver is not None:
            yield target.get("dev") or "", driver


def _fragments(
    doc: xmledit.Document,
    name: str,
    per_measure: dict[str, list[str]],
    *,
    hugepages: bool,
    thread_less: list[str],
) -> tuple[tuple[str, str], ...]:
    """Per measure: the elements of the patched document it sets, then its
    virsh commands (the same placement as the whole patch, one measure at a time)."""
    header = f"<!-- virsh edit {name} -->"
    xml = {
        "disable-cpu-hotplug": _element_fragment(doc, "vcpu"),
        "pin-vcpus": xmledit.fragment(_pins(doc, "vcpupin"), doc, wrapper="cputune"),
        "pin-emulator": xmledit.fragment(_pins(doc, "emulatorpin"), doc, wrapper="cputune"),
        "pin-iothreads": _iothread_fragment(doc, _pins(doc, "iothreadpin"), thread_less),
        "numatune-memory-binding": _element_fragment(doc, "numatune"),
        "guest-numa-topology": _element_fragment(doc, "cpu"),
        "cpu-mode-host-passthrough": _element_fragment(doc, "cpu"),
    }
    if hugepages:
        xml["static-hugepages"] = _element_fragment(doc, "memoryBacking")
    out = []
    for slug, text in xml.items():
        commands = per_measure.get(slug, [])
        if not text and not commands:
            continue
        out.append((slug, "\n".join([header, *([text] if text else []), *commands])))
    return tuple(out)


def _pins(doc: xmledit.Document, tag: str) -> list[ET.Element]:
    """The ``<cputune>`` children named ``tag`` (``vcpupin``, ``emulatorpin``, ``iothreadpin``)."""
    cputune = doc.root.find("cputune")
    return cputune.findall(tag) if cputune is not None else []


def _element_fragment(doc: xmledit.Document, tag: str) -> str:
    """The fragment of the root's child ``tag`` ("" without one)."""
    found = doc.root.find(tag)
    return xmledit.fragment([found] if found is not None else [], doc)


def domain_remedy(*, domain_xml: str, host: HostFacts | None) -> Remedy | NoRemedy:
    """The patch for one guest (``domain_xml``) on ``host``; see the module doc.

    Returns :class:`NoRemedy` with a reason for fragments, runtime status
    files, non-KVM domains, domains without ``<vcpu>``, guests with memory
    devices, hosts without NUMA facts and hosts without room for the guest.
    """
    read = _read_domain(domain_xml)
    if isinstance(read, NoRemedy):
        return read
    d, doc = read
    name = _label(d)
    key = f"libvirt:{name}"
    reason = _refuse(d, doc.root if doc is not None else ET.Element("domain"))
    if reason or doc is None:
        return NoRemedy(key=key, reason=reason or _("no <domain> document"))
    topo = host_topology(host=host, target=d)
    if isinstance(topo, NoRemedy):
        return NoRemedy(key=key, reason=topo.reason)

    n = domain_vcpus(d)
    thread_less = _data_disks_without_thread(d)
    new_iothread, threads = _iothreads_after_patch(d, thread_less)
    placement = _checked_placement(key, d, topo, threads)
    if isinstance(placement, NoRemedy):
        return placement

    notes = list(placement.notes)
    _patch_domain(doc.root, d, n, placement, topo, new_iothread, thread_less, notes)
    notes.extend(manager_notes(d))
    per_measure = _measure_commands(name, d, placement, new_iothread, n)
    fragments = _fragments(
        doc, name, per_measure, hugepages=placement.hugepages and not d.hugepages, thread_less=thread_less
    )
    original, patched = _original_and_patched(doc, domain_xml)
    measures = [*MEASURES, *(["static-hugepages"] if placement.hugepages else [])]
    return Remedy(
        key=key,
        title=_("Pin guest %(name)s to host node(s) %(nodes)s")
        % {"name": name, "nodes": format_cpulist(placement.nodes)},
        text=patched,
        path=f"{name}.patched.xml",
        rollback=(
            f"virsh define {shlex.quote(name + '.original.xml')}\n"
            f"virsh shutdown {shlex.quote(name)}  # then virsh start {shlex.quote(name)}"
        ),
        measures=tuple(measures),
        rules=RULES,
        disruption="guest reboot",
        notes=tuple(notes),
        diff=_unified_diff(name, original, patched),
        commands=tuple(_commands(name, per_measure)),
        original=original,
        patched=patched,
        fragments=fragments,
        placement=placement,
        data={"domain": name},
    )


def _iothreads_after_patch(d: Domain, thread_less: list[str]) -> tuple[int | None, list[int]]:
    """The id of the iothread added for the data disks ``thread_less`` (None
    when there are none), and every iothread id the patched domain has."""
    existing = _iothread_ids(d)
    if not thread_less:
        return None, existing
    new_iothread = max(existing, default=0) + 1
    return new_iothread, [*existing, new_iothread]


def _read_domain(domain_xml: str) -> tuple[Domain, xmledit.Document | None] | NoRemedy:
    """The domain's facts, and its document when it is a whole ``<domain>``
    read without recovery (the only kind a patch is written into)."""
    try:
        d = parse_domain(domain_xml)
        doc = xmledit.load(domain_xml) if d.xml_root == "domain" and not d.recovered else None
    except ParseError as exc:
        unreadable = _("the domain XML cannot be read: %(error)s") % {"error": exc.message}
        return NoRemedy(key="libvirt", reason=unreadable)
    return d, doc


def _checked_placement(key: str, d: Domain, topo: HostTopology, threads: list[int]) -> Placement | NoRemedy:
    """Where the guest goes on the host (its vCPUs, memory and ``threads``),
    checked: a planner bug must never reach a user as a plausible patch."""
    memory_kb = d.memory_kb or sum(c.memory_kb or 0 for c in d.numa_cells) or None
    placement = plan_placement(
        topology=topo, vcpus=domain_vcpus(d), memory_kb=memory_kb, iothread_ids=threads
    )
    if isinstance(placement, NoRemedy):
        return NoRemedy(key=key, reason=placement.reason, notes=topo.notes)
    problems = check_placement(placement, topo)
    if problems:
        failed = _("the generated placement failed its checks: %(problems)s") % {
            "problems": "; ".join(problems)
        }
        return NoRemedy(key=key, reason=failed)
    return placement


def _unified_diff(name: str, original: str, patched: str) -> str:
    return "".join(
        difflib.unified_diff(
            original.splitlines(keepends=True),
            patched.splitlines(keepends=True),
            fromfile=f"{name}.original.xml",
            tofile=f"{name}.patched.xml",
        )
    )


def _patch_domain(
    root: ET.Element,
    d: Domain,
    n: int,
    placement: Placement,
    topo: HostTopology,
    new_iothread: int | None,
    thread_less: list[str],
    notes: list[str],
) -> None:
    """Patch the domain document in place for ``placement`` (vCPUs, hot-plug,
    iothreads, cputune, numatune, CPU topology, huge pages); ``notes`` say
    what changed beyond the pins."""
    _patch_vcpus(root, d, n, notes)
    _patch_iothreads(root, d, new_iothread, thread_less, notes)
    _patch_cputune(root, placement)
    _patch_numatune(root, placement)
    _patch_cpu(root, placement, topo.distances)
    _fit_hugepage_nodesets(root, placement, notes)
    if placement.hugepages and not d.hugepages:
        _patch_hugepages(root)
    notes.extend(_not_virtio_note(d))
    notes.append(
        _("host-passthrough exposes the host CPU model: live migration only works to hosts with the same CPU")
    )


def _not_virtio_note(d: Domain) -> list[str]:
    """The note naming the data disks without an iothread that cannot take one
    (not virtio-blk); none when there are none."""
    skipped = [x.target for x in _data_disks(d) if x.iothread is None and x.bus != "virtio" and x.target]
    if not skipped:
        return []
    return [
        _("data disk(s) %(disks)s are not virtio-blk and cannot use an iothread")
        % {"disks": ", ".join(skipped)}
    ]


def _patch_vcpus(root: ET.Element, d: Domain, n: int, notes: list[str]) -> None:
    """``n`` static vCPUs, CPU and memory hot-plug removed."""
    vcpu = root.find("vcpu")
    assert vcpu is not None  # _refuse checked
    if d.vcpus and n < d.vcpus:
        notes.append(
            _("CPU hot-plug removed: the guest keeps its %(n)s current vCPUs (maximum was %(max)s)")
            % {"n": n, "max": d.vcpus}
        )
    vcpu.text = str(n)
    vcpu.attrib.pop("current", None)
    vcpu.attrib.pop("cpuset", None)
    vcpu.set("placement", "static")
    for tag, why in (("vcpus", _("per-vCPU hot-plug state")), ("maxMemory", _("memory hot-plug"))):
        el = root.find(tag)
        if el is not None:
            xmledit.remove_child(root, el)
            notes.append(_("<%(tag)s> removed (%(why)s)") % {"tag": tag, "why": why})


def _original_and_patched(doc: xmledit.Document, domain_xml: str) -> tuple[str, str]:
    """The document before and after, each ending with a newline; a pasted dump
    with shell prompts or other text around it is compared without them."""
    patched = xmledit.dump(doc)
    original = domain_xml
    if not (_NOISE_FREE.match(doc.prefix) and _NOISE_FREE.match(doc.suffix)):
        start = len(doc.prefix)
        original = domain_xml[start : len(domain_xml) - len(doc.suffix)]
        patched = patched[start : len(patched) - len(doc.suffix)]
    if not original.endswith("\n"):
        original, patched = original + "\n", patched + "\n"
    return original, patched
