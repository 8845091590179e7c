"""libvirt domain XML: ``virsh dumpxml``, ``/etc/libvirt/qemu/*.xml``, runtime status
documents (``<domstatus>`` wrapping ``<domain>``) and fragments pasted into tickets.

A full document looks like::

    <domain type='kvm'>
      <name>db01</name>
      <memory unit='KiB'>33554432</memory>
      <vcpu placement='static' current='16'>32</vcpu>
      <cputune>
        <vcpupin vcpu='0' cpuset='1'/>
        <emulatorpin cpuset='67'/>
      </cputune>
      <cpu mode='host-passthrough'><topology sockets='1' cores='32' threads='1'/></cpu>
    </domain>

A pasted fragment is a run of sibling elements with no ``<domain>`` root, often with
``...`` lines standing for elided children and tags left open::

    <iothreads>4</iothreads>
    <cputune>
      <vcpupin vcpu='0' cpuset='1' />
      ...
    </cputune>
    <cpu mode='host-passthrough'>
      <numa>
        <cell id='0' cpus='0-31' memory='33554432' unit='KiB'>
        </numa>
    </cpu>

Fragments are completed (ellipsis lines dropped, wrapped in ``<domain>``, open tags
closed) and parsed like a document, with ``recovered=True``. Everything, the
completed text included, goes through ``defusedxml`` with DTDs, entities and
external references forbidden, so a hostile upload raises ``ParseError`` instead of
expanding.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

import defusedxml
import defusedxml.ElementTree as SafeET

from collectors.cpulist import parse_cpulist
from collectors.facts import Domain, DomainDisk, DomainInterface, GuestNumaCell, ParseError
from collectors.parsers import register

# Bytes per unit as libvirt documents them (formatdomain.html#memory-allocation).
_UNIT_BYTES = {
    "b": 1,
    "bytes": 1,
    "kb": 1000,
    "k": 1024,
    "kib": 1024,
    "mb": 1000**2,
    "m": 1024**2,
    "mib": 1024**2,
    "gb": 1000**3,
    "g": 1024**3,
    "gib": 1024**3,
    "tb": 1000**4,
    "t": 1024**4,
    "tib": 1024**4,
    "pb": 1000**5,
    "p": 1024**5,
    "pib": 1024**5,
    "eb": 1000**6,
    "e": 1024**6,
    "eib": 1024**6,
}

# Elements that only occur in domain XML: a fragment must contain one of them.
_DOMAIN_ELEMENTS = (
    "vcpu",
    "vcpus",
    "cputune",
    "vcpupin",
    "numatune",
    "iothreads",
    "iothreadids",
    "memoryBacking",
    "currentMemory",
    "maxMemory",
    "cpu",
    "disk",
)

_FRAGMENT_HINT = re.compile(r"<(cputune|vcpupin|numatune|iothreadpin|emulatorpin|iothreads)\b")
# The first element of a fragment quoted without its <domain> (prose before it is dropped)
_FRAGMENT_START = re.compile(
    r"<(vcpus?|cputune|numatune|cpu|memoryBacking|iothreads|iothreadids|memory|currentMemory|maxMemory|"
    r"vcpupin|emulatorpin|iothreadpin|memnode|hugepages|disk|topology|numa)[\s>/]"
)
# Elements quoted without their parent: they are moved under it
_ORPHAN_PARENT = {
    "vcpupin": "cputune",
    "emulatorpin": "cputune",
    "iothreadpin": "cputune",
    "vcpusched": "cputune",
    "iothreadsched": "cputune",
    "emulatorsched": "cputune",
    "memnode": "numatune",
    "hugepages": "memoryBacking",
    "nosharepages": "memoryBacking",
    "locked": "memoryBacking",
    "topology": "cpu",
    "numa": "cpu",
}
_STRAY_AMP = re.compile(r"&(?!(?:[A-Za-z]+|#\d+|#x[0-9A-Fa-f]+);)")
_HOSTILE = re.compile(r"<!(DOCTYPE|ENTITY|ELEMENT|ATTLIST)", re.IGNORECASE)
_ELLIPSIS_LINE = re.compile(r"^\s*(\.{3,}|…+|⋯+)\s*$")
_TAG_HEAD = re.compile(r"<(/?)([A-Za-z_][\w.:-]*)")
_ATTR_RUN = re.compile(r"[^<>\"']*")
# (opener, closer) of the markup a fragment may carry besides elements
_SPECIALS = (("<!--", "-->"), ("<![CDATA[", "]]>"), ("<?", "?>"))
_MAX_RECOVERY_DEPTH = 256
# A pasted fragment is a few KiB; a whole domain with hundreds of disks is well
# under 1 MiB. Larger broken text is refused instead of being repaired.
MAX_RECOVERY_BYTES = 1 << 20
# CPU ids expanded from every cpuset of one domain (4096 vCPUs pinned to 256 CPUs
# each is 1M): a few bytes of "0-65535" must not become gigabytes of lists.
MAX_CPU_IDS = 1 << 20
# Tags ("<") in one domain document. A 4096-vCPU guest with per-vCPU pins and
# scheduler entries has ~30k; building an element costs ~2.5 us, so this caps the
# tree at a fraction of a second however the text is shaped.
MAX_TAGS = 100_000


def safe_fromstring(text: str) -> ET.Element:
    """Parse ``text`` with DTDs, entities and external references forbidden.

    Every failure (malformed XML, a DTD, an entity declaration) is a ``ParseError``
    whose ``line`` is the parser's line when it reports one.
    """
    text = re.sub(r"^\s*<\?xml[^>]*\?>", "", text, count=1)
    try:
        if not _HOSTILE.search(text):
            # Without a DTD there is nothing for defusedxml to forbid (entities,
            # external references and declarations live in one), and the C
            # parser builds the same tree, or raises the same error, 2x faster
            # than defusedxml's Python subclass.
            return ET.fromstring(text)  # noqa: S314 (no DTD: see above)
        return SafeET.fromstring(text, forbid_dtd=True, forbid_entities=True, forbid_external=True)
    except defusedxml.DefusedXmlException as exc:
        raise ParseError(f"refused unsafe XML: {exc.__class__.__name__}") from None
    except ET.ParseError as exc:
        line = exc.position[0] if getattr(exc, "position", None) else None
        raise ParseError(f"malformed XML: {exc}", line=line) from None
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"unreadable XML: {exc}") from None


def refuse_hostile(text: str) -> None:
    """ParseError when ``text`` declares a document type or entities (refused
    before any repair of a fragment, as :func:`safe_fromstring` would refuse them)."""
    if _HOSTILE.search(text):
        raise ParseError("refused unsafe XML: document type or entity declarations are not allowed")


def line_of(text: str, pattern: str, start: int = 0) -> int | None:
    """1-based line of the first match of ``pattern`` in ``text`` (from ``start``)."""
    m = re.compile(pattern).search(text, start)
    return text.count("\n", 0, m.start()) + 1 if m else None


def mark_line(lines: dict[str, int], key: str, text: str, pattern: str) -> None:
    """``lines[key]``: the line of the first match of ``pattern`` in ``text``, when there is one."""
    ln = line_of(text, pattern)
    if ln is not None:
        lines[key] = ln


def lines_by_value(text: str, pattern: str) -> dict[str, int]:
    """1-based line of the first match of ``pattern`` for each value of its group 1,
    in one pass (calling :func:`line_of` per element is quadratic in elements)."""
    out: dict[str, int] = {}
    line, last = 1, 0
    for m in re.finditer(pattern, text):
        line += text.count("\n", last, m.start())
        last = m.start()
        out.setdefault(m.group(1), line)
    return out


def to_kib(value: str | None, unit: str | None, *, default_unit: str = "KiB") -> int | None:
    number = _int(value, "memory size")
    if number is None:
        return None
    factor = _UNIT_BYTES.get((unit or default_unit).strip().lower())
    if factor is None:
        raise ParseError(f"unknown memory unit {unit!r}")
    return number * factor // 1024


def _int(value: str | None, what: str) -> int | None:
    if value is None or not value.strip():
        return None
    try:
        return int(value.strip())
    except ValueError:
        raise ParseError(f"{what} is not an integer: {value!r}") from None


def _cpus(value: str | None, what: str, budget: list[int] | None = None) -> list[int]:
    """``value`` as CPU ids; ``budget`` (a one-item list) counts down the ids one
    domain may expand to, see ``MAX_CPU_IDS``."""
    try:
        cpus = parse_cpulist(value or "")
    except ValueError:
        raise ParseError(f"{what} is not a CPU list: {value!r}") from None
    if budget is not None:
        budget[0] -= len(cpus)
        if budget[0] < 0:
            raise ParseError(f"more than {MAX_CPU_IDS} CPU ids in the domain's CPU lists")
    return cpus


def _tag_end(body: str, start: int) -> int:
    """Index just past the ``>`` of the tag whose name ends at ``start``; when the
    tag is cut short (another ``<``, an unclosed quote, the end of the text), minus
    the index where scanning stopped. Every character is looked at once."""
    k = start
    n = len(body)
    while True:
        run = _ATTR_RUN.match(body, k)
        assert run is not None  # "*": it matches the empty string too
        k = run.end()
        if k >= n:
            return -n
        c = body[k]
        if c == ">":
            return k + 1
        if c == "<":
            return -k
        close = body.find(c, k + 1)  # a quoted attribute value
        if close < 0:
            return -n
        k = close + 1


def _balance_fragment(text: str) -> str:
    """Drop ``...`` lines, wrap loose siblings in ``<domain>`` and close open tags
    (see :func:`_balance`)."""
    return _balance(text)[0]


def _close_up_to(stack: list[str], name: str) -> list[str]:
    """The closing tags a ``</name>`` means: ``name``'s and those opened after
    it (popped from ``stack``); none when ``name`` is not open."""
    if name not in stack:
        return []
    closed: list[str] = []
    while stack:
        top = stack.pop()
        closed.append(f"</{top}>")
        if top == name:
            break
    return closed


def _balance(text: str) -> tuple[str, list[str]]:
    """Drop ``...`` lines, wrap loose siblings in ``<domain>`` and close open tags.

    A closing tag that matches an element further down the stack closes the ones
    opened after it (``</numa>`` with ``<cell>`` still open); a closing tag that
    matches nothing open is dropped. Linear in the text: a single left-to-right
    scan with ``str.find`` for comment/PI/CDATA ends and quoted values, so an
    unterminated ``<?`` or ``<!--`` costs one search, not one per ``<``.
    """
    if len(text) > MAX_RECOVERY_BYTES:
        raise ParseError(f"XML fragment of {len(text)} characters is too large to recover")
    body = "\n".join(ln for ln in text.splitlines() if not _ELLIPSIS_LINE.match(ln))
    out, stack = _scan_tags(body)
    open_at_end = list(stack)
    out.extend(f"</{name}>" for name in reversed(stack))
    balanced = "".join(out).strip()
    if not re.match(r"<(domain|domstatus)\b", _skip_comments(balanced)):
        balanced = f"<domain>\n{balanced}\n</domain>"
    return balanced, open_at_end


def _scan_tags(body: str) -> tuple[list[str], list[str]]:
    """``body`` in pieces, each closing tag closing what was opened after its
    element (comments, processing instructions and CDATA kept as they are), and
    the elements still open at its end, outermost first."""
    out: list[str] = []
    stack: list[str] = []
    pos = 0
    while (i := body.find("<", pos)) >= 0:
        out.append(body[pos:i])
        end = _special_end(body, i)
        if end is None:
            pos = _read_tag(body, i, out, stack)
        else:
            pos = end
            out.append(body[i:pos])
    out.append(body[pos:])
    return out, stack


def _special_end(body: str, i: int) -> int | None:
    """The end of the comment, processing instruction or CDATA section that starts
    at ``i``; None when none does. One left open raises ParseError."""
    special = next(((o, c) for o, c in _SPECIALS if body.startswith(o, i)), None)
    if special is None:
        return None
    opener, closer = special
    j = body.find(closer, i + len(opener))
    if j < 0:
        what = {"<!--": "comment", "<?": "processing instruction"}.get(opener, "CDATA section")
        line = body.count("\n", 0, i) + 1
        raise ParseError(f"unterminated {what} in XML fragment", line=line)
    return j + len(closer)


def _read_tag(body: str, i: int, out: list[str], stack: list[str]) -> int:
    """The tag at ``i`` into ``out`` (a closing one closes what was opened after
    its element, an opening one goes on ``stack``); where the scan goes on."""
    head = _TAG_HEAD.match(body, i)
    end = _tag_end(body, head.end()) if head else -(i + 1)
    if head is None or end < 0:
        # not a tag (or one cut short): keep it as text and go on from where
        # the scan stopped, so no character is scanned twice
        pos = max(-end, i + 1)
        out.append(body[i:pos].replace("<", "&lt;"))
        return pos
    closing, name = head.group(1), head.group(2)
    if closing:
        out.extend(_close_up_to(stack, name))
        return end
    out.append(body[i:end])
    if body[end - 2] != "/":
        stack.append(name)
        if len(stack) > _MAX_RECOVERY_DEPTH:
            raise ParseError("XML fragment nests too deeply to recover")
    return end


def _skip_comments(text: str) -> str:
    """``text`` without its leading whitespace and complete comments."""
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if not text.startswith("<!--", pos):
            return text[pos:]
        end = text.find("-->", pos + 4)
        if end < 0:
            return text[pos:]
        pos = end + 3


def _document_slice(text: str) -> str:
    """The ``<domain>``/``<domstatus>`` document inside surrounding shell noise."""
    start = re.search(r"<(domstatus|domain)\b", text)
    if not start:
        return text
    root = start.group(1)
    end = text.rfind(f"</{root}>")
    # Keep a leading comment (virsh's "WARNING: THIS IS AN AUTO-GENERATED FILE") out:
    # it carries no facts and line numbers are computed on the original text anyway.
    return text[start.start() : end + len(root) + 3] if end > start.start() else text[start.start() :]


def _parse_tree(text: str) -> tuple[ET.Element, bool, bool]:
    """``(root, recovered, fragment)``: the parsed document; whether it had to be
    completed; whether it was only part of a domain (no ``<domain>`` root)."""
    refuse_hostile(text)
    if "<" not in text:
        raise ParseError("no XML in the text")
    tags = text.count("<")
    if tags > MAX_TAGS:
        raise ParseError(f"{tags} tags: more than a libvirt domain has ({MAX_TAGS}); not parsed")
    if not re.search(r"<(domain|domstatus)\b", text):
        start = _FRAGMENT_START.search(text)
        if start is None:
            return (*_parse_document(text, text, fragment_hint=False), False)
        # from the first domain element to the last ">": prose around it is dropped,
        # prose between elements stays as text (with its "&" and "<" escaped)
        body = _STRAY_AMP.sub("&amp;", text[start.start() : text.rfind(">") + 1])
        offset = text.count("\n", 0, start.start())
        root, _ = _parse_document(f"<domain>{body}</domain>", body, fragment_hint=True, line_offset=offset)
        return root, True, True
    return (*_parse_document(_document_slice(text), text, fragment_hint=False), False)


def _parse_document(
    doc: str, text: str, *, fragment_hint: bool, line_offset: int = 0
) -> tuple[ET.Element, bool]:
    try:
        return safe_fromstring(doc), False
    except ParseError as first:
        if first.line is not None:
            first.line += line_offset
        looks_like_domain = (
            fragment_hint or re.search(r"<(domain|domstatus)\b", text) or _FRAGMENT_HINT.search(text)
        )
        if not looks_like_domain:
            raise
        return _recovered(text if fragment_hint else doc, first, line_offset), True


def _recovered(fragment: str, first: ParseError, line_offset: int) -> ET.Element:
    """The tree of ``fragment`` made whole by :func:`_balance_fragment`; raises
    ``first`` (the error of the text as it was) when even that does not parse."""
    try:
        balanced = _balance_fragment(fragment)
    except ParseError as second:
        # the fragment itself is unusable (unterminated comment, too large, too deep)
        line = second.line + line_offset if second.line is not None else first.line
        raise ParseError(f"{first.message}; not recovered: {second.message}", line=line) from None
    try:
        return safe_fromstring(balanced)
    except ParseError:
        raise first from None


def _adopt_orphans(dom: ET.Element) -> None:
    """Move elements quoted without their parent (``<vcpupin>`` lines, a bare
    ``<topology>``) under it, creating the parent when the fragment lacks it."""
    for child in list(dom):
        parent_tag = _ORPHAN_PARENT.get(child.tag)
        if parent_tag is None:
            continue
        parent = dom.find(parent_tag)
        if parent is None:
            parent = ET.SubElement(dom, parent_tag)
        dom.remove(child)
        parent.append(child)


def _find_domain(root: ET.Element) -> ET.Element | None:
    if root.tag == "domain":
        return root
    if root.tag == "domstatus":
        return root.find("domain")
    return None


def element_text(el: ET.Element | None) -> str | None:
    """The stripped text of ``el``; None without the element or its text."""
    if el is None or el.text is None:
        return None
    return el.text.strip() or None


def _attr(el: ET.Element, child: str, name: str) -> str | None:
    """Attribute ``name`` of ``el``'s first ``child`` element; None without that child."""
    found = el.find(child)
    return found.get(name) if found is not None else None


