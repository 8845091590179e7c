"""Edit a libvirt domain XML in place and write it back looking like libvirt.

``xml.etree`` loses what libvirt's own formatting relies on: single-quoted
attributes, ``<tag/>`` without a space, namespace prefixes where they were
declared, and everything outside the root element (virsh's "AUTO-GENERATED"
comment, shell noise around a pasted dump). :func:`load` records those and
:func:`dump` restores them, so a unified diff against the original text shows
only the lines a remedy changed.

Parsing goes through ``defusedxml`` (no DTDs, entities or external references).

    >>> doc = load("<!-- c -->\\n<domain type='kvm'>\\n  <vcpu current='2'>4</vcpu>\\n</domain>\\n")
    >>> doc.root.find("vcpu").attrib.pop("current")
    '2'
    >>> dump(doc)
    "<!-- c -->\\n<domain type='kvm'>\\n  <vcpu>4</vcpu>\\n</domain>\\n"
"""

from __future__ import annotations

import copy
import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import defusedxml
import defusedxml.ElementTree as SafeET

from collectors.facts import ParseError

_ROOT_START = re.compile(r"<domain[\s>]")
# start tags in document order; comments, PIs and CDATA are matched to be skipped
_TAG = re.compile(
    r"<!--.*?-->|<\?.*?\?>|<!\[CDATA\[.*?\]\]>|<([A-Za-z_][\w.:-]*)((?:[^<>\"']|\"[^\"]*\"|'[^']*')*?)/?>",
    re.DOTALL,
)


@dataclass
class Document:
    root: ET.Element
    prefix: str  # text before <domain ...>
    suffix: str  # text after </domain>
    quote: str = "'"
    # id(element) -> [(prefix, uri)] declared on that element in the original
    ns_decls: dict[int, list[tuple[str, str]]] = field(default_factory=dict)
    ns_prefix: dict[str, str] = field(default_factory=dict)  # uri -> prefix
    # id(element) -> (element, original start tag, attributes as parsed): an
    # element whose attributes did not change is written with its own start tag
    start_tags: dict[int, tuple[ET.Element, str, dict[str, str]]] = field(default_factory=dict)


def load(text: str) -> Document:
    """Parse the ``<domain>`` document inside ``text`` (comments kept)."""
    start = _ROOT_START.search(text)
    end = text.rfind("</domain>")
    if not start or end < start.start():
        raise ParseError("no complete <domain> element")
    body = text[start.start() : end + len("</domain>")]
    root, decls = _parse(body)
    singles, doubles = body.count("='"), body.count('="')
    return Document(
        start_tags=_start_tags(root, body),
        root=root,
        prefix=text[: start.start()],
        suffix=text[end + len("</domain>") :],
        quote='"' if doubles > singles else "'",
        ns_decls=decls,
        ns_prefix={uri: p for items in decls.values() for p, uri in items},
    )


def _parse(body: str) -> tuple[ET.Element, dict[int, list[tuple[str, str]]]]:
    """The root element of ``body`` (no DTD, no entities) and, by element id,
    the namespace declarations each element carries."""
    parser = SafeET.XMLParser(
        target=ET.TreeBuilder(insert_comments=True),
        forbid_dtd=True,
        forbid_entities=True,
        forbid_external=True,
    )
    try:
        events = list(SafeET.iterparse(io.StringIO(body), events=("start-ns", "start"), parser=parser))
    except defusedxml.DefusedXmlException as exc:
        raise ParseError(f"refused unsafe XML: {exc.__class__.__name__}") from None
    except ET.ParseError as exc:
        raise ParseError(f"malformed XML: {exc}") from None
    return _namespace_declarations(events)


def _namespace_declarations(
    events: Sequence[tuple[str, Any]],
) -> tuple[ET.Element, dict[int, list[tuple[str, str]]]]:
    """The root element of iterparse's ``start-ns`` and ``start`` events and,
    by element id, the namespace declarations that came just before each element."""
    decls: dict[int, list[tuple[str, str]]] = {}
    pending: list[tuple[str, str]] = []
    for event, item in events:
        if event == "start-ns":
            pending.append(item)
        elif pending:
            decls[id(item)] = pending
            pending = []
    root = next(item for event, item in events if event == "start")
    return root, decls


def _start_tags(root: ET.Element, body: str) -> dict[int, tuple[ET.Element, str, dict[str, str]]]:
    """Each element's start tag as written in ``body`` (see ``Document.start_tags``);
    none when the tags found in the text do not pair one to one with the elements."""
    elements = [e for e in root.iter() if e.tag is not ET.Comment]
    tags = [m.group(0) for m in _TAG.finditer(body) if m.group(1)]
    if len(tags) != len(elements):
        return {}
    return {id(e): (e, t, dict(e.attrib)) for e, t in zip(elements, tags, strict=True)}


def _escape(value: str, quote: str | None = None) -> str:
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    if quote is not None:
        value = value.replace(quote, "&apos;" if quote == "'" else "&quot;")
        value = value.replace("\n", "&#10;").replace("\t", "&#9;")
    return value


def _qname(name: str, doc: Document) -> str:
    if name.startswith("{"):
        uri, local = name[1:].split("}", 1)
        prefix = doc.ns_prefix.get(uri)
        return f"{prefix}:{local}" if prefix else local
    return name


