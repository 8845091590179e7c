"""``/proc/cpuinfo`` -> :class:`CpuTopology`: what ``lscpu`` would have said, for
a host that sent only cpuinfo (forum posts and tickets often paste it instead).

Sample input (x86, one block per logical CPU)::

    processor	: 0
    vendor_id	: GenuineIntel
    model name	: Intel(R) Xeon(R) Gold 6254 CPU @ 3.10GHz
    physical id	: 0
    siblings	: 36
    core id		: 0
    cpu cores	: 18
    flags		: fpu vme de pse tsc msr pae mce cx8 apic sep ... lm ... hypervisor

Sample input (ARM: no model name, the part number says it; Kunpeng 920)::

    processor	: 0
    BogoMIPS	: 200.00
    Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp
    CPU implementer	: 0x48
    CPU architecture: 8
    CPU variant	: 0x1
    CPU part	: 0xd01
    CPU revision	: 0

Sample input (POWER: the model on the ``cpu`` line, the machine in a trailer after the
blocks; readk)::

    processor	: 0
    cpu		: POWER9, altivec supported
    clock		: 3800.000000MHz
    revision	: 2.1 (pvr 004e 1201)

    timebase	: 512000000
    platform	: pSeries

Read with jc's ``proc_cpuinfo``; a grep of some of its keys (``grep "model
name" /proc/cpuinfo``) gives the model and vendor alone. Counts are only given when the blocks are the
whole file: processors numbered 0..n-1 (and, on x86, as many as sockets x
siblings). An excerpt (processors 22-27 of a forum post) still gives the model,
vendor and architecture. The ``hypervisor`` flag (x86 guests) is kept in
``extra["hypervisor_flag"]``: cpuinfo does not name the hypervisor, so
``hypervisor_vendor`` stays unknown while the assembler still makes the host a
guest; ``extra["cpuinfo"]`` marks the origin (an lscpu of the host wins). ARM
names follow util-linux's lscpu (``lscpu-arm.c``).

``lines`` keys: ``cpus``, ``model_name``, ``vendor``, ``architecture``,
``sockets``, ``cores_per_socket``, ``threads_per_core``.
"""

from __future__ import annotations

import re
from typing import Any

import jc

from collectors.facts import CpuTopology, ParseError
from collectors.parsers import register

# CPU implementer -> (vendor as lscpu prints it, {CPU part -> model name})
ARM_PARTS: dict[int, tuple[str, dict[int, str]]] = {
    0x41: (
        "ARM",
        {
            0xD03: "Cortex-A53",
            0xD07: "Cortex-A57",
            0xD08: "Cortex-A72",
            0xD0C: "Neoverse-N1",
            0xD40: "Neoverse-V1",
            0xD49: "Neoverse-N2",
            0xD4F: "Neoverse-V2",
            0xD84: "Neoverse-V3",
            0xD8E: "Neoverse-N3",
        },
    ),
    0x43: ("Cavium", {0x0A1: "ThunderX 88XX", 0x0AF: "ThunderX2 99xx"}),
    0x46: ("FUJITSU", {0x001: "A64FX"}),
    0x48: ("HiSilicon", {0xD01: "Kunpeng-920", 0xD02: "TaiShan-v120"}),
    0x4E: ("NVIDIA", {0x004: "Carmel"}),
    0x50: ("APM", {0x000: "X-Gene"}),
    0x70: ("Phytium", {0x660: "FTC660", 0x661: "FTC661", 0x662: "FTC662", 0x663: "FTC663"}),
    0xC0: ("Ampere", {0xAC3: "Ampere-1", 0xAC4: "Ampere-1a"}),
}

_PROCESSOR = re.compile(r"^processor\s*:\s*\d{1,6}\s*$", re.M)
_CPU_KEYS = re.compile(
    r"^(?:(?:vendor_id|model name|CPU implementer|CPU part|flags|Features)\s*:"
    r"|cpu\s*:\s*(?:POWER|PPC|\d{3,4}))",
    re.M,
)


_KNOWN_KEYS = frozenset(("vendor_id", "model name", "CPU implementer", "flags", "Features", "cpu"))
# a key cut mid-paste before its colon ("clock<TAB>"), an author's elision (".."): jc refuses them
_CUT_KEY_LINE = re.compile(r"^(?:[A-Za-z][\w ]{0,30}\t+|[ \t]*(?:\.{2,}|…)[ \t]*)$", re.M)


def _detect(text: str) -> bool:
    return bool(_PROCESSOR.search(text) and _CPU_KEYS.search(text))


def _hex(value: Any) -> int | None:
    try:
        return int(str(value), 16)
    except ValueError:
        return None


def _first_lines(text: str) -> dict[str, int]:
    """cpuinfo key -> 1-based line of its first occurrence."""
    out: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        key = line.split(":", 1)[0].strip()
        if ":" in line and key and key not in out:
            out[key] = number
    return out


def _whole_file(blocks: list[dict[str, Any]]) -> bool:
    if [b.get("processor") for b in blocks] != list(range(len(blocks))):
        return False  # (a block without a processor number among them too)
    sockets = _sockets(blocks)
    siblings = blocks[0].get("siblings")
    return not (sockets and isinstance(siblings, int) and len(sockets) * siblings != len(blocks))


def _sockets(blocks: list[dict[str, Any]]) -> set[Any]:
    """The physical ids (sockets) the processor blocks name."""
    return {b.get("physical id") for b in blocks if b.get("physical id") is not None}


