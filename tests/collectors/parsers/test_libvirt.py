"""libvirt domain XML parser: seed 000's pasted fragment, libvirt's test driver live,
runtime status documents, fragment recovery and hostile XML."""

from __future__ import annotations

import shutil
import subprocess
import time

import pytest

from collectors.facts import Domain, ParseError
from collectors.parsers.libvirt import parse_domain
from tests.collectors.parsers.lookup import detect, for_command, for_path
from tests.conftest import CORPUS, FIXTURES, IN_CI, SEEDS, service_unavailable

SEED_000 = next(SEEDS.glob("000_*.txt"), None)


def seed_block(path, first: str, last: str) -> str:
    """Lines of a seed file from the first line containing ``first`` through the next
    line containing ``last`` (the seed text itself is not copied into the repo)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, ln in enumerate(lines) if first in ln)
    end = next(i for i in range(start, len(lines)) if last in lines[i])
    return "\n".join(lines[start : end + 1])


def virsh_test_driver(*args: str) -> str:
    """Output of ``virsh -c test:///default ARGS`` (libvirt's built-in test hypervisor)."""
    if shutil.which("virsh") is None:
        service_unavailable("virsh is not installed (apt-get install libvirt-clients)")
    proc = subprocess.run(
        ["virsh", "-c", "test:///default", *args], capture_output=True, text=True, timeout=60, check=False
    )
    if proc.returncode != 0:
        if IN_CI:
            pytest.fail(f"virsh {' '.join(args)} failed: {proc.stderr}")
        pytest.skip(f"virsh test driver unavailable: {proc.stderr.strip()}")
    return proc.stdout


@pytest.fixture
def seed_fragment() -> str:
    if SEED_000 is None:
        service_unavailable("seed 000 missing")
    return seed_block(SEED_000, "<iothreads>4</iothreads>", "</disk>")


def test_seed_000_fragment_is_recovered(seed_fragment):
    d = parse_domain(seed_fragment)
    assert d.recovered is True
    assert d.xml_root == "domain"
    assert d.iothreads == 4
    assert d.iothread_ids == [3]
    assert d.iothreadpin == {3: [65]}
    assert d.emulatorpin == [67]
    # the "..." line elides vcpus 2-30; the three that are written down are kept
    assert d.vcpupin == {0: [1], 1: [3], 31: [63]}
    assert d.memnodes == {0: {"mode": "preferred", "nodeset": [1]}}
    assert d.numatune_memory_mode is None  # no <memory> element inside <numatune>
    assert d.cpu_mode == "host-passthrough"
    assert d.cpu_check == "none"
    assert d.topology == {"sockets": 1, "cores": 32, "threads": 1}
    assert len(d.numa_cells) == 1
    cell = d.numa_cells[0]
    assert (cell.id, cell.cpus, cell.memory_kb, cell.distances) == (0, list(range(32)), 33554432, {0: 10})
    assert len(d.disks) == 1
    disk = d.disks[0]
    assert (disk.target, disk.device, disk.bus, disk.iothread) == ("vdb", "disk", "virtio", 3)
    assert disk.source.startswith("rbd:pool-35fe9718")
    # no <vcpu> in the fragment: unknown, not zero
    assert d.vcpus is None and d.vcpu_current is None


def test_seed_000_fragment_evidence_lines_point_into_the_paste(seed_fragment):
    d = parse_domain(seed_fragment)
    lines = seed_fragment.splitlines()
    assert "<iothreads>4" in lines[d.lines["iothreads"] - 1]
    assert "emulatorpin cpuset='67'" in lines[d.lines["emulatorpin"] - 1]
    assert "iothreadpin iothread='3'" in lines[d.lines["iothreadpin[3]"] - 1]
    assert "memnode cellid='0'" in lines[d.lines["memnodes[0]"] - 1]
    assert "<topology" in lines[d.lines["topology"] - 1]
    assert "vcpupin vcpu='31'" in lines[d.lines["vcpupin[31]"] - 1]
    assert "<disk " in lines[d.lines["disk.vdb"] - 1]
    assert "<numa>" in lines[d.lines["numa"] - 1]


