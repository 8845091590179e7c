"""``lscpu`` in all the shapes engineers hand us -> :class:`CpuTopology`.

Accepted input::

    Architecture:        x86_64
    CPU(s):              96
    On-line CPU(s) list: 0-95
    Thread(s) per core:  2
    Core(s) per socket:  24
    Socket(s):           2
    NUMA node(s):        1
    Hypervisor vendor:   KVM
    L3 cache:            33792K
    NUMA node0 CPU(s):   0-95

* the classic ``Key: value`` summary above, and the newer hierarchical one
  (indented keys under ``Caches (sum of all):`` / ``NUMA:`` sections) whose
  long values (``Flags``) wrap onto following lines aligned on the value column;
* the same under a Chinese, Japanese or Russian locale, whose labels are translated and,
  when wider than lscpu's column, run into the value::

    アーキテクチャ: x86_64
    コアあたりのスレッド数:1
    ソケットあたりのコア数:6
    NUMA ノード数:     2
    NUMAノード 0 CPU:   0,1
    仮想化タイプ:    完全仮想化

* ``lscpu -J`` JSON, flat (``{"lscpu": [{"field": "CPU(s):", "data": "2"}]}``)
  and nested (entries with ``"children"``);
* a summary followed by ``lscpu --parse`` sections (``# CPU,Core,Socket,Node,,L1d,L1i,L2,L3``):
  the header's cache columns count as caches (``has_l3``), and the rows fill
  the NUMA node CPU lists when the summary has none;
* heterogeneous ARM systems where ``Model name:`` repeats once per core type:
  each type becomes a ``core_types`` entry, and a top-level count is kept only
  when all types agree;
* OCR-damaged screenshots (seed 002) where every key and its value sit on
  separate lines, sometimes value-before-key, keys with their first letters
  eaten (``.1d cache:``, ``lypervisor vendor:``). Keys are matched fuzzily and
  each key takes the value line right after it, else the nearest unclaimed value
  line before it. Best effort: counts and the hypervisor come out right on the
  seed; values that OCR swapped (CPU MHz / BogoMIPS) may stay swapped.

``jc`` 1.26 has no lscpu parser (its registry lists it but the module is
missing), so this module is our own.

``lines`` keys: the ``CpuTopology`` field names (``cpus``, ``sockets``, ...),
``caches.L3`` style for caches and ``numa_node_cpus.N`` for node CPU lists.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from dataclasses import dataclass, field
from typing import Any

from collectors.cpulist import parse_cpulist
from collectors.facts import ArtifactError, CpuTopology, ParseError
from collectors.numbers import ascii_digits
from collectors.parsers import register

# (greedy key and value: the key cannot pass a ":" and the value runs to the end,
# so they match what lazy ones would, without a try at every character)
_KEY_RE = re.compile(r"^(\s*)([^:\s][^:]{0,80}):(?:\s+(.*)|\s*|(?<=[^\x00-\x7f]:)(\S.*))$")
_INT_RE = re.compile(r"^\d{1,12}$")
_NODE_RE = re.compile(r"^numa ?node ?(\d{1,5}) ?cpu\(?s\)?$")
_CACHE_RE = re.compile(r"^(l\d[a-z]?)(?: cache)?$")

# normalised key -> CpuTopology field (or extra key)
_FIELDS = {
    "architecture": "architecture",
    "vendor id": "vendor",
    "model name": "model_name",
    "cpu(s)": "cpus",
    "on-line cpu(s) list": "online_cpus",
    "thread(s) per core": "threads_per_core",
    "core(s) per socket": "cores_per_socket",
    "socket(s)": "sockets",
    "cpu socket(s)": "sockets",  # util-linux 2.17 (RHEL 6)
    "numa node(s)": "numa_nodes",
    "hypervisor vendor": "hypervisor_vendor",
    "virtualization type": "virtualization_type",
    "flags": "flags",
    # extras (numbers kept in ``extra``)
    "core(s) per cluster": "cores_per_cluster",
    "cluster(s)": "clusters",
    "socket(s) per book": "sockets_per_book",
    "book(s) per drawer": "books_per_drawer",
    "drawer(s)": "drawers",
    "book(s)": "books",
    "cpu mhz": "cpu_mhz",
    "bogomips": "bogomips",
    "virtualization": "virtualization",
    "hypervisor": "hypervisor",
}
_INT_FIELDS = {
    "cpus",
    "threads_per_core",
    "cores_per_socket",
    "sockets",
    "numa_nodes",
    "cores_per_cluster",
    "clusters",
    "sockets_per_book",
    "books_per_drawer",
    "drawers",
    "books",
}
_TOP_FIELDS = {
    "architecture",
    "vendor",
    "model_name",
    "cpus",
    "threads_per_core",
    "cores_per_socket",
    "sockets",
    "numa_nodes",
    "hypervisor_vendor",
    "virtualization_type",
}
# per core type keys (heterogeneous CPUs)
_CORE_TYPE_FIELDS = (
    "model_name",
    "threads_per_core",
    "cores_per_socket",
    "sockets",
    "cores_per_cluster",
    "clusters",
)
_OCR_MAX_TOKENS = 400
_OCR_WINDOW = 8
_CORE_NAMES = {
    "architecture",
    "cpus",
    "online_cpus",
    "sockets",
    "threads_per_core",
    "cores_per_socket",
    "numa_nodes",
}
_SECTIONS = {"caches (sum of all)", "numa", "vulnerabilities", "virtualization features", "caches"}
# the labels of the English summary as lscpu prints them (older and newer util-linux),
# a regex each: where a page that lost the line breaks left a line's start
# (collectors.unflatten); a label is not broken inside ("BIOS Model name", "NUMA
# node0 CPU(s)": the lookbehinds see the blank before the label)
SUMMARY_LABELS = (
    r"Architecture",
    r"CPU op-mode\(s\)",
    r"Byte Order",
    r"Address sizes",
    r"(?<!node\d )(?<!node\d\d )(?<!node\d\d\d )CPU\(s\)",
    r"On-line CPU\(s\) list",
    r"Off-line CPU\(s\) list",
    r"Thread\(s\) per core",
    r"Core\(s\) per (?:socket|cluster)",
    r"(?<!CPU )(?:CPU )?[Ss]ocket\(s\)",
    r"Cluster\(s\)",
    r"NUMA node\(s\)",
    r"(?<!BIOS )(?:BIOS )?Vendor ID",
    r"(?<!BIOS )(?:BIOS )?CPU family",
    r"(?<!BIOS )(?:BIOS )?Model name",
    r"Model",
    r"Stepping",
    r"Frequency boost",
    r"CPU(?:\(s\) scaling| max| min)? MHz",
    r"Bogo[Mm][Ii][Pp][Ss]",
    r"Hypervisor vendor",
    r"Virtualization type",
    r"Virtualization(?: features)?",
    r"L[123][di]?(?: cache)?",
    r"NUMA node\d{1,4} CPU\(s\)",
    r"Flags",
    r"Caches \(sum of all\)",
    r"NUMA",
    r"Vulnerabilities",
    r"Vulnerability [A-Za-z][\w ]{0,40}",
)

# OCR keys, normalised to letters and digits only, for fuzzy matching
_OCR_KEYS = {
    re.sub(r"[^a-z0-9]", "", k): k for k in [*_FIELDS, "l1d cache", "l1i cache", "l2 cache", "l3 cache"]
}
_OCR_KEYS.update(
    {"stepping": "stepping", "model": "model", "cpufamily": "cpu family", "byteorder": "byte order"}
)
_OCR_KEYS.update({"cpuopmodes": "cpu op-mode(s)"})


def _int(value: str) -> int | None:
    value = value.strip()
    return int(value) if _INT_RE.match(value) else None


# lscpu under a Chinese locale (util-linux zh_CN catalogue), as pasted in Chinese tickets
_ZH_KEYS = {
    "架构": "architecture",
    "cpu 运行模式": "cpu op-mode(s)",
    "字节序": "byte order",
    "cpu": "cpu(s)",
    "在线 cpu 列表": "on-line cpu(s) list",
    "厂商 id": "vendor id",
    "型号名称": "model name",
    "cpu 系列": "cpu family",
    "型号": "model",
    "每个核的线程数": "thread(s) per core",
    "每个座的核数": "core(s) per socket",
    "座": "socket(s)",
    "步进": "stepping",
    "标记": "flags",
    "超管理器厂商": "hypervisor vendor",
    "虚拟化类型": "virtualization type",
    "虚拟化": "virtualization",
    "numa 节点": "numa node(s)",
}
# lscpu under a Japanese locale (util-linux ja catalogue, older and newer wordings).
# A translated label wider than lscpu's column leaves no space before the value
# ("コアあたりのスレッド数:1").
_JA_KEYS = {
    "アーキテクチャ": "architecture",
    "cpu 操作モード": "cpu op-mode(s)",
    "バイト順序": "byte order",
    "コアあたりのスレッド数": "thread(s) per core",
    "ソケットあたりのコア数": "core(s) per socket",
    "ソケット数": "socket(s)",
    "numa ノード数": "numa node(s)",
    "numaノード数": "numa node(s)",
    "numaノード": "numa node(s)",
    "オンラインになっている cpu のリスト": "on-line cpu(s) list",
    "ベンダー id": "vendor id",
    "ベンダーid": "vendor id",
    "モデル名": "model name",
    "cpu ファミリー": "cpu family",
    "cpuファミリー": "cpu family",
    "モデル": "model",
    "ステッピング": "stepping",
    "ハイパーバイザーベンダー": "hypervisor vendor",
    "ハイパーバイザのベンダー": "hypervisor vendor",
    "仮想化タイプ": "virtualization type",
    "仮想化": "virtualization",
    "フラグ": "flags",
}
# lscpu under a Russian locale (util-linux ru catalogue, its "прроизводителя" typo
# included); CPU(s), NUMA and cache lines stay in English
_RU_KEYS = {
    "архитектура": "architecture",
    "порядок байт": "byte order",
    "потоков на ядро": "thread(s) per core",
    "ядер на сокет": "core(s) per socket",
    "сокетов": "socket(s)",
    "id прроизводителя": "vendor id",
    "семейство цпу": "cpu family",
    "модель": "model",
    "имя модели": "model name",
    "степпинг": "stepping",
    "cpu мгц": "cpu mhz",
    "виртуализация": "virtualization",
    "флаги": "flags",
}
# (the three catalogues share no key)
_LOCALE_KEYS = {**_ZH_KEYS, **_JA_KEYS, **_RU_KEYS}
_LOCALE_VALUES = {"完全": "full", "半": "para", "容器": "container", "完全仮想化": "full", "準仮想化": "para"}
_ZH_NODE = re.compile(r"^numa 节点(\d{1,5}) cpu$")
_ZH_CACHE = re.compile(r"^(l\d[a-z]?) 缓存$")
_JA_NODE = re.compile(r"^numa ?ノード ?(\d{1,5}) ?cpu(?:\(s\))?$")
_JA_CACHE = re.compile(r"^(l\d[a-z]?) ?キャッシュ$")


def _norm_key(key: str) -> str:
    key = " ".join(key.strip().lower().split())
    if key.isascii():
        # the Chinese and Japanese catalogues shorten "CPU(s):" to "CPU:"
        return "cpu(s)" if key == "cpu" else key
    return _english_key(key)


def _english_key(key: str) -> str:
    """The English key of a lower-cased key of lscpu's Chinese, Japanese or Russian
    catalogue (``key`` itself when it is none)."""
    m = _ZH_NODE.match(key) or _JA_NODE.match(key)
    if m:
        return f"numa node{m.group(1)} cpu(s)"
    m = _ZH_CACHE.match(key) or _JA_CACHE.match(key)
    if m:
        return f"{m.group(1)} cache"
    return _LOCALE_KEYS.get(key, key)


class _Builder:
    """Collects (key, value, line) pairs into a CpuTopology."""

    def __init__(self) -> None:
        self.topo = CpuTopology()
        self.core_types: list[dict[str, Any]] = []
        self.recognised = 0
        self.core_fields = 0  # counts and lists only lscpu prints
        self.parse_section = False

    def add(self, key: str, value: str, line: int | None, *, ocr: bool = False) -> None:
        nkey: str | None = _ocr_key(_norm_key(key)) if ocr else _norm_key(key)
        if nkey is None:
            return
        value = value.strip()
        if self._add_node_or_cache(nkey, value, line):
            return
        name = _FIELDS.get(nkey)
        if name is not None:
            self._add_field(name, value, line, ocr=ocr)

    def _add_field(self, name: str, value: str, line: int | None, *, ocr: bool) -> None:
        """Take a known field (by its topology name), with its line when its value was taken."""
        self.recognised += 1
        self.core_fields += name in _CORE_NAMES
        self._add_core_type_field(name, value, line)
        if self._set_field(name, value, ocr=ocr) and line is not None:
            self.topo.lines.setdefault(name, line)

    def _add_node_or_cache(self, nkey: str, value: str, line: int | None) -> bool:
        """Take a "NUMA node<N> CPU(s)" or "<L> cache" field; whether ``nkey`` was one."""
        node = _NODE_RE.match(nkey)
        if node:
            self._add_node(int(node.group(1)), value, line)
            return True
        cache = _CACHE_RE.match(nkey)
        if cache:
            self._add_cache(cache.group(1), value, line)
        return cache is not None

    def _add_core_type_field(self, name: str, value: str, line: int | None) -> None:
        """A repeated "Model name" starts the next core type (ARM big.LITTLE); the
        counts after it are that type's."""
        if name == "model_name":
            self.core_types.append({"model_name": value, "line": line})
        elif name in _CORE_TYPE_FIELDS and self.core_types:
            number = _int(value)
            self.core_types[-1][name] = number if number is not None else value

    def _add_node(self, node: int, value: str, line: int | None) -> None:
        try:
            cpus = parse_cpulist(value)
        except ValueError:
            return
        self.topo.numa_node_cpus[node] = cpus
        if line is not None:
            self.topo.lines[f"numa_node_cpus.{node}"] = line
        self.recognised += 1

    def _add_cache(self, name: str, value: str, line: int | None) -> None:
        name = name[0].upper() + name[1:]
        if value and value != "-":
            self.topo.caches[name] = value
            if line is not None:
                self.topo.lines[f"caches.{name}"] = line
            self.recognised += 1

    def _set_field(self, name: str, value: str, *, ocr: bool) -> bool:
        """Store one known field; False when the value was not taken (then its
        line is not recorded either)."""
        topo = self.topo
        if name in _INT_FIELDS:
            self._set_number(name, _int(value))
        elif name == "online_cpus":
            return self._set_online(value)
        elif name == "flags":
            if not topo.flags:
                topo.flags = value.split()
        elif name in _TOP_FIELDS:
            return self._set_text(name, value, ocr=ocr)
        else:
            topo.extra.setdefault(name, value)
        return True

    def _set_online(self, value: str) -> bool:
        """Store the online CPU list; False when ``value`` is not a CPU list."""
        try:
            self.topo.online_cpus = parse_cpulist(value)
        except ValueError:
            return False
        return True

    def _set_number(self, name: str, number: int | None) -> None:
        """A count: the first value wins (core types are reconciled in finish()),
        one lscpu prints beyond the model's fields goes to ``extra``."""
        if number is None:
            return
        if name not in _TOP_FIELDS:
            self.topo.extra.setdefault(name, number)
        elif getattr(self.topo, name) is None:
            setattr(self.topo, name, number)

    def _set_text(self, name: str, value: str, *, ocr: bool) -> bool:
        topo = self.topo
        if getattr(topo, name) is not None or not value or value == "-":
            return True
        value = _clean_text(name, value, ocr=ocr)
        if name == "hypervisor_vendor" and value.lower() == "vertical":
            # Some util-linux releases print "vertical" (an s390 dispatching
            # mode string) as the hypervisor of bare-metal x86 hosts (seed 004's
            # physical server). It names no hypervisor; keep it out of the
            # guest test but remember what was printed.
            topo.extra["hypervisor_vendor_raw"] = value
            return False
        setattr(topo, name, value)
        return True

    def finish(self) -> CpuTopology:
        topo = self.topo
        if len(self.core_types) > 1:
            self._reconcile_core_types()
        self._count_from_lists()
        if self.recognised == 0:
            raise ParseError("no lscpu fields found")
        if not self.core_fields and not self.parse_section:
            # /proc/cpuinfo and dmidecode share "model name"/"flags" keys with lscpu
            # but carry none of its counts: refuse them rather than half-parse
            raise ParseError("not lscpu output: no CPU(s), Architecture, Socket(s) or thread/core counts")
        return topo

    def _count_from_lists(self) -> None:
        """NUMA nodes and CPUs counted from their lists where no count was printed."""
        topo = self.topo
        if topo.numa_nodes is None and topo.numa_node_cpus:
            topo.numa_nodes = len(topo.numa_node_cpus)
        if topo.cpus is None and topo.online_cpus:
            topo.cpus = len(topo.online_cpus)

    def _reconcile_core_types(self) -> None:
        """Several core types: the counts they share are the CPU's, the others unknown."""
        topo = self.topo
        for entry in self.core_types:
            line = entry.pop("line", None)
            entry.setdefault("sockets", None)
            if line is not None:
                entry["line"] = line
        topo.core_types = self.core_types
        topo.model_name = self.core_types[0].get("model_name")
        for name in ("threads_per_core", "cores_per_socket", "sockets"):
            setattr(topo, name, _shared_count(self.core_types, name))