# line-anchored, so prose that mentions "<domstatus>" is not taken for XML
_DETECT_LINE = re.compile(
    r"^[ \t]*<(domain[\s>]|domstatus[\s>]|cputune>|numatune>|memoryBacking>|vcpupin\s|emulatorpin\s|"
    r"vcpu[\s>]|iothreads>|cpu\s+(?:mode|match|check)=|cpu>\s*<(?:topology|numa|model|feature|cache)\b)",
    re.M,
)
# <vcpu ...>16</vcpu> is distinctive enough to be found inside a prose line
_DETECT_INLINE = re.compile(r"<vcpu\b[^<>\n]*>\s*\d+\s*</vcpu>")


def _looks_like_domain(head: str) -> bool:
    if "<" not in head or "<capabilities" in head or "<domainCapabilities" in head:
        return False
    return bool(_DETECT_LINE.search(head) or _DETECT_INLINE.search(head))


class _DomainReader:
    """What the section readers of :func:`parse_domain` share: the source text
    (for line numbers), the lines found so far and the CPU-id budget."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines: dict[str, int] = {}
        self.budget = [MAX_CPU_IDS]

    def cpu_ids(self, value: str | None, what: str) -> list[int]:
        return _cpus(value, what, self.budget)

    def lines_of(self, tag: str, attr: str) -> dict[str, int]:
        # [^<>]* keeps each match inside one tag, so a scan never runs past the next "<"
        return lines_by_value(self.text, rf"<{tag}\b[^<>]*?\b{attr}=['\"](\d+)['\"]")

    def mark(self, key: str, pattern: str) -> None:
        mark_line(self.lines, key, self.text, pattern)

    def mark_id(self, key: str, found: dict[str, int], ident: int | None) -> None:
        ln = found.get(str(ident)) if ident is not None else None
        if ln:
            self.lines[key] = ln


def _read_identity(dom: ET.Element, d: Domain, r: _DomainReader) -> None:
    """The domain's type, name and UUID."""
    d.domain_type = dom.get("type")
    d.name = element_text(dom.find("name"))
    d.uuid = element_text(dom.find("uuid"))
    if d.name:
        r.mark("name", r"<name>")