def test_seed_000_fragment_is_detected_by_content(seed_fragment):
    spec = detect(seed_fragment)
    assert spec is not None and spec.kind == "libvirt_domain"


def test_live_test_driver_domain():
    xml = virsh_test_driver("dumpxml", "test")
    d = parse_domain(xml)
    assert d.recovered is False
    assert (d.name, d.domain_type, d.xml_root) == ("test", "test", "domain")
    assert d.vcpus == 2 and d.vcpu_current == 2 and d.vcpu_placement == "static"
    assert d.memory_kb == 8388608 and d.current_memory_kb == 2097152
    assert d.cpu_mode is None  # the test domain has no <cpu>
    assert [(x.target, x.bus, x.source) for x in d.disks] == [("vda", "virtio", "/guest/diskimage1")]
    assert xml.splitlines()[d.lines["vcpus"] - 1].strip().startswith("<vcpu")
    assert detect(xml).kind == "libvirt_domain"


def test_saved_test_driver_copy_matches_live_output():
    saved = (FIXTURES / "libvirt" / "virsh_test_dumpxml_test.txt").read_text()
    live = virsh_test_driver("dumpxml", "test")
    assert parse_domain(saved).vcpus == parse_domain(live).vcpus
    assert parse_domain(saved).uuid == parse_domain(live).uuid


def test_domstatus_wraps_domain():
    path = CORPUS / "libvirt" / "insights-core_test_qemu_xml_XML_IDM_CLIENT.txt"
    if not path.exists():
        service_unavailable("corpus missing")
    d = parse_domain(path.read_text())
    assert d.xml_root == "domstatus"
    # the <vcpus><vcpu id= pid=> list of domstatus is runtime state, not the definition
    assert (d.vcpus, d.vcpu_current) == (32, 2)
    assert d.max_memory_kb is not None


def test_units_are_converted_to_kib():
    d = parse_domain(
        "<domain type='kvm'><memory unit='GiB'>32</memory><currentMemory unit='MB'>1000</currentMemory>"
        "<maxMemory slots='16' unit='b'>2147483648</maxMemory><vcpu>4</vcpu></domain>"
    )
    assert d.memory_kb == 32 * 1024 * 1024
    assert d.current_memory_kb == 1000 * 1000 * 1000 // 1024
    assert (d.max_memory_kb, d.max_memory_slots) == (2 * 1024 * 1024, 16)


def test_cpu_without_mode_is_custom_and_cells_without_ids_are_indexed():
    d = parse_domain(
        "<domain type='qemu'><vcpu placement='static' current='2'>4</vcpu><cpu><numa>"
        "<cell cpus='0-1' memory='1' unit='GiB'/><cell cpus='2-3' memory='1048576'/></numa></cpu></domain>"
    )
    assert d.cpu_mode == "custom"
    assert [(c.id, c.cpus, c.memory_kb) for c in d.numa_cells] == [(0, [0, 1], 1048576), (1, [2, 3], 1048576)]
    assert (d.vcpus, d.vcpu_current) == (4, 2)


def test_iothreadids_count_when_iothreads_is_absent():
    d = parse_domain(
        "<domain type='kvm'><vcpu>2</vcpu>"
        "<iothreadids><iothread id='2'/><iothread id='5'/></iothreadids></domain>"
    )
    assert d.iothreads == 2 and d.iothread_ids == [2, 5]


def test_hugepages_with_sizes():
    d = parse_domain(
        "<domain type='kvm'><vcpu>2</vcpu><memoryBacking><hugepages>"
        "<page size='1' unit='G' nodeset='0'/><page size='2048' unit='KiB'/>"
        "</hugepages></memoryBacking></domain>"
    )
    assert d.hugepages is True
    assert d.hugepage_sizes_kb == [1048576, 2048]


def test_numatune_defaults_to_strict():
    d = parse_domain("<domain type='kvm'><vcpu>2</vcpu><numatune><memory nodeset='0-1'/></numatune></domain>")
    assert (d.numatune_memory_mode, d.numatune_memory_nodeset) == ("strict", [0, 1])