def _shared_count(core_types: list[dict[str, Any]], name: str) -> int | None:
    """The count ``name`` when every core type has the same number; None otherwise."""
    values = {entry.get(name) for entry in core_types}
    value = next(iter(values))
    return value if len(values) == 1 and isinstance(value, int) else None


def _clean_text(name: str, value: str, *, ocr: bool) -> str:
    """A text field's value as lscpu printed it in English: OCR's spaces out of
    the hypervisor vendor, a localised or OCR-garbled virtualization type mapped
    back to lscpu's words."""
    if name == "hypervisor_vendor":
        return value.replace(" ", "") if ocr else value
    if name != "virtualization_type":
        return value
    value = _LOCALE_VALUES.get(value, value)
    close = difflib.get_close_matches(value.lower(), _VIRTUALIZATION_TYPES, 1, 0.6) if ocr else []
    return close[0] if close else value


_VIRTUALIZATION_TYPES = ["full", "para", "container", "none"]


@functools.lru_cache(maxsize=512)
def _ocr_key(nkey: str) -> str | None:
    squashed = re.sub(r"[^a-z0-9]", "", nkey)
    if not squashed:
        return None
    m = re.match(r"^numanode(\d{1,5})(cpus?)?$", squashed)
    if m:
        return f"numa node{m.group(1)} cpu(s)"
    if squashed in _OCR_KEYS:
        return _OCR_KEYS[squashed]
    close = difflib.get_close_matches(squashed, list(_OCR_KEYS), n=1, cutoff=0.75)
    return _OCR_KEYS[close[0]] if close else None