def _set_vcpu_placement(dom: ET.Element, d: Domain) -> None:
    """The vCPUs' placement as written, else libvirt's default: the numatune
    placement when it is "auto", else static (read after ``<numatune>``)."""
    vcpu = dom.find("vcpu")
    if vcpu is not None:
        d.vcpu_placement = vcpu.get("placement") or (
            "auto" if d.numatune_memory_placement == "auto" else "static"
        )


def _read_vcpu_and_memory(dom: ET.Element, d: Domain, r: _DomainReader) -> None:
    vcpu = dom.find("vcpu")
    if vcpu is not None:
        d.vcpus = _int(vcpu.text, "<vcpu>")
        current = _int(vcpu.get("current"), "<vcpu current>")
        d.vcpu_current = current if current is not None else d.vcpus
        if vcpu.get("cpuset"):
            d.vcpu_cpuset = r.cpu_ids(vcpu.get("cpuset"), "<vcpu cpuset>")
        r.mark("vcpus", r"<vcpu[\s>]")
        r.mark("vcpu_current", r"<vcpu[\s>]")
    for tag, attr in (("memory", "memory_kb"), ("currentMemory", "current_memory_kb")):
        el = dom.find(tag)
        if el is not None:
            setattr(d, attr, to_kib(el.text, el.get("unit")))
            r.mark(attr, rf"<{tag}[\s>]")
    max_mem = dom.find("maxMemory")
    if max_mem is not None:
        d.max_memory_kb = to_kib(max_mem.text, max_mem.get("unit"))
        d.max_memory_slots = _int(max_mem.get("slots"), "<maxMemory slots>")
        r.mark("max_memory_kb", r"<maxMemory[\s>]")