def test_truncated_document_is_recovered():
    text = "<domain type='kvm'>\n  <name>vm</name>\n  <vcpu>8</vcpu>\n  <cputune>\n"
    text += "    <vcpupin vcpu='0' cpuset='4'/>\n"
    d = parse_domain(text)
    assert d.recovered and d.vcpus == 8 and d.vcpupin == {0: [4]}


@pytest.mark.parametrize(
    "payload",
    [
        # billion laughs
        '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>'
        "<domain type='kvm'><name>&lol2;</name><vcpu>1</vcpu></domain>",
        # external entity
        '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
        "<domain type='kvm'><name>&xxe;</name><vcpu>1</vcpu></domain>",
        # external DTD
        '<!DOCTYPE domain SYSTEM "http://example.invalid/d.dtd"><domain type="kvm"><vcpu>1</vcpu></domain>',
        # parameter entity
        '<!DOCTYPE d [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]><domain><vcpu>1</vcpu></domain>',
    ],
)
def test_hostile_xml_is_refused(payload):
    with pytest.raises(ParseError, match="unsafe"):
        parse_domain(payload)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "hello world",
        "<html><body>not a domain</body></html>",
        "<domain type='kvm'><vcpu>many</vcpu></domain>",
        "<domain type='kvm'><vcpu>2</vcpu><cputune><vcpupin vcpu='0' cpuset='x-y'/></cputune></domain>",
        "<domain type='kvm'><memory unit='parsec'>1</memory><vcpu>1</vcpu></domain>",
    ],
)
def test_unusable_text_raises_parse_error(text):
    with pytest.raises(ParseError):
        parse_domain(text)


def test_detects_domains_whose_first_attribute_is_a_namespace():
    text = "<domain xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0' type='kvm'>\n"
    text += "<vcpu>2</vcpu>\n</domain>"
    assert detect(text).kind == "libvirt_domain"
    assert parse_domain(text).vcpus == 2


def test_registration_routes():
    assert for_command("virsh dumpxml db01").kind == "libvirt_domain"
    assert for_command("cat /etc/libvirt/qemu/db01.xml").kind == "libvirt_domain"
    assert for_path("sos_commands/virsh/virsh_-r_dumpxml_db01").kind == "libvirt_domain"
    assert for_path("etc/libvirt/qemu/db01.xml").kind == "libvirt_domain"


# ---------------------------------------------------------------- bounded work (issue 15)

_ISSUE15_HEAD = "<domain type='kvm'>\n<vcpu>32</vcpu>\n"


def _cpu_seconds(func, *args):
    """``(result or ParseError, CPU seconds)``; CPU time, not wall time, so a busy
    shared machine does not make the bound flaky."""
    start = time.process_time()
    try:
        result = func(*args)
    except ParseError as exc:
        result = exc
    return result, time.process_time() - start