# ----------------------------------------------------------------- JSON form


def _json_pairs(entries: Any, out: list[tuple[str, str]]) -> None:
    if not isinstance(entries, list):
        raise ParseError("lscpu -J: 'lscpu' is not a list")
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        field_name = entry.get("field")
        data = entry.get("data")
        if isinstance(field_name, str):
            out.append((field_name.rstrip(":"), "" if data is None else str(data)))
        if "children" in entry:
            _json_pairs(entry["children"], out)


def _json_entries(text: str) -> Any:
    """The ``lscpu`` value of ``lscpu -J``'s document (ParseError when there is none)."""
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ParseError(f"lscpu -J: invalid JSON: {exc}") from None
    if not isinstance(doc, dict) or "lscpu" not in doc:
        raise ParseError("lscpu -J: no 'lscpu' key")
    return doc["lscpu"]


def _parse_json(text: str) -> CpuTopology:
    pairs: list[tuple[str, str]] = []
    _json_pairs(_json_entries(text), pairs)
    builder = _Builder()
    lines = text.splitlines()
    cursor = 0
    for key, value in pairs:
        line_no = _json_field_line(lines, key, cursor)
        cursor = line_no or cursor
        builder.add(key, value, line_no)
    return builder.finish()


def _json_field_line(lines: list[str], key: str, cursor: int) -> int | None:
    """The 1-based line holding field ``key`` at or after line index ``cursor``
    (JSON keeps the fields' order, so the search goes forward); None when none does."""
    needle = json.dumps(key + ":")
    return next((idx + 1 for idx in range(cursor, len(lines)) if needle in lines[idx]), None)