def _read_cpu(dom: ET.Element, d: Domain, r: _DomainReader) -> None:
    cpu = dom.find("cpu")
    if cpu is None:
        return
    d.cpu_mode = cpu.get("mode") or "custom"
    d.cpu_check = cpu.get("check")
    d.cpu_model = element_text(cpu.find("model"))
    r.mark("cpu_mode", r"<cpu[\s>/]")
    topo = cpu.find("topology")
    if topo is not None:
        d.topology = {k: n for k, v in topo.attrib.items() if (n := _int(v, f"<topology {k}>")) is not None}
        r.mark("topology", r"<topology\b")
    numa = cpu.find("numa")
    if numa is not None:
        _read_guest_numa(numa, d, r)


def _read_guest_numa(numa: ET.Element, d: Domain, r: _DomainReader) -> None:
    """The cells of the guest's ``<cpu><numa>`` (a cell without an id is numbered by its position)."""
    r.mark("numa_cells", r"<numa[\s>]")
    cell_lines = r.lines_of("cell", "id")
    for index, cell in enumerate(numa.findall("cell")):
        cell_id = _int(cell.get("id"), "<cell id>")
        gcell = _guest_cell(cell, cell_id if cell_id is not None else index, r)
        d.numa_cells.append(gcell)
        r.mark_id(f"numa_cells[{gcell.id}]", cell_lines, cell_id)