@pytest.mark.parametrize(
    "text",
    [
        # issue 15 defect 1: the 1,044-byte gzip upload, and its <!-- / CDATA variants
        _ISSUE15_HEAD + "<?" * 500_000,
        _ISSUE15_HEAD + "<!--" * 250_000,
        _ISSUE15_HEAD + "<![CDATA[" * 100_000,
        # below the tag cap, so fragment recovery itself runs (quadratic before: ~30 s)
        _ISSUE15_HEAD + "<?" * 40_000,
        _ISSUE15_HEAD + "<!--" * 40_000,
        _ISSUE15_HEAD + "<![CDATA[" * 40_000,
        # quotes never closed, tags cut short
        _ISSUE15_HEAD + "<a b='" * 40_000,
        _ISSUE15_HEAD + "<a b=\"'" * 40_000,
        _ISSUE15_HEAD + "<cputune " * 40_000,
        # deep nesting, open and closed, and 10 MB of <a>
        "<domain>" + "<a>" * 40_000,
        "<domain>" + "<a>" * 40_000 + "</a>" * 40_000 + "</domain>",
        "<a>" * (10 * 1024 * 1024 // 3),
        "<domain>" + "<a>" * (10 * 1024 * 1024 // 3),
        # a few bytes of cpuset that would expand to gigabytes of CPU ids
        "<domain><vcpu>1</vcpu><cputune>"
        + "<vcpupin vcpu='1' cpuset='0-65535'/>" * 40_000
        + "</cputune></domain>",
    ],
    ids=lambda t: f"{t[40:60]!r}x{len(t)}",
)
def test_hostile_fragments_end_quickly(text):
    result, seconds = _cpu_seconds(parse_domain, text)
    # parsed (cut-short tags kept as text) or refused, never slow
    assert isinstance(result, ParseError | Domain)
    assert seconds < 1.0


def test_recovery_is_linear_in_the_fragment():
    # thousands of <vcpupin> lines in a fragment left open: each line's evidence is
    # found in one pass (one search per pin was quadratic)
    text = "<cputune>\n" + "".join(f"  <vcpupin vcpu='{i}' cpuset='{i % 64}'/>\n" for i in range(4000))
    d, seconds = _cpu_seconds(parse_domain, text)
    assert d.recovered and len(d.vcpupin) == 4000
    assert d.lines["vcpupin[3999]"] == 4001
    assert seconds < 1.0


def test_unterminated_comment_is_an_error_with_its_line():
    with pytest.raises(ParseError, match="unterminated comment") as info:
        parse_domain("<cputune>\n<vcpupin vcpu='0' cpuset='1'/>\n<!-- cut here\n<emulatorpin cpuset='2'/>\n")
    assert info.value.line == 3


def test_oversized_broken_text_is_not_recovered():
    text = "<cputune>\n" + "<!-- padding -->\n" * 70_000
    with pytest.raises(ParseError, match="too large to recover"):
        parse_domain(text)


def test_issue_15_upload_through_the_loader_is_an_artifact_error():
    import gzip

    from collectors.archive import load

    data = gzip.compress((_ISSUE15_HEAD + "<?" * 500_000).encode())
    assert len(data) < 1100
    host, seconds = _cpu_seconds(lambda: load(data, name="domain.xml.gz", split=False).host)
    assert host.domains == []
    assert any("libvirt_domain" in e.message for e in host.errors)
    assert seconds < 5.0


# ------------------------------------------- fragments quoted without <domain> (issue 11)

# element -> the Domain fields it carries
FRAGMENT_FIELDS = {
    "vcpu": ("vcpus", "vcpu_current", "vcpu_cpuset"),
    "cputune": ("vcpupin", "emulatorpin", "iothreadpin"),
    "numatune": ("numatune_memory_mode", "numatune_memory_nodeset", "numatune_memory_placement", "memnodes"),
    "cpu": ("cpu_mode", "cpu_model", "topology", "numa_cells"),
    "memoryBacking": ("hugepages", "hugepage_sizes_kb"),
}


def corpus_elements():
    """(file, element, element text) of every top-level domain child of
    FRAGMENT_FIELDS in the libvirt corpus: real XML, cut as engineers quote it."""
    import re

    out = []
    for path in sorted((CORPUS / "libvirt").glob("*.xml")):
        text = path.read_text()
        for tag in FRAGMENT_FIELDS:
            m = re.search(rf"^( *)<{tag}\b[^>]*?(/>|>.*?</{tag}>)", text, re.M | re.S)
            if m:
                out.append(pytest.param(path, tag, m.group(0), id=f"{path.stem}-{tag}"))
    return out


@pytest.mark.parametrize(("path", "tag", "element"), corpus_elements())
def test_an_element_quoted_alone_gives_the_same_facts_as_its_document(path, tag, element):
    whole = parse_domain(path.read_text())
    part = parse_domain(element)
    assert part.fragment and part.recovered and part.name is None
    for name in FRAGMENT_FIELDS[tag]:
        assert getattr(part, name) == getattr(whole, name), name
    # the same quoted inside prose, after a prompt-less paste
    prose = f"The guest was defined with\n{element}\nand nothing else changed.\n"
    assert detect(prose).kind == "libvirt_domain"
    inside = parse_domain(prose)
    for name in FRAGMENT_FIELDS[tag]:
        assert getattr(inside, name) == getattr(whole, name), name


def test_inline_vcpu_fragment_in_a_prose_line():
    line = "On the guest we found <vcpu placement='static' current='4'>16</vcpu> in the XML & nothing else."
    assert detect(line).kind == "libvirt_domain"
    d = parse_domain(line)
    assert (d.vcpus, d.vcpu_current, d.vcpu_placement, d.fragment) == (16, 4, "static", True)
    assert d.lines["vcpus"] == 1


def test_pin_lines_quoted_without_cputune_are_adopted():
    text = (
        "  <vcpupin vcpu='0' cpuset='1'/>\n  <vcpupin vcpu='1' cpuset='3'/>\n  <emulatorpin cpuset='67'/>\n"
    )
    d = parse_domain(text)
    assert d.vcpupin == {0: [1], 1: [3]} and d.emulatorpin == [67] and d.fragment
    assert d.lines["vcpupin[1]"] == 2


def test_fragment_in_a_transcript_reaches_the_host_and_rules():
    from collectors.archive import load
    from collectors.facts import SnapshotFacts
    from engine.run import analyze

    text = (
        "The customer's guest XML has CPU hot-plug on:\n\n"
        "<vcpu placement='static' current='4'>16</vcpu>\n\n"
        "[root@kvm01 ~]# virsh dumpxml other | grep -A3 cputune\n"
        "  <cputune>\n    <vcpupin vcpu='0' cpuset='2'/>\n  </cputune>\n"
    )
    host = load(text.encode(), name="paste.txt", split=False).host
    fragments = [d for d in host.domains if d.fragment]
    assert any(d.vcpus == 16 and d.vcpu_current == 4 for d in fragments), host.domains
    assert any(d.vcpupin == {0: [2]} for d in fragments)
    vcpu_fragment = next(d for d in fragments if d.vcpus == 16)
    assert text.splitlines()[vcpu_fragment.lines["vcpus"] - 1].startswith("<vcpu ")
    result = analyze(SnapshotFacts(hosts=[host]))  # no rule may crash on a nameless fragment
    assert "kvm.vcpu_hotplug_enabled" in {f.rule for f in result.findings}


def test_virsh_domcapabilities_is_not_a_domain_fragment():
    # libvirt's own expected `virsh domcapabilities` output (the test driver has none)
    caps = (FIXTURES / "libvirt" / "domcapabilities_bhyve_basic.x86_64.xml").read_text()
    spec = detect(caps)
    assert spec is None or spec.kind != "libvirt_domain"


def test_interfaces_with_and_without_queues():
    text = (FIXTURES / "published" / "hostside" / "libvirt-net-vhostuser-multiq.xml").read_text(
        encoding="utf-8"
    )
    d = parse_domain(text)
    assert [(i.model, i.queues, i.kind) for i in d.interfaces] == [
        ("virtio", None, "vhostuser"),
        ("virtio", None, "vhostuser"),
        ("rtl8139", None, "server"),
        ("virtio", None, "vhostuser"),
        ("virtio", 4, "vhostuser"),
    ]
    assert d.lines["interfaces[4]"] == 48


def test_a_fragment_cut_inside_cputune_says_nothing_of_the_pins_after_the_cut():
    """hwloc#712 (round Q 2130): a domain XML fragment without ``<domain>``, cut
    by the page at ``<vcp`` after vcpupin 23 of 128 vCPUs. The rest of
    ``<cputune>`` (more vcpupin, emulatorpin) is unknown, not absent."""
    text = (
        FIXTURES / "published" / "roundq" / "hwloc-712-domain-xml-fragment-cut-in-cputune.txt"
    ).read_text()
    d = parse_domain(text)
    assert (d.fragment, d.cut, d.cut_in) == (True, True, "cputune")
    assert d.truncated_after == "vcpupin vcpu='23' cpuset='23'"
    assert {"vcpupin", "emulatorpin"} <= set(d.unseen)
    assert len(d.vcpupin) == 24


def test_a_whole_fragment_is_not_cut():
    d = parse_domain("<cputune>\n  <vcpupin vcpu='0' cpuset='0'/>\n  <emulatorpin cpuset='1'/>\n</cputune>\n")
    assert d.fragment and not d.cut and d.unseen == []