# ----------------------------------------------------------------- text form


def _parse_section(lines: list[str], start: int, builder: _Builder) -> None:
    """``lscpu --parse``: header ``# CPU,Core,Socket,Node,,L1d,...`` at ``start``."""
    header = [c.strip() for c in lines[start].lstrip("#").split(",")]
    _add_cache_columns(builder.topo, header, start + 1)
    upper = [c.upper() for c in header]
    if "CPU" not in upper:
        return
    rows = _parse_rows(lines[start + 1 :], upper)
    _apply_map(builder, rows, start + 1, total=len(rows))


def _parse_rows(lines: list[str], upper: list[str]) -> list[dict[str, str]]:
    """The comma-separated rows under the ``--parse`` header (upper-case column ->
    cell) up to a blank or ``#`` line; a row without a CPU number is skipped."""
    cpu_at = upper.index("CPU")
    rows: list[dict[str, str]] = []
    for line in lines:
        if not line.strip() or line.startswith("#"):
            break
        cells = [c.strip() for c in line.split(",")]
        if len(cells) > cpu_at and _int(cells[cpu_at]) is not None:
            rows.append(dict(zip(upper, cells, strict=False)))
    return rows


def _add_cache_columns(topo: CpuTopology, names: list[str], line: int) -> None:
    """The caches a CPU map has a column for (``L1d``, ``L2`` ...); their sizes
    are not in the map, which only numbers the cache instances."""
    for name in names:
        if re.match(r"^L\d[a-z]?$", name) and name not in topo.caches:
            topo.caches[name] = ""
            topo.lines.setdefault(f"caches.{name}", line)