def _guest_cell(cell: ET.Element, cell_id: int, r: _DomainReader) -> GuestNumaCell:
    """A ``<cell>`` of the guest's ``<numa>``: its CPUs, memory and distances."""
    gcell = GuestNumaCell(
        id=cell_id,
        cpus=r.cpu_ids(cell.get("cpus"), "<cell cpus>"),
        memory_kb=to_kib(cell.get("memory"), cell.get("unit")),
        mem_access=cell.get("memAccess"),
    )
    for sibling in cell.findall("distances/sibling"):
        sid = _int(sibling.get("id"), "<sibling id>")
        value = _int(sibling.get("value"), "<sibling value>")
        if sid is not None and value is not None:
            gcell.distances[sid] = value
    return gcell


def _read_pins(
    cputune: ET.Element, r: _DomainReader, *, tag: str, attr: str, key: str
) -> dict[int, list[int]]:
    """``<vcpupin vcpu=.. cpuset=..>`` / ``<iothreadpin iothread=.. ...>`` -> {id: cpus}."""
    found = r.lines_of(tag, attr)
    pins: dict[int, list[int]] = {}
    for pin in cputune.findall(tag):
        ident = _int(pin.get(attr), f"<{tag} {attr}>")
        if ident is None:
            raise ParseError(f"<{tag}> without the {attr} attribute")
        pins[ident] = r.cpu_ids(pin.get("cpuset"), f"<{tag} cpuset>")
        r.mark_id(f"{key}[{ident}]", found, ident)
    if pins:
        r.mark(key, rf"<{tag}\b")
    return pins