def _write(el: ET.Element, doc: Document, out: list[str]) -> None:
    if el.tag is ET.Comment:
        out.append(f"<!--{el.text or ''}-->")
    elif not _write_as_read(el, doc, out):
        _write_new(el, doc, out)
    out.append(_escape(el.tail or ""))


def _write_content(el: ET.Element, doc: Document, out: list[str], tag: str) -> None:
    """The element's text, its children and its end tag."""
    out.append(_escape(el.text or ""))
    for child in el:
        _write(child, doc, out)
    out.append(f"</{tag}>")


def _write_as_read(el: ET.Element, doc: Document, out: list[str]) -> bool:
    """An element whose attributes are unchanged keeps its start tag as it was
    written (quotes, spacing, attribute order); False for any other."""
    known = doc.start_tags.get(id(el))
    if known is None or known[0] is not el or known[2] != el.attrib:
        return False
    original = known[1]
    if original.endswith("/>") and (len(el) or el.text):
        original = original[:-2].rstrip() + ">"
    out.append(original)
    if not original.endswith("/>"):
        _write_content(el, doc, out, _qname(el.tag, doc))
    return True


def _write_new(el: ET.Element, doc: Document, out: list[str]) -> None:
    """A new or changed element, as libvirt writes one (the document's quotes)."""
    q = doc.quote
    tag = _qname(el.tag, doc)
    attrs = [(f"xmlns:{p}" if p else "xmlns", uri) for p, uri in doc.ns_decls.get(id(el), [])]
    attrs += [(_qname(k, doc), v) for k, v in el.attrib.items()]
    out.append("<" + tag + "".join(f" {k}={q}{_escape(v, q)}{q}" for k, v in attrs))
    if len(el) == 0 and not el.text:
        out.append("/>")
    else:
        out.append(">")
        _write_content(el, doc, out, tag)


def dump(doc: Document) -> str:
    """The whole text again: prefix, the (edited) domain, suffix."""
    out: list[str] = []
    tail, doc.root.tail = doc.root.tail, None
    _write(doc.root, doc, out)
    doc.root.tail = tail
    return doc.prefix + "".join(out) + doc.suffix


def fragment(elements: list[ET.Element], doc: Document, *, wrapper: str | None = None) -> str:
    """``elements`` printed on their own the way libvirt prints them (two-space
    indentation, the document's quotes), inside ``<wrapper>`` when given: the
    piece of a patched document that one measure changes.

    >>> doc = load("<domain><cputune><vcpupin vcpu='0' cpuset='1'/></cputune></domain>")
    >>> print(fragment(doc.root.find("cputune").findall("vcpupin"), doc, wrapper="cputune"))
    <cputune>
      <vcpupin vcpu='0' cpuset='1'/>
    </cputune>
    """
    if wrapper:
        outer = ET.Element(wrapper)
        outer.extend(copy.deepcopy(e) for e in elements)
        items = [outer]
    else:
        items = [copy.deepcopy(e) for e in elements]
    texts = []
    for item in items:
        _drop_blank_text(item)
        ET.indent(item, space="  ")
        out: list[str] = []
        _write(item, doc, out)
        texts.append("".join(out))
    return "\n".join(texts)


def _drop_blank_text(item: ET.Element) -> None:
    """Remove the whitespace-only text and tails of ``item`` and its
    descendants, so that indenting starts afresh."""
    for el in item.iter():
        if el.text is not None and not el.text.strip():
            el.text = None
        if el.tail is not None and not el.tail.strip():
            el.tail = None


def add_child(
    parent: ET.Element, child: ET.Element, *, level: int, after: tuple[str, ...] = ()
) -> ET.Element:
    """Insert ``child`` (pretty-printed at ``level``) into ``parent`` after the
    last existing element named in ``after`` (else at the end), fixing the
    whitespace around it so the file stays indented like libvirt's output."""
    pad = "\n" + "  " * level
    close = "\n" + "  " * (level - 1)
    if len(child):
        ET.indent(child, space="  ", level=level)
    index = _index_after(parent, after)
    if len(parent) == 0:
        parent.text = pad
        child.tail = close
        parent.append(child)
        return child
    if index == len(parent):
        last = parent[-1]
        child.tail = last.tail if last.tail is not None else close
        last.tail = pad
    else:
        child.tail = pad
    parent.insert(index, child)
    return child


def _index_after(parent: ET.Element, after: tuple[str, ...]) -> int:
    """The position just after the last child of ``parent`` named in ``after``; the end without one."""
    return max((i + 1 for i, existing in enumerate(parent) if existing.tag in after), default=len(parent))


def add_first(parent: ET.Element, child: ET.Element, *, level: int) -> ET.Element:
    """Insert ``child`` as the first element of ``parent`` (libvirt writes
    ``<driver>`` first in a disk and ``<topology>`` first in ``<cpu>``)."""
    if len(parent) == 0:
        return add_child(parent, child, level=level)
    child.tail = parent.text if parent.text is not None else "\n" + "  " * level
    parent.insert(0, child)
    return child


def remove_child(parent: ET.Element, child: ET.Element) -> None:
    """Remove ``child`` and the whitespace that introduced it."""
    children = list(parent)
    i = children.index(child)
    if i > 0:
        children[i - 1].tail = child.tail
    elif len(children) == 1:
        parent.text = None if not (parent.text or "").strip() else parent.text
    else:
        # the next child takes the first position: keep the parent's leading text
        pass
    parent.remove(child)