@dataclass
class _CpuMap:
    """What the online rows of ``lscpu -e``/``-p`` say."""

    cpus: list[int] = field(default_factory=list)
    nodes: dict[int, list[int]] = field(default_factory=dict)
    sockets: set[str] = field(default_factory=set)
    cores: set[tuple[str, str]] = field(default_factory=set)  # (socket, core)

    def add(self, row: dict[str, str]) -> None:
        cpu = _int(row.get("CPU", ""))
        if cpu is None or row.get("ONLINE", "yes") not in ("yes", "Y", "y"):
            return
        self.cpus.append(cpu)
        node = _int(row.get("NODE", ""))
        if node is not None:
            self.nodes.setdefault(node, []).append(cpu)
        self._add_socket(row)

    def _add_socket(self, row: dict[str, str]) -> None:
        """The row's socket, and its core within that socket when the row numbers one."""
        socket = row.get("SOCKET", "")
        if socket:
            self.sockets.add(socket)
            if row.get("CORE"):
                self.cores.add((socket, row["CORE"]))


def _apply_map(builder: _Builder, rows: list[dict[str, str]], line: int, *, total: int) -> None:
    """Fill the topology from ``lscpu -e``/``-p`` rows (upper-case column -> cell):
    CPU count, online CPUs, node CPU lists, sockets, cores per socket, threads per core."""
    if not rows:
        return
    cpu_map = _CpuMap()
    for row in rows:
        cpu_map.add(row)
    topo = builder.topo
    builder.parse_section = True
    builder.recognised += 1
    topo.extra.setdefault("cpu_map_rows", len(rows))
    _apply_cpus(topo, cpu_map, line, total=total)
    _apply_nodes(topo, cpu_map, line)
    _apply_sockets(topo, cpu_map, line)