def _read_cputune(dom: ET.Element, d: Domain, r: _DomainReader) -> None:
    """The vCPU, emulator and iothread pinning of ``<cputune>``."""
    cputune = dom.find("cputune")
    if cputune is None:
        return
    r.mark("cputune", r"<cputune[\s>]")
    d.vcpupin.update(_read_pins(cputune, r, tag="vcpupin", attr="vcpu", key="vcpupin"))
    emulator = cputune.find("emulatorpin")
    if emulator is not None:
        d.emulatorpin = r.cpu_ids(emulator.get("cpuset"), "<emulatorpin cpuset>")
        r.mark("emulatorpin", r"<emulatorpin\b")
    d.iothreadpin.update(_read_pins(cputune, r, tag="iothreadpin", attr="iothread", key="iothreadpin"))


def _read_iothreads(dom: ET.Element, d: Domain, r: _DomainReader) -> None:
    """The guest's iothread ids and count (``<iothreads>``, else the ids listed)."""
    d.iothread_ids = [
        i
        for t in dom.findall("iothreadids/iothread")
        if (i := _int(t.get("id"), "<iothread id>")) is not None
    ]
    iothreads = dom.find("iothreads")
    if iothreads is not None and element_text(iothreads) is not None:
        d.iothreads = _int(iothreads.text, "<iothreads>") or 0
        r.mark("iothreads", r"<iothreads[\s>]")
    elif d.iothread_ids:
        d.iothreads = len(d.iothread_ids)
        r.mark("iothreads", r"<iothreadids[\s>]")


def _read_numatune(dom: ET.Element, d: Domain, r: _DomainReader) -> None:
    numatune = dom.find("numatune")
    if numatune is None:
        return
    r.mark("numatune", r"<numatune[\s>]")
    mem = numatune.find("memory")
    if mem is not None:
        d.numatune_memory_mode = mem.get("mode") or "strict"
        if mem.get("nodeset") is not None:
            d.numatune_memory_nodeset = r.cpu_ids(mem.get("nodeset"), "<numatune memory nodeset>")
        d.numatune_memory_placement = mem.get("placement")
        r.mark("numatune_memory_mode", r"<numatune[\s>][\s\S]*?<memory\b")
    memnode_lines = r.lines_of("memnode", "cellid")
    for memnode in numatune.findall("memnode"):
        cell_id = _int(memnode.get("cellid"), "<memnode cellid>")
        if cell_id is None:
            raise ParseError("<memnode> without a cellid attribute")
        d.memnodes[cell_id] = _memnode_entry(memnode, r)
        r.mark_id(f"memnodes[{cell_id}]", memnode_lines, cell_id)


def _memnode_entry(memnode: ET.Element, r: _DomainReader) -> dict[str, Any]:
    """A ``<memnode>`` as {"mode"} (strict by default) with its "nodeset" when it has one."""
    entry: dict[str, Any] = {"mode": memnode.get("mode") or "strict"}
    if memnode.get("nodeset") is not None:
        entry["nodeset"] = r.cpu_ids(memnode.get("nodeset"), "<memnode nodeset>")
    return entry


def _read_hugepages(dom: ET.Element, d: Domain, r: _DomainReader) -> None:
    hugepages = dom.find("memoryBacking/hugepages")
    if hugepages is None:
        return
    d.hugepages = True
    r.mark("hugepages", r"<hugepages\b")
    for page in hugepages.findall("page"):
        size = to_kib(page.get("size"), page.get("unit"))
        if size is not None and size not in d.hugepage_sizes_kb:
            d.hugepage_sizes_kb.append(size)


def _disk_source(source: ET.Element | None) -> str | None:
    if source is None:
        return None
    src = next((source.get(k) for k in ("file", "dev", "name", "volume", "dir") if source.get(k)), None)
    if source.get("pool") and source.get("volume"):
        src = f"{source.get('pool')}/{source.get('volume')}"
    if source.get("protocol") and src:
        src = f"{source.get('protocol')}:{src}"
    return src


def _disk(disk: ET.Element) -> DomainDisk:
    return DomainDisk(
        target=_attr(disk, "target", "dev"),
        device=disk.get("device") or "disk",
        bus=_attr(disk, "target", "bus"),
        source=_disk_source(disk.find("source")),
        iothread=_int(_attr(disk, "driver", "iothread"), "<driver iothread>"),
        cache=_attr(disk, "driver", "cache") or None,
        io=_attr(disk, "driver", "io") or None,
        driver_shown=disk.find("driver") is not None,
    )


def _read_disks(dom: ET.Element, d: Domain, r: _DomainReader) -> None:
    disk_starts = re.finditer(r"<disk\b", r.text)
    disk_line, disk_last = 1, 0
    for disk in dom.iter("disk"):
        dd = _disk(disk)
        d.disks.append(dd)
        m = next(disk_starts, None)
        if m:
            disk_line += r.text.count("\n", disk_last, m.start())
            disk_last = m.start()
            if dd.target:
                r.lines[f"disks[{dd.target}]"] = disk_line


