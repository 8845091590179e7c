"""Property tests for every application/virtualisation/network parser: any text gives
typed facts or ``ParseError``, never another exception; hostile XML is refused, never
expanded."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collectors import facts as F
from collectors.parsers import REGISTRY, load_all

RESULT_TYPES = {
    "libvirt_domain": F.Domain,
    "virsh_version": F.VirshVersion,
    "virsh_list": F.VirshList,
    "virsh_capabilities": F.VirshCapabilities,
    "mysql_variables": F.DatabaseFacts,
    "mysql_version": F.DatabaseFacts,
    "mysql_error_log": F.DatabaseFacts,
    "oceanbase_parameters": F.OceanBaseFacts,
    "odp_proxyconfig": F.OceanBaseFacts,
    "sql_audit_plan_types": F.OceanBaseFacts,
    "tc_qdisc": F.TcQdiscs,
    "ping": F.PingResult,
    "stream": F.BenchmarkResults,
    "jtpcc": F.BenchmarkResults,
    "sql_timing": F.BenchmarkResults,
}
KINDS = sorted(RESULT_TYPES)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

load_all()


def run_parser(kind: str, text: str) -> None:
    spec = REGISTRY[kind]
    # detect() sees every pasted block of a transcript: it must never raise
    if spec.detect is not None:
        assert isinstance(spec.detect(text[:8192]), bool)
    try:
        result = spec.func(text)
    except F.ParseError as exc:
        assert isinstance(exc.message, str) and exc.message
        assert exc.line is None or isinstance(exc.line, int)
        return
    assert isinstance(result, RESULT_TYPES[kind])
    assert all(isinstance(k, str) and isinstance(v, int) and v >= 1 for k, v in result.lines.items())
    F.to_dict(result)  # JSON-ready whatever was read


def test_every_kind_is_registered():
    assert set(KINDS) <= set(REGISTRY)


# ---------------------------------------------------------------- strategies

TAGS = [
    "domain",
    "domstatus",
    "name",
    "vcpu",
    "vcpus",
    "memory",
    "currentMemory",
    "maxMemory",
    "cpu",
    "topology",
    "numa",
    "cell",
    "distances",
    "sibling",
    "cputune",
    "vcpupin",
    "emulatorpin",
    "iothreadpin",
    "iothreads",
    "iothreadids",
    "iothread",
    "numatune",
    "memnode",
    "memoryBacking",
    "hugepages",
    "page",
    "devices",
    "disk",
    "driver",
    "source",
    "target",
    "capabilities",
    "host",
    "cells",
    "cpus",
    "iommu",
]
ATTRS = [
    "id",
    "cpus",
    "cpuset",
    "vcpu",
    "iothread",
    "memory",
    "unit",
    "mode",
    "nodeset",
    "placement",
    "current",
    "cellid",
    "dev",
    "bus",
    "size",
    "sockets",
    "cores",
    "threads",
    "value",
    "support",
]
VALUES = st.one_of(
    st.sampled_from(
        ["0", "1", "0-3", "0-31,^2", "KiB", "G", "strict", "auto", "x", "-1", "99999999", "1-0", ""]
    ),
    st.text(max_size=8),
)


@st.composite
def xmlish(draw) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 25))):
        tag = draw(st.sampled_from(TAGS))
        attrs = " ".join(
            f"{draw(st.sampled_from(ATTRS))}='{draw(VALUES)}'" for _ in range(draw(st.integers(0, 3)))
        )
        form = draw(st.sampled_from(["open", "close", "empty", "text", "ellipsis", "noise"]))
        if form == "open":
            parts.append(f"<{tag} {attrs}>")
        elif form == "close":
            parts.append(f"</{tag}>")
        elif form == "empty":
            parts.append(f"<{tag} {attrs}/>")
        elif form == "text":
            parts.append(f"<{tag}>{draw(VALUES)}</{tag}>")
        elif form == "ellipsis":
            parts.append("  ...")
        else:
            parts.append(draw(st.text(max_size=12)))
    return draw(st.sampled_from(["\n", "", " "])).join(parts)


@st.composite
def tableish(draw) -> str:
    cols = draw(
        st.lists(
            st.sampled_from(
                [
                    "Variable_name",
                    "Value",
                    "name",
                    "value",
                    "plan_type",
                    "count(1)",
                    "svr_ip",
                    "need_reboot",
                    "zone",
                    "VERSION()",
                    "x",
                ]
            ),
            min_size=1,
            max_size=5,
        )
    )
    cell = st.one_of(
        st.sampled_from(["1", "2", "version", "10.4.14-MariaDB", "random", "", "|", "-"]), st.text(max_size=6)
    )
    border = "+" + "+".join("-" * draw(st.integers(0, 6)) for _ in cols) + "+"
    rows = [border, "| " + " | ".join(cols) + " |", border]
    for _ in range(draw(st.integers(0, 6))):
        rows.append("| " + " | ".join(draw(cell) for _ in range(draw(st.integers(0, len(cols) + 1)))) + " |")
    rows.append(border)
    if draw(st.booleans()):
        tail = ["3 rows in set (0.01 sec)", "*" * 27 + " 1. row " + "*" * 27, "name: cpu_count", "value: 16"]
        rows.append(draw(st.sampled_from(tail)))
    return "\n".join(rows)


@st.composite
def lineish(draw) -> str:
    """Lines shaped like the text the non-XML parsers read, with random fields."""
    num = st.one_of(st.integers(-5, 10**12).map(str), st.floats(allow_nan=True).map(str), st.text(max_size=5))
    templates = [
        "{a}-{b}-{c}T{d}:{e}:{f}.0Z 0 [{lvl}] InnoDB: Initializing buffer pool, "
        "total size = {a}G, instances = {b}",
        "{a}{b} {d}:{e}:{f} [{lvl}] Setting NUMA memory policy to MPOL_{lvl}",
        "{mon} {a} {d}:{e}:{f} mysqld-{b}[{c}]: InnoDB: Completed initialization of buffer pool",
        "Version: '{a}.{b}'  socket: x",
        "Server version: {a}.{b}-{lvl}",
        "qdisc netem {a}: dev {lvl} root refcnt {b} limit {c} delay {d}ms {e}us loss {f}%",
        "qdisc {lvl} {a}: parent {b}:{c}",
        "64 bytes from h: icmp_seq={a} ttl=64 time={b} ms",
        "{a} packets transmitted, {b} received, {c}% packet loss",
        "rtt min/avg/max/mdev = {a}/{b}/{c}/{d} ms",
        "Triad:   {a}   {b}   {c}   {d}",
        "Term-00, Running Average tpmTOTAL: {a} Current tpmTOTAL: {b}",
        "Measured tpmC (NewOrders) = {a}",
        "MariaDB [{lvl}]> create index {lvl} on t ({a});",
        "Query OK, {a} rows affected ({b} min {c} sec)",
        "--------------",
        "Using library: libvirt {a}",
        "Running hypervisor: {lvl} {a}",
        " {a}   {lvl}   {b}",
        " Id   Name   State",
        "{lvl}\t{a}",
        "cpu_quota_concurrency = {a}",
        '[{{"kind": "{lvl}", "dev": "{lvl}", "options": {{"delay": {{"delay": {a}}}}}}}]',
    ]
    lines = []
    for _ in range(draw(st.integers(0, 12))):
        template = draw(st.sampled_from(templates))
        fields = {k: draw(num) for k in "abcdef"}
        fields["lvl"] = draw(
            st.sampled_from(["Note", "Warning", "ERROR", "INTERLEAVE", "eth0", "System", ""])
        )
        fields["mon"] = draw(st.sampled_from(["Jan", "Jul", "Dec", "Foo"]))
        lines.append(template.format(**fields))
    return "\n".join(lines)


# ---------------------------------------------------------------- properties


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(text=st.text(max_size=400))
def test_any_text(kind, text):
    run_parser(kind, text)


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(text=xmlish())
def test_xmlish_text(kind, text):
    run_parser(kind, text)


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(text=tableish())
def test_tableish_text(kind, text):
    run_parser(kind, text)


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(text=lineish())
def test_lineish_text(kind, text):
    run_parser(kind, text)


BILLION_LAUGHS = (
    '<?xml version="1.0"?>\n<!DOCTYPE lolz [\n <!ENTITY lol "lol">\n'
    + "".join(
        f' <!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">\n' for i in range(1, 10)
    )
    + "]>\n"
)
EXTERNAL = '<?xml version="1.0"?>\n<!DOCTYPE d [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'


@pytest.mark.parametrize("kind", ["libvirt_domain", "virsh_capabilities"])
@pytest.mark.parametrize("prolog", [BILLION_LAUGHS, EXTERNAL], ids=["billion-laughs", "external-entity"])
@SETTINGS
@given(body=xmlish())
def test_entity_payloads_are_refused(kind, prolog, body):
    ref = "&lol9;" if "lol9" in prolog else "&xxe;"
    for root in ("domain type='kvm'", "capabilities"):
        tag = root.split()[0]
        text = f"{prolog}<{root}><name>{ref}</name><vcpu>1</vcpu>{body}<host/></{tag}>"
        with pytest.raises(F.ParseError):
            REGISTRY[kind].func(text)


@pytest.mark.parametrize("kind", ["libvirt_domain", "virsh_capabilities"])
@pytest.mark.parametrize("prolog", [BILLION_LAUGHS, EXTERNAL], ids=["billion-laughs", "external-entity"])
def test_entity_payload_after_noise_is_refused(kind, prolog):
    # a DOCTYPE buried after shell noise must not slip past by being cut off
    text = "[root@host ~]# virsh dumpxml vm\n" + prolog + "<domain type='kvm'><vcpu>1</vcpu></domain>"
    if kind == "virsh_capabilities":
        text = text.replace("domain type='kvm'", "capabilities").replace("/domain", "/capabilities")
    with pytest.raises(F.ParseError, match="unsafe"):
        REGISTRY[kind].func(text)


def _samples() -> list[str]:
    from tests.conftest import CORPUS, FIXTURES

    paths = sorted((FIXTURES / "libvirt").glob("*.txt"))
    paths += [
        CORPUS / "libvirt" / "libvirt_hugepages-memaccess.xml",
        CORPUS / "libvirt" / "insights-core_test_qemu_xml_XML_IDM_CLIENT.txt",
        CORPUS / "mysql" / "insights-core_test_mysqladmin_INPUT_NORMAL.txt",
        CORPUS / "mysql" / "insights-core_test_mysql_log_MYSQL_LOG.txt",
    ]
    texts = [p.read_text(encoding="utf-8")[:6000] for p in paths if p.exists()]
    texts.append(
        "+-----------+----------+\n| plan_type | count(1) |\n+-----------+----------+\n| 2 | 1286613 |\n"
        "+-----------+----------+\n4 rows in set (0.93 sec)\n"
        "qdisc netem 8004: dev bond0 root refcnt 17 limit 1000 delay 1.0ms\n"
        "64 bytes from h: icmp_seq=1 ttl=64 time=1.07 ms\n"
        "Jul 7 12:00:44 mysqld-3301[95109]: InnoDB: Setting NUMA memory policy to MPOL_INTERLEAVE\n"
    )
    return texts


SAMPLES = _samples()


@st.composite
def mutated(draw) -> str:
    """A real artifact with random spans cut out and random text spliced in."""
    text = draw(st.sampled_from(SAMPLES))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 200)))
        text = (
            text[:i] + draw(st.sampled_from(["", "<", ">", "'", "...", "\n", "|", "&amp;", "&x;"])) + text[j:]
        )
    return text


@pytest.mark.parametrize("kind", KINDS)
@SETTINGS
@given(text=mutated())
def test_mutated_real_artifacts(kind, text):
    run_parser(kind, text)