def _apply_cpus(topo: CpuTopology, cpu_map: _CpuMap, line: int, *, total: int) -> None:
    """The CPU count (``total`` rows, offline ones too) and the online CPUs, unless the summary said them."""
    if topo.cpus is None:
        topo.cpus = total  # CPU(s) counts offline CPUs too
        topo.lines["cpus"] = line
    if not topo.online_cpus and cpu_map.cpus:
        topo.online_cpus = sorted(cpu_map.cpus)


def _apply_nodes(topo: CpuTopology, cpu_map: _CpuMap, line: int) -> None:
    """The map's CPUs of each NUMA node, unless the summary listed them."""
    if cpu_map.nodes and not topo.numa_node_cpus:
        topo.numa_node_cpus = {n: sorted(c) for n, c in sorted(cpu_map.nodes.items())}
        for n in topo.numa_node_cpus:
            topo.lines.setdefault(f"numa_node_cpus.{n}", line)


def _apply_sockets(topo: CpuTopology, cpu_map: _CpuMap, line: int) -> None:
    """Sockets, threads per core and cores per socket of the map, where it says them evenly."""
    sockets = cpu_map.sockets
    if topo.sockets is None and sockets and all(ascii_digits(s) for s in sockets):
        topo.sockets = len(sockets)
        topo.lines.setdefault("sockets", line)
    _apply_cores(topo, cpu_map, line)


def _apply_cores(topo: CpuTopology, cpu_map: _CpuMap, line: int) -> None:
    """Threads per core and cores per socket, when the map's CPUs and cores divide evenly."""
    cpus, cores = cpu_map.cpus, cpu_map.cores
    if not (cores and topo.threads_per_core is None and cpus and len(cpus) % len(cores) == 0):
        return
    topo.threads_per_core = len(cpus) // len(cores)
    topo.lines.setdefault("threads_per_core", line)
    _apply_cores_per_socket(topo, cpu_map, line)


def _apply_cores_per_socket(topo: CpuTopology, cpu_map: _CpuMap, line: int) -> None:
    """Cores per socket, when the map's cores divide evenly among its sockets."""
    cores, sockets = cpu_map.cores, cpu_map.sockets
    if topo.cores_per_socket is None and sockets and len(cores) % len(sockets) == 0:
        topo.cores_per_socket = len(cores) // len(sockets)
        topo.lines.setdefault("cores_per_socket", line)


def _tokens(lines: list[str]) -> list[tuple[str, int, str, str, int]]:
    """(kind, line_no, key, value, value_col) with kind K (key only), KV, V (value only)."""
    out = []
    for idx, raw in enumerate(lines):
        # full-width colon of the Chinese catalogue
        line = raw.rstrip().replace("\uff1a", ":")
        if line.strip():
            out.append(_token(line, idx + 1))
    return out


def _token(line: str, line_no: int) -> tuple[str, int, str, str, int]:
    """The token of one non-blank summary line (see :func:`_tokens`)."""
    m = _KEY_RE.match(line)
    if not (m and re.search(r"[^\W_]", m.group(2))):
        return ("V", line_no, "", line, 0)
    group = 3 if m.group(3) is not None else 4
    value = m.group(group) or ""
    col = m.start(group) if m.group(group) is not None else len(line)
    return ("KV" if value else "K", line_no, m.group(2), value, col)


def _parse_text(text: str) -> CpuTopology:
    lines = text.splitlines()
    builder = _Builder()
    summary_end, parse_header = _comment_lines(lines)
    tokens = _tokens(lines[:summary_end])
    pair = _pair_ocr if _ocr_pasted(tokens) else _pair_plain
    pair(tokens, builder)
    if parse_header is not None:
        _parse_section(lines, parse_header, builder)
        return builder.finish()
    extended = next((idx for idx, line in enumerate(lines) if _is_extended_header(line.split())), None)
    if extended is not None:
        _parse_extended(lines, extended, builder)
    return builder.finish()