# libvirt writes a domain's elements in this order (virDomainDefFormatInternal);
# what comes after the point where a paste was cut is unknown
_DOMAIN_ORDER = (
    "name", "uuid", "genid", "title", "description", "metadata", "maxMemory", "memory",
    "currentMemory", "blkiotune", "memtune", "memoryBacking", "vcpu", "vcpus", "iothreads",
    "iothreadids", "defaultiothread", "cputune", "numatune", "resource", "sysinfo", "bootloader",
    "bootloader_args", "os", "idmap", "features", "cpu", "clock", "on_poweroff", "on_reboot",
    "on_crash", "on_lockfailure", "pm", "perf", "devices", "seclabel", "keywrap", "launchSecurity",
)  # fmt: skip
_CHILD_ORDER = {
    "cputune": (
        "shares", "period", "quota", "global_period", "global_quota", "emulator_period",
        "emulator_quota", "iothread_period", "iothread_quota", "vcpupin", "emulatorpin",
        "iothreadpin", "vcpusched", "iothreadsched", "emulatorsched", "cachetune", "memorytune",
    ),
    "numatune": ("memory", "memnode"),
    "cpu": ("model", "vendor", "topology", "cache", "maxphysaddr", "feature", "numa"),
    "devices": ("emulator", "disk", "controller", "lease", "filesystem", "interface"),
}  # fmt: skip


def _describe(el: ET.Element) -> str:
    attrs = " ".join(f"{k}='{v}'" for k, v in list(el.attrib.items())[:2])
    return f"{el.tag} {attrs}".strip()


_NOVA_NAME = re.compile(r"^instance-[0-9a-f]{8}$")


def _manager(dom: ET.Element, name: str | None) -> str | None:
    """The cloud manager that wrote the domain, from its ``<metadata>``
    (``<nova:instance>``, ``<zs:zstack>``) or a nova instance name."""
    manager = next(
        filter(None, (_metadata_manager(el.tag.lower()) for el in dom.iterfind("metadata/*"))), None
    )
    if manager is None and name and _NOVA_NAME.match(name):
        return "openstack"
    return manager


def _metadata_manager(tag: str) -> str | None:
    """The manager a ``<metadata>`` child's (lower-cased) tag names; None for another one."""
    if "openstack.org/xmlns/libvirt/nova" in tag or (tag.endswith("}instance") and "nova" in tag):
        return "openstack"
    return "zstack" if "zstack" in tag else None


def _mark_cut(text: str, dom: ET.Element, d: Domain) -> None:
    """A ``<domain>`` document whose root never closes was cut by the paste:
    say where, and which elements the cut part could have held (``d.unseen``)."""
    root = "domstatus" if d.xml_root == "domstatus" else "domain"
    if re.search(rf"</{root}\s*>", text):
        return
    d.cut_in = _cut_in(_balance(_document_slice(text))[1])
    d.cut = True
    present = [child.tag for child in dom]
    unseen: list[str] = []
    if d.cut_in is not None:
        unseen = _unseen_inside(dom, d, d.cut_in)
        anchor = d.cut_in
    else:
        anchor = _cut_after_last_child(dom, d)
    unseen.extend(_unseen_after(anchor, present, unseen))
    d.unseen = list(dict.fromkeys(unseen))


def _mark_fragment_cut(text: str, dom: ET.Element, d: Domain) -> None:
    """A fragment that ends inside an element it opened (``<cputune>`` with its
    vcpupin lines, then the paste stops at ``<vcp``) was cut there: the rest of
    that element is unknown (``d.unseen``: more vcpupin, emulatorpin ...), not absent.

    >>> d = parse_domain("<cputune>\\n  <vcpupin vcpu='0' cpuset='0'/>\\n  <vcp")
    >>> (d.fragment, d.cut, d.cut_in, "emulatorpin" in d.unseen)
    (True, True, 'cputune', True)
    """
    start = _FRAGMENT_START.search(text)
    body = text[start.start() : text.rfind(">") + 1] if start else text
    open_at_end = _balance(body)[1]
    if not open_at_end:
        return
    d.cut, d.cut_in = True, open_at_end[0]
    d.unseen = list(dict.fromkeys(_unseen_inside(dom, d, d.cut_in)))


def _cut_in(open_at_end: list[str]) -> str | None:
    """The child of ``<domain>`` still open where the paste was cut; None when
    the cut came between its children."""
    inner = open_at_end[open_at_end.index("domain") + 1 :] if "domain" in open_at_end else []
    return inner[0] if inner else None


def _cut_after_last_child(dom: ET.Element, d: Domain) -> str:
    """The tag of the domain's last child read ("name" when it has none), which
    also goes to ``d.truncated_after``."""
    if len(dom) == 0:
        return "name"
    d.truncated_after = _describe(dom[-1])
    return dom[-1].tag


def _unseen_inside(dom: ET.Element, d: Domain, cut_in: str) -> list[str]:
    """The children the element the paste was cut in could still have held (the
    last child's kind may go on: vcpupin 24, 25 ...); its last child read goes
    to ``d.truncated_after``."""
    element = dom.find(cut_in)
    children = list(element) if element is not None else []
    if children:
        d.truncated_after = _describe(children[-1])
    order = _CHILD_ORDER.get(cut_in, ())
    last = children[-1].tag if children else None
    if last not in order:
        return list(order)
    return list(order[order.index(last) :])


