"""lscpu parser: corpus shapes, the seeds (including OCR damage) and this machine."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from collectors.cpulist import parse_cpulist
from collectors.facts import ParseError
from collectors.parsers.lscpu import parse_lscpu
from tests.collectors.parsers.lookup import detect, for_command, for_path
from tests.conftest import FIXTURES, service_unavailable


def _require(tool: str, package: str) -> None:
    """Skip on a developer box without the tool; fail in CI, which must install it."""
    if shutil.which(tool) is None:
        service_unavailable(f"{tool} not installed (apt-get install -y {package})")


def _seed(seeds_dir, prefix: str) -> str:
    return next(seeds_dir.glob(f"{prefix}_*.txt")).read_text(encoding="utf-8")


def test_classic_summary_seed_004(seeds_dir):
    lines = _seed(seeds_dir, "004").splitlines()
    start = lines.index("$lscpu") + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("Flags:")) + 1
    topo = parse_lscpu("\n".join(lines[start:end]))
    assert topo.cpus == 96
    assert topo.sockets == 2
    assert topo.cores_per_socket == 24
    assert topo.threads_per_core == 2
    assert topo.numa_nodes == 1
    assert topo.caches["L3"] == "33792K"
    assert topo.numa_node_cpus == {0: list(range(96))}
    assert topo.model_name == "Intel(R) Xeon(R) Platinum 8163 CPU @ 2.50GHz"
    assert topo.flags[0] == "fpu" and "avx512f" in topo.flags
    # "vertical" is what that lscpu printed on a physical server: not a hypervisor
    assert topo.hypervisor_vendor is None
    assert topo.extra["hypervisor_vendor_raw"] == "vertical"
    # evidence lines are relative to the block
    assert topo.lines["cpus"] == 4
    assert topo.lines["caches.L3"] == 25


def test_ocr_damaged_seed_002(seeds_dir):
    blocks = _seed(seeds_dir, "002").split("```")
    first = next(b for b in blocks if "Iscpu" in b)
    topo = parse_lscpu(first)
    assert topo.cpus == 32
    assert topo.hypervisor_vendor == "KVM"
    assert topo.sockets == 32
    assert topo.cores_per_socket == 1
    assert topo.threads_per_core == 1
    assert topo.numa_nodes == 1
    assert topo.virtualization_type == "full"
    assert topo.online_cpus == list(range(32))
    assert topo.numa_node_cpus == {0: list(range(32))}
    # the guest shows no L3 (the cause in seed 002)
    assert set(topo.caches) == {"L1d", "L1i", "L2"}
    assert not topo.has_l3


def test_ocr_damaged_third_block_keeps_what_it_can(seeds_dir):
    blocks = [b for b in _seed(seeds_dir, "002").split("```") if "Architecture:" in b]
    topo = parse_lscpu(blocks[-1])
    # "K VM" and "ful1" come out readable
    assert topo.hypervisor_vendor == "KVM"
    assert topo.virtualization_type == "full"
    assert topo.caches.get("L3") == "12288K"


def test_hierarchical_format_with_wrapped_flags(corpus):
    text = (corpus / "lscpu" / "insights-core_test_lscpu_LSCPU_3.txt").read_text()
    topo = parse_lscpu(text)
    assert topo.sockets == 2 and topo.cpus == 2
    assert topo.hypervisor_vendor == "KVM"
    assert topo.caches["L3"] == "32 MiB (2 instances)"
    # "co" + "nstant_tsc" was split by the wrap; the separating space of the next wrap is kept
    assert "constant_tsc" in topo.flags
    assert "tsc_deadline_timer" in topo.flags
    assert "popcnt" in topo.flags
    assert "arch_capabilities" in topo.flags


def test_parse_section_gives_l3_and_nodes(corpus):
    topo = parse_lscpu((corpus / "lscpu" / "util-linux_lscpu-arm-A510-A710-A715-X3.txt").read_text())
    assert topo.has_l3
    assert [t["model_name"] for t in topo.core_types] == [
        "Cortex-A510",
        "Cortex-A710",
        "Cortex-A715",
        "Cortex-X3",
    ]
    assert [t["cores_per_socket"] for t in topo.core_types] == [3, 2, 2, 1]
    assert topo.cores_per_socket is None  # differs between core types
    assert topo.sockets == 1


def test_stride_cpulist(corpus):
    topo = parse_lscpu((corpus / "lscpu" / "util-linux_lscpu-x86_64-64cpu.txt").read_text())
    assert topo.numa_node_cpus[0] == list(range(0, 63, 2))
    assert topo.numa_node_cpus[2] == list(range(1, 62, 4))
    assert parse_cpulist("1-61:4,100") == [*range(1, 62, 4), 100]
    with pytest.raises(ValueError):
        parse_cpulist("5-1")


def test_json_flat_and_nested():
    flat = {
        "lscpu": [
            {"field": "Architecture:", "data": "x86_64"},
            {"field": "CPU(s):", "data": "8"},
            {"field": "Thread(s) per core:", "data": "2"},
            {"field": "Socket(s):", "data": "1"},
            {"field": "L3 cache:", "data": "8 MiB (1 instance)"},
        ]
    }
    topo = parse_lscpu(json.dumps(flat, indent=2))
    assert (topo.cpus, topo.sockets, topo.threads_per_core, topo.caches["L3"]) == (
        8,
        1,
        2,
        "8 MiB (1 instance)",
    )
    assert topo.lines["cpus"] == 8  # the line of its "field" entry
    nested = {
        "lscpu": [
            {"field": "CPU(s):", "data": "4"},
            {
                "field": "Vendor ID:",
                "data": "GenuineIntel",
                "children": [
                    {"field": "Socket(s):", "data": "2"},
                    {"field": "Core(s) per socket:", "data": "2"},
                ],
            },
            {"field": "Caches (sum of all):", "data": None, "children": [{"field": "L3:", "data": "16 MiB"}]},
        ]
    }
    topo = parse_lscpu(json.dumps(nested))
    assert (topo.cpus, topo.sockets, topo.cores_per_socket, topo.has_l3) == (4, 2, 2, True)


def test_errors_are_parse_errors():
    for bad in ("", "   \n", "hello world\nnothing here", '{"lscpu": 3}', "{not json"):
        with pytest.raises(ParseError):
            parse_lscpu(bad)


def test_registry_routes_lscpu(corpus):
    assert for_command("lscpu").kind == "lscpu"
    assert for_command("lscpu -J").kind == "lscpu"
    assert for_path("sosreport-x/sos_commands/processor/lscpu").kind == "lscpu"
    assert for_path("out/lscpu.json").kind == "lscpu"
    text = (corpus / "lscpu" / "util-linux_lscpu-x86_64-epyc_7451.txt").read_text()
    assert detect(text).kind == "lscpu"


def test_this_machine_text_and_json_agree():
    _require("lscpu", "util-linux")
    text = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    data = subprocess.run(["lscpu", "-J"], capture_output=True, text=True, check=True).stdout
    a, b = parse_lscpu(text), parse_lscpu(data)
    import os

    assert a.cpus == b.cpus == os.cpu_count()
    assert a.sockets == b.sockets and a.sockets is not None
    assert a.threads_per_core == b.threads_per_core
    assert a.caches == b.caches
    assert a.hypervisor_vendor == b.hypervisor_vendor
    assert a.flags == b.flags


def test_extended_table_with_offline_cpu():
    text = (
        "CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE\n"
        "  0    0      0    0 0:0:0:0          yes\n"
        "  1    1      1    1 1:1:1:1          yes\n"
        "  2    0      0    0 0:0:0:0          yes\n"
        "  3    1      1    1 1:1:1:1          yes\n"
        "  4    0      0    2 2:2:2:0           no\n"
    )
    topo = parse_lscpu(text)
    assert topo.cpus == 5
    assert topo.online_cpus == [0, 1, 2, 3]
    assert topo.numa_node_cpus == {0: [0, 2], 1: [1, 3]}
    assert (topo.sockets, topo.threads_per_core, topo.cores_per_socket) == (2, 2, 1)
    assert topo.has_l3


def test_this_machine_extended_and_parse_forms():
    _require("lscpu", "util-linux")
    summary = parse_lscpu(subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout)
    for args in (["lscpu", "-e"], ["lscpu", "-p"]):
        other = parse_lscpu(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
        assert other.cpus == summary.cpus, args
        assert set(other.caches) == set(summary.caches), args


def test_cpulist_work_is_bounded():
    import time

    start = time.perf_counter()
    with pytest.raises(ValueError):
        parse_cpulist(",".join(["0-65535"] * 100_000))
    assert time.perf_counter() - start < 2.0
    topo = parse_lscpu("CPU(s): 4\nSocket(s): 1\nNUMA node0 CPU(s): " + ",".join(["0-65535"] * 1000) + "\n")
    assert topo.cpus == 4 and 0 not in topo.numa_node_cpus  # refused, not expanded


@pytest.mark.parametrize(
    ("language", "marker"),
    [
        # Chinese tickets paste lscpu run under zh_CN
        ("zh_CN", "架构"),
        # the ja catalogue of util-linux 2.38 ("CPU:", "ソケット数:", "ハイパーバイザのベンダー:")
        ("ja", "アーキテクチャ"),
    ],
)
def test_this_machine_in_another_locale(language, marker):
    # needs the util-linux-locales package
    import os

    _require("lscpu", "util-linux")
    env = {**os.environ, "LANGUAGE": language, "LC_ALL": "C.UTF-8"}
    text = subprocess.run(["lscpu"], capture_output=True, text=True, check=True, env=env).stdout
    if marker not in text:
        service_unavailable(f"no {language} lscpu catalogue (apt-get install -y util-linux-locales)")
    spec = detect(text)
    assert spec is not None and spec.kind == "lscpu"
    english = parse_lscpu(subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout)
    localised = parse_lscpu(text)
    for name in ("architecture", "cpus", "sockets", "threads_per_core", "cores_per_socket", "numa_nodes"):
        assert getattr(localised, name) == getattr(english, name), name
    assert localised.numa_node_cpus == english.numa_node_cpus
    assert localised.caches == english.caches
    assert localised.hypervisor_vendor == english.hypervisor_vendor
    assert localised.virtualization_type == english.virtualization_type
    assert localised.flags == english.flags


# susanow/susanow misc/development_environment/lscpu_xeon_e5_2603v4.md, commit
# f9b15bdd1d2d46304b30d9e6c92f62d3e21f4a50 (evaluation snapshot 101): an older ja
# catalogue, whose wide labels leave no space before the value
JA_SUSANOW = """Architecture:          x86_64
CPU 操作モード:   32-bit, 64-bit
Byte Order:            Little Endian
CPU(s):                12
On-line CPU(s) list:   0-11
コアあたりのスレッド数:1
ソケットあたりのコア数:6
Socket(s):             2
NUMA ノード数:     2
ベンダー ID:       GenuineIntel
CPU ファミリー:   6
モデル:             79
ステッピング:    1
CPU MHz:               1321.949
BogoMIPS:              3401.19
仮想化:             VT-x
L1d キャッシュ:   32K
L1i キャッシュ:   32K
L2 キャッシュ:    256K
L3 キャッシュ:    15360K
NUMA node0 CPU(s):     0,2,4,6,8,10
NUMA node1 CPU(s):     1,3,5,7,9,11
"""

# a Japanese notes page on GitHub ("マシンの情報を知る", an AWS Xen guest; code-search
# index file 27704169549, its repository not named there): the CentOS 7 ja catalogue
JA_XEN_GUEST = """アーキテクチャ: x86_64
CPU op-mode(s):        32-bit, 64-bit
Byte Order:            Little Endian
CPU(s):                2
On-line CPU(s) list:   0,1
コアあたりのスレッド数:1
ソケットあたりのコア数:2
Socket(s):             1
NUMAノード:         1
ベンダーID:        GenuineIntel
CPUファミリー:    6
モデル:             62
Model name:            Intel(R) Xeon(R) CPU E5-2670 v2 @ 2.50GHz
ステッピング:    4
CPU MHz:               2500.084
BogoMIPS:              5000.16
ハイパーバイザーベンダー:Xen
仮想化タイプ:    完全仮想化
L1d キャッシュ:   32K
L1i キャッシュ:   32K
L2 キャッシュ:    256K
L3 キャッシュ:    25600K
NUMAノード 0 CPU:   0,1
"""


def test_published_japanese_lscpu_older_catalogue():
    assert detect(JA_SUSANOW).kind == "lscpu"
    topo = parse_lscpu(JA_SUSANOW)
    assert (topo.sockets, topo.cores_per_socket, topo.threads_per_core, topo.numa_nodes) == (2, 6, 1, 2)
    assert topo.vendor == "GenuineIntel" and topo.caches["L3"] == "15360K"
    assert topo.lines["cores_per_socket"] == 7 and topo.lines["threads_per_core"] == 6


def test_published_japanese_lscpu_of_a_xen_guest():
    assert detect(JA_XEN_GUEST).kind == "lscpu"
    topo = parse_lscpu(JA_XEN_GUEST)
    assert (topo.cpus, topo.sockets, topo.cores_per_socket, topo.threads_per_core) == (2, 1, 2, 1)
    assert topo.numa_nodes == 1 and topo.numa_node_cpus == {0: [0, 1]}
    assert (topo.hypervisor_vendor, topo.virtualization_type) == ("Xen", "full")
    assert topo.caches == {"L1d": "32K", "L1i": "32K", "L2": "256K", "L3": "25600K"}


def test_published_russian_lscpu():
    """elementary/settings-system issue 110 (tests/fixtures/published/roundsdef/): util-linux's
    ru catalogue (``Потоков на ядро:``, ``Сокетов:``, its ``ID прроизводителя:`` typo)."""
    text = (FIXTURES / "published" / "roundsdef" / "elementary-110-lscpu-ru-locale.txt").read_text()
    assert detect(text).kind == "lscpu"
    topo = parse_lscpu(text)
    assert (topo.architecture, topo.cpus, topo.sockets, topo.cores_per_socket, topo.threads_per_core) == (
        "x86_64",
        4,
        1,
        2,
        2,
    )
    assert (topo.vendor, topo.model_name) == (
        "AuthenticAMD",
        "AMD A10-9620P RADEON R5, 10 COMPUTE CORES 4C+6G",
    )
    assert topo.numa_nodes == 1 and topo.numa_node_cpus == {0: [0, 1, 2, 3]} and "sse4_2" in topo.flags


def test_rhel6_socket_key():
    text = "Architecture:          x86_64\nCPU(s):                24\nCPU socket(s):         2\n"
    assert parse_lscpu(text).sockets == 2


# ----------------------------------------------- parsers-mem: lscpu -e / -p CPU maps


def _parse_section_only(path) -> str:
    """The first ``lscpu --parse`` section of a util-linux expected output, alone."""
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("# CPU,"))
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("#")), len(lines))
    return "\n".join(lines[start:end]) + "\n"


def test_parse_section_alone_epyc_7451(corpus):
    text = _parse_section_only(corpus / "lscpu" / "util-linux_lscpu-x86_64-epyc_7451.txt")
    assert detect(text).kind == "lscpu"
    topo = parse_lscpu(text)
    # EPYC 7451: 2 sockets x 24 cores x 2 threads, 8 NUMA nodes (as its summary says)
    assert topo.cpus == 96 and topo.sockets == 2
    assert topo.cores_per_socket == 24 and topo.threads_per_core == 2
    assert topo.numa_nodes == 8
    assert topo.numa_node_cpus[0] == [0, 1, 2, 3, 4, 5, 48, 49, 50, 51, 52, 53]
    assert topo.numa_node_cpus[7][-1] == 95


def test_extended_and_parse_this_machine():
    from tests.collectors.parsers.machine import run

    summary = parse_lscpu(run("lscpu", package="util-linux"))
    for command in ("lscpu -e", "lscpu --extended", "lscpu -p", "lscpu --parse=CPU,NODE,SOCKET,CORE"):
        out = run(command, package="util-linux")
        assert detect(out).kind == "lscpu", command
        topo = parse_lscpu(out)
        assert topo.cpus == summary.cpus, command
        assert topo.sockets == summary.sockets, command
        assert topo.threads_per_core == summary.threads_per_core, command
        assert topo.cores_per_socket == summary.cores_per_socket, command
        assert topo.numa_node_cpus == summary.numa_node_cpus, command


def test_map_alone_fills_a_summary_without_node_lists(corpus):
    from tests.collectors.parsers.machine import paste, run

    # a summary whose node CPU lists were cut from the paste, then lscpu -e
    summary = [
        line
        for line in run("lscpu", package="util-linux").splitlines()
        if not line.strip().startswith("NUMA node")
    ]
    host = paste(("lscpu", "\n".join(summary)), ("lscpu -e", run("lscpu -e")), ("lscpu -p", run("lscpu -p")))
    assert not host.errors, host.errors
    assert host.cpu.model_name  # the summary is the base
    assert host.cpu.numa_node_cpus == parse_lscpu(run("lscpu")).numa_node_cpus
    assert host.cpu.numa_nodes == len(host.cpu.numa_node_cpus)


def test_map_of_another_machine_is_not_merged(corpus):
    from tests.collectors.parsers.machine import paste, run

    epyc = _parse_section_only(corpus / "lscpu" / "util-linux_lscpu-x86_64-epyc_7451.txt")
    host = paste(("lscpu", run("lscpu", package="util-linux")), ("lscpu -p", epyc))
    assert host.cpu.cpus == parse_lscpu(run("lscpu")).cpus
    assert len(host.cpu.numa_node_cpus) != 8


def test_key_cut_before_its_colon_is_reported_not_glued_to_the_value_above():
    # python-kvm issue 2 (tests/evaluation/84-*): the stored copy ends inside "CPU MHz:"
    text = (
        "Model name:            Intel(R) Xeon(R) CPU           L5520  @ 2.27GHz\n"
        "Stepping:              5\n"
        "CPU M\n"
    )
    topo = parse_lscpu("Architecture:          x86_64\nSocket(s):             2\n" + text)
    assert topo.model_name == "Intel(R) Xeon(R) CPU           L5520  @ 2.27GHz"
    assert "CPU M" not in str(topo.extra)
    assert [(e.line, e.message) for e in topo.errors] == [(5, "lscpu: line without ':' not read: 'CPU M'")]