def _ocr_pasted(tokens: list[tuple[str, int, str, str, int]]) -> bool:
    """Whether the summary's keys and values came apart (OCR puts a value on a
    line of its own): more keys without a value than with one, at least four."""
    empty_keys = [t for t in tokens if t[0] == "K" and _norm_key(t[2]) not in _SECTIONS]
    with_value = [t for t in tokens if t[0] == "KV"]
    # a real lscpu summary is well under 100 lines; the fuzzy OCR pairing is not
    # meant for (and would be slow on) megabytes of key-only lines
    return 4 <= len(empty_keys) <= _OCR_MAX_TOKENS and len(empty_keys) > len(with_value)


def _comment_lines(lines: list[str]) -> tuple[int, int | None]:
    """Where the summary ends (the first ``#`` line) and the ``# CPU,...`` header
    of ``lscpu --parse`` (None without one)."""
    summary_end = len(lines)
    parse_header = None
    for idx, line in enumerate(lines):
        if line.startswith("#"):
            summary_end = min(summary_end, idx)
            if parse_header is None and re.match(r"^#\s*CPU,", line):
                parse_header = idx
    return summary_end, parse_header


def _is_extended_header(head: list[str]) -> bool:
    """``lscpu -e``'s header: ``CPU NODE SOCKET ...``."""
    return head[:1] == ["CPU"] and ("SOCKET" in head or "NODE" in head)


def _parse_extended(lines: list[str], start: int, builder: _Builder) -> None:
    """``lscpu -e``: ``CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE`` then one row per CPU."""
    header = lines[start].split()
    _add_cache_columns(builder.topo, [name for col in header for name in col.split(":")], start + 1)
    rows: list[dict[str, str]] = []
    for line in lines[start + 1 :]:
        cells = line.split()
        if len(cells) != len(header) or _int(cells[0]) is None:
            break
        rows.append(dict(zip(header, cells, strict=True)))
    _apply_map(builder, rows, start + 1, total=len(rows))


# A terminal wraps a line at its width (80 columns or more, rarely under 60): a
# line shorter than this did not run on into the next one.
_MIN_WRAP_WIDTH = 60


def _pair_plain(tokens: list[tuple[str, int, str, str, int]], builder: _Builder) -> None:
    # [key, value parts, line, value_col]: the parts of a wrapped value are
    # joined once (appending to the string each line is quadratic).
    pending: list[Any] | None = None
    last_width = 0  # width of the previous line: only a full line can wrap
    for kind, line_no, key, value, col in tokens:
        width, last_width = last_width, (len(value) if kind == "V" else col + len(value))
        if kind == "V":
            if pending is not None and pending[3]:
                _add_wrapped(pending, value, width, line_no, builder)
            continue
        _add_pending(pending, builder)
        pending = [key, [value], line_no, col if value else 0]
    _add_pending(pending, builder)


def _add_pending(pending: list[Any] | None, builder: _Builder) -> None:
    """Add the pending key with its value's parts joined (nothing when none is pending)."""
    if pending is not None:
        builder.add(pending[0], "".join(pending[1]), pending[2])


def _add_wrapped(pending: list[Any], value: str, width: int, line_no: int, builder: _Builder) -> None:
    """A line without a key under a pending value: the rest of a wrapped value, or,
    when the line before was too short to wrap and this one is not under the
    value column, a key cut before its colon ("CPU M" at the end of a paste)."""
    col = pending[3]
    if width < _MIN_WRAP_WIDTH and not value[:1].isspace():
        builder.topo.errors.append(
            ArtifactError("", f"lscpu: line without ':' not read: {value.strip()[:80]!r}", line_no)
        )
        return
    # wrapped value: text continues at the value column (a wrap may split a word)
    pending[1].append(value[col:] if len(value) > col and not value[:col].strip() else value.strip())


def _pair_ocr(tokens: list[tuple[str, int, str, str, int]], builder: _Builder) -> None:
    claimed: set[int] = set()
    for pos, (kind, line_no, key, value, _col) in enumerate(tokens):
        if kind == "KV":
            builder.add(key, value, line_no, ocr=True)
            continue
        if kind != "K":
            continue
        pick = _ocr_value_of(tokens, pos, claimed)
        if pick is None:
            continue
        claimed.add(pick)
        builder.add(key, tokens[pick][3], tokens[pick][1], ocr=True)