def _unseen_after(anchor: str, present: list[str], unseen: list[str]) -> list[str]:
    """The elements of ``<domain>`` that come after ``anchor`` in libvirt's
    order and are not ``present``, with their children."""
    if anchor not in _DOMAIN_ORDER:
        return []
    later = _DOMAIN_ORDER[_DOMAIN_ORDER.index(anchor) + 1 :]
    missing = [tag for tag in later if tag not in present]
    out = list(missing)
    for tag in missing:
        out.extend(c for c in _CHILD_ORDER.get(tag, ()) if c not in unseen and c not in out)
    return out


def _read_interfaces(dom: ET.Element, d: Domain, r: _DomainReader) -> None:
    starts = re.finditer(r"<interface\b", r.text)
    line, last = 1, 0
    for nic in dom.iter("interface"):
        interface = _interface(nic)
        if interface is None:
            continue
        d.interfaces.append(interface)
        m = next(starts, None)
        if m:
            line += r.text.count("\n", last, m.start())
            last = m.start()
            r.lines[f"interfaces[{len(d.interfaces) - 1}]"] = line


def _interface(nic: ET.Element) -> DomainInterface | None:
    """A guest NIC; None for an ``<interface>`` of another element (no model,
    driver or MAC)."""
    if all(nic.find(tag) is None for tag in ("model", "driver", "mac")):
        return None
    raw = (_attr(nic, "driver", "queues") or "").strip()
    return DomainInterface(
        model=_attr(nic, "model", "type"),
        queues=int(raw) if raw.isdigit() else None,
        kind=nic.get("type"),
        mac=_attr(nic, "mac", "address"),
        driver=_attr(nic, "driver", "name") or None,
    )


# the element names too, as rules cite them ("vcpu", "maxMemory", "disk.vdb" ...)
_LINE_ALIASES = (
    ("vcpu", "vcpus"),
    ("memory", "memory_kb"),
    ("maxMemory", "max_memory_kb"),
    ("cpu", "cpu_mode"),
    ("numa", "numa_cells"),
    ("iothreadids", "iothreads"),
)


def _aliased(lines: dict[str, int]) -> dict[str, int]:
    for alias, key in _LINE_ALIASES:
        if key in lines:
            lines.setdefault(alias, lines[key])
    for key in [k for k in lines if k.startswith("disks[")]:
        lines.setdefault(f"disk.{key[6:-1]}", lines[key])
    return lines


def _domain_element(root: ET.Element, fragment: bool) -> ET.Element:
    """The ``<domain>`` of the tree (a fragment's loose children adopted); a
    ParseError when there is none or it holds no element a domain has."""
    dom = _find_domain(root)
    if dom is None:
        raise ParseError(f"not a libvirt domain: root element <{root.tag}>")
    if fragment:
        _adopt_orphans(dom)
    if not any(dom.find(tag) is not None for tag in _DOMAIN_ELEMENTS) and dom.find("name") is None:
        raise ParseError("no libvirt domain elements (vcpu, cputune, numatune, cpu, disk ...) found")
    return dom


@register(
    "libvirt_domain",
    # "(?<![\w-])dumpxml" so net-dumpxml / pool-dumpxml (other XML roots) are not
    # taken for a domain; any other *.xml is recognised by its content instead.
    commands=(r"virsh\s+.*(?<![\w-])dumpxml\b", r"cat\s+\S*etc/libvirt/qemu/\S+\.xml"),
    paths=(r"sos_commands/virsh/virsh_-r_dumpxml_.*", r"etc/libvirt/qemu/[^/]+\.xml$"),
    detect=lambda head: _looks_like_domain(head),
    priority=10,
)
def parse_domain(text: str) -> Domain:
    """Parse one libvirt domain (document, runtime status, or pasted fragment).

    >>> d = parse_domain("<domain type='kvm'><vcpu current='2'>4</vcpu></domain>")
    >>> (d.vcpus, d.vcpu_current, d.vcpu_placement, d.cpu_mode)
    (4, 2, 'static', None)
    """
    root, recovered, fragment = _parse_tree(text)
    dom = _domain_element(root, fragment)

    d = Domain(xml_root=root.tag, recovered=recovered or fragment, fragment=fragment, raw_xml=text)
    r = _DomainReader(text)
    for read in (
        _read_identity,
        _read_vcpu_and_memory,
        _read_cpu,
        _read_cputune,
        _read_iothreads,
        _read_numatune,
        _read_hugepages,
        _read_disks,
        _read_interfaces,
    ):
        read(dom, d, r)
    _set_vcpu_placement(dom, d)
    if recovered and not fragment:
        _mark_cut(text, dom, d)
    elif fragment:
        _mark_fragment_cut(text, dom, d)
    d.manager = _manager(dom, d.name)
    d.lines = _aliased(r.lines)
    return d