def _arm_names(first: dict[str, Any]) -> tuple[str | None, str | None]:
    implementer, part = _hex(first.get("CPU implementer")), _hex(first.get("CPU part"))
    if implementer is None:
        return None, None
    vendor, parts = ARM_PARTS.get(implementer, (None, {}))
    return vendor, parts.get(part) if part is not None else None


@register(
    "cpuinfo",
    # cat/grep/head ... of /proc/cpuinfo, piped or not; not a count of it
    # (grep -c ^processor, ... | wc -l: one number, left unrecognised)
    commands=(r"^(?!.*\bgrep\s+(-\w*c\w*|--count)\s)(?!.*\|\s*wc\b).*(^|[\s|;<])/proc/cpuinfo\b",),
    paths=(r"proc/cpuinfo$", r"(^|/)cpuinfo(\.txt)?$"),
    detect=_detect,
    needles=("processor",),
    priority=10,
    # x86 prints it with an empty value (it reads like a heading)
    prose_lines=(r"power management:.*",),
)
def parse_cpuinfo(text: str) -> CpuTopology:
    """Parse ``/proc/cpuinfo`` (whole, or a run of its processor blocks).

    >>> t = parse_cpuinfo("processor: 0\\nCPU implementer: 0x48\\nCPU architecture: 8\\nCPU part: 0xd01\\n")
    >>> (t.vendor, t.model_name, t.architecture, t.cpus)
    ('HiSilicon', 'Kunpeng-920', 'aarch64', 1)
    """
    blocks, trailer = _processor_blocks(text)
    first = blocks[0]
    topo = CpuTopology(extra={"cpuinfo": 1})
    put = _Setter(topo, _first_lines(text))
    power = _identity(first, put)
    if "hypervisor" in topo.flags:
        topo.extra["hypervisor_flag"] = 1
        topo.virtualization_type = "full"
    # POWER's file ends with a trailer (timebase, platform): without it, a cut
    if _whole_file(blocks) and (trailer or not power):
        _counts(blocks, put)
    return topo


def _identity(first: dict[str, Any], put: _Setter) -> bool:
    """Vendor, model and flags of the first processor block; whether it is POWER's."""
    if "CPU implementer" in first:
        _arm_identity(first, put)
        return False
    if "cpu" in first and "vendor_id" not in first:
        put("model_name", str(first["cpu"]), "cpu")  # "POWER9, altivec supported"
        return True
    _x86_identity(first, put)
    return False


def _processor_blocks(text: str) -> tuple[list[dict[str, Any]], bool]:
    """jc's processor blocks of ``text``, or of a grep of some keys ("grep
    'model name' /proc/cpuinfo", no counts) the first entry; and whether a
    trailer (POWER's ``timebase`` after the blocks) follows them."""
    entries = _jc_entries(text)
    blocks = [b for b in entries if isinstance(b.get("processor"), int)]
    if not blocks:
        blocks = [b for b in entries if _KNOWN_KEYS & set(b)][:1]
    if not blocks:
        raise ParseError("no processor blocks and no model, vendor or flags lines")
    return blocks, any("timebase" in b for b in entries)


def _jc_entries(text: str) -> list[dict[str, Any]]:
    """jc's entries of ``text``, its cut key lines and elisions left out."""
    if _CUT_KEY_LINE.search(text):
        text = _CUT_KEY_LINE.sub("", text)
    try:
        parsed = jc.parse("proc_cpuinfo", text, quiet=True) or []
    except (ValueError, TypeError, KeyError, IndexError) as exc:  # jc on text that is not cpuinfo
        raise ParseError(f"not /proc/cpuinfo: {type(exc).__name__}") from exc
    return [b for b in parsed if isinstance(b, dict)]


class _Setter:
    """Sets a field of the topology with the line of the key it comes from."""

    def __init__(self, topo: CpuTopology, lines: dict[str, int]) -> None:
        self.topo = topo
        self.lines = lines

    def __call__(self, name: str, value: Any, key: str) -> None:
        if value in (None, ""):
            return
        setattr(self.topo, name, value)
        if key in self.lines:
            self.topo.lines[name] = self.lines[key]


def _arm_identity(first: dict[str, Any], put: _Setter) -> None:
    """Vendor, model and flags of an ARM CPU (implementer and part numbers)."""
    vendor, model = _arm_names(first)
    put("vendor", vendor, "CPU implementer")
    put("model_name", first.get("model name") or model, "model name" if "model name" in first else "CPU part")
    put("architecture", "aarch64" if first.get("CPU architecture") == 8 else None, "CPU architecture")
    features = first.get("Features") or ""
    put.topo.flags = features.split() if isinstance(features, str) else list(features)


def _x86_identity(first: dict[str, Any], put: _Setter) -> None:
    """Vendor, model and flags of an x86 CPU."""
    flags = first.get("flags") or []
    if isinstance(flags, str):
        flags = flags.split()
    put("vendor", first.get("vendor_id"), "vendor_id")
    put("model_name", first.get("model name"), "model name")
    put("architecture", "x86_64" if "lm" in flags else None, "flags")
    put.topo.flags = list(flags)


def _counts(blocks: list[dict[str, Any]], put: _Setter) -> None:
    """CPUs, sockets, cores and threads of a whole file."""
    first = blocks[0]
    put("cpus", len(blocks), "processor")
    put.topo.online_cpus = list(range(len(blocks)))
    sockets = _sockets(blocks)
    cores, siblings = first.get("cpu cores"), first.get("siblings")
    if sockets:
        put("sockets", len(sockets), "physical id")
    if isinstance(cores, int) and cores > 0:
        put("cores_per_socket", cores, "cpu cores")
        if isinstance(siblings, int) and siblings % cores == 0:
            put("threads_per_core", siblings // cores, "siblings")