def _ocr_value_of(tokens: list[tuple[str, int, str, str, int]], pos: int, claimed: set[int]) -> int | None:
    """The unclaimed value line of the key at ``pos``: the next line, else the
    nearest one above it (OCR misplaces a value by a line or two, never by a
    screenful) before a line holding both a key and a value."""
    if pos + 1 < len(tokens) and tokens[pos + 1][0] == "V" and (pos + 1) not in claimed:
        return pos + 1
    return _ocr_value_above(tokens, pos, claimed)


def _ocr_value_above(tokens: list[tuple[str, int, str, str, int]], pos: int, claimed: set[int]) -> int | None:
    """The nearest unclaimed value line above ``pos`` within the OCR window and
    below the last key-and-value line; None when there is none."""
    back = pos - 1
    while back >= max(0, pos - _OCR_WINDOW) and tokens[back][0] != "KV":
        if tokens[back][0] == "V" and back not in claimed:
            return back
        back -= 1
    return None


_MAP_HEADER = re.compile(
    r"^[ \t]*CPU(?:[ \t]+(?:NODE|SOCKET|CORE|BOOK|DRAWER|CLUSTER|ONLINE|CONFIGURED|POLARIZATION|ADDRESS"
    r"|MAXMHZ|MINMHZ|MHZ|SCALMHZ%|L1d:[\w:]*|L\d[\w:]*))+[ \t]*\n[ \t]*\d",
    re.M,
)


def _detect(head: str) -> bool:
    if '"lscpu"' in head[:200] or _is_cpu_map(head):
        return True
    if not any(word in head for word in _TOPOLOGY_WORDS):
        return False
    return _is_summary(head) or _is_topology_excerpt(head)


def _is_cpu_map(head: str) -> bool:
    """Whether ``head`` holds ``lscpu -p``'s ``# CPU,...`` header or ``lscpu -e``'s table."""
    return "CPU" in head and bool(re.search(r"^#[ \t]*CPU,\w", head, re.M) or _MAP_HEADER.search(head))


# words of the summary's topology keys, in the languages lscpu prints
_TOPOLOGY_WORDS = ("Socket(s)", "Thread(s) per core", "座", "每个核的线程数", "コアあたり", "Потоков на ядро")
_SUMMARY_CPUS_KEY = re.compile(r"^\s*(Architecture|CPU\(s\)|架构|アーキテクチャ|Архитектура)[:：]", re.M)
_SUMMARY_TOPOLOGY_KEY = re.compile(
    r"^\s*(Socket\(s\)|Thread\(s\) per core|座|每个核的线程数"
    r"|コアあたりのスレッド数|ソケット数|Потоков на ядро|Сокетов)[:：]",
    re.M,
)


def _is_summary(head: str) -> bool:
    """Whether ``head`` has the summary's architecture or CPU count and a topology key."""
    return bool(_SUMMARY_CPUS_KEY.search(head) and _SUMMARY_TOPOLOGY_KEY.search(head))


def _is_topology_excerpt(head: str) -> bool:
    """The topology lines alone ("lscpu | grep -E 'Thread|Core|Socket|NUMA'", or a log
    that quoted them): three of them, each at most once."""
    keys = _TOPOLOGY_KEY.findall(head)
    return len(set(keys)) >= 3 and len(keys) == len(set(keys))


_TOPOLOGY_KEY = re.compile(
    r"^[ \t]*(Thread\(s\) per core|Core\(s\) per (?:socket|cluster)|Socket\(s\)|NUMA node\(s\)"
    r"|NUMA node0 CPU\(s\))[ \t]*:",
    re.M,
)


@register(
    "lscpu",
    commands=(r"^lscpu(\s|$)",),
    paths=(r"sos_commands/processor/lscpu$", r"lscpu(\.txt)?$", r"lscpu\.json$"),
    detect=_detect,
    priority=10,
    # lscpu -p's comment block; util-linux 2.35+'s "Vulnerability Mds:   Mitigation; Clear
    # CPU buffers; SMT Host state unknown" lines read like sentences
    prose_lines=(
        r"Vulnerability [\w ]{1,40}:[ \t]+\S.{0,300}",
        r"# The following is the parsable format, which can be fed to other",
        r"# programs\. Each different item in every column has an unique ID",
        r"# starting usually from zero\.",
    ),
)
def parse_lscpu(text: str) -> CpuTopology:
    """Parse ``lscpu`` text or ``lscpu -J`` JSON into a CpuTopology.

    Sample input (other accepted shapes in the module docstring)::

        CPU(s):              96
        Thread(s) per core:  2
        Socket(s):           2
        L3 cache:            33792K
        NUMA node0 CPU(s):   0-95
    """
    if not text.strip():
        raise ParseError("empty lscpu output")
    text = text.replace("\x00", "")
    if text.lstrip().startswith("{"):
        return _parse_json(text)
    return _parse_text(text)
