"""virsh version / list / capabilities: seed 000 and libvirt's test driver run live."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from collectors.facts import ParseError
from collectors.parsers import detect, for_command
from collectors.parsers.virsh import (
    parse_virsh_capabilities,
    parse_virsh_domstats,
    parse_virsh_list,
    parse_virsh_version,
)
from tests.conftest import FIXTURES, IN_CI, ROOT, SEEDS, service_unavailable


def virsh_test_driver(*args: str) -> str:
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


def seed_block(path, first: str, last: str) -> str:
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, ln in enumerate(lines) if first in ln)
    end = next(i for i in range(start, len(lines)) if last in lines[i])
    return "\n".join(lines[start : end + 1])


def test_seed_000_virsh_version():
    seed = next(SEEDS.glob("000_*.txt"), None)
    if seed is None:
        service_unavailable("seed 000 missing")
    block = seed_block(seed, "Compiled against library", "Running hypervisor")
    v = parse_virsh_version(block)
    assert v.libvirt_version == "4.9.0"
    assert v.api_version == "4.9.0"
    assert (v.hypervisor, v.hypervisor_version) == ("QEMU", "2.12.0")
    assert "Running hypervisor" in block.splitlines()[v.lines["hypervisor_version"] - 1]
    assert detect(block).kind == "virsh_version"


def test_live_virsh_version():
    out = virsh_test_driver("version")
    v = parse_virsh_version(out)
    installed = subprocess.run(["virsh", "--version"], capture_output=True, text=True, check=True).stdout
    installed = installed.strip()
    assert v.libvirt_version == installed
    assert v.hypervisor == "TEST" and v.hypervisor_version


def test_live_virsh_list():
    out = virsh_test_driver("list", "--all")
    listing = parse_virsh_list(out)
    assert [(d.id, d.name, d.state) for d in listing.domains] == [(1, "test", "running")]
    assert listing.running()[0].name == "test"
    assert detect(out).kind == "virsh_list"
    assert detect("\n" + out).kind == "virsh_list"
    assert for_command("virsh list --all").kind == "virsh_list"


def test_list_with_shut_off_domains():
    text = " Id   Name     State\n-------------------------\n 3    db01     running\n"
    text += " -    old-vm   shut off\n"
    listing = parse_virsh_list(text)
    rows = [(d.id, d.name, d.state) for d in listing.domains]
    assert rows == [(3, "db01", "running"), (None, "old-vm", "shut off")]
    assert listing.lines == {"domains[db01]": 3, "domains[old-vm]": 4}


def test_live_capabilities_cells_and_iommu():
    out = virsh_test_driver("capabilities")
    caps = parse_virsh_capabilities(out)
    assert caps.iommu is False  # the test driver prints <iommu support='no'/>
    assert sorted(caps.cells) == [0, 1]
    assert caps.cells[0]["cpus"] == list(range(8))
    assert caps.cells[1]["cpus"] == list(range(8, 16))
    assert caps.cells[0]["memory_kb"] == 2097152 and caps.cells[1]["memory_kb"] == 4194304
    # derived from the cpus' socket_id/core_id because the host <cpu> has no <topology>
    assert caps.topology == {"sockets": 2, "cores": 8, "threads": 1}
    assert caps.cpu_arch == "i686"
    assert detect(out).kind == "virsh_capabilities"


def test_saved_copies_parse_like_live_output():
    for name, parser, args in (
        ("virsh_test_capabilities.txt", parse_virsh_capabilities, ("capabilities",)),
        ("virsh_test_list_all.txt", parse_virsh_list, ("list", "--all")),
    ):
        saved = parser((FIXTURES / "libvirt" / name).read_text())
        live = parser(virsh_test_driver(*args))
        saved.lines = live.lines = {}
        assert saved == live


def test_capabilities_distances_and_given_topology():
    text = (
        "<capabilities><host><cpu><arch>x86_64</arch><model>Skylake</model>"
        "<topology sockets='2' dies='1' cores='24' threads='2'/></cpu><iommu support='yes'/>"
        "<topology><cells num='2'><cell id='0'><memory unit='KiB'>100</memory><distances>"
        "<sibling id='0' value='10'/><sibling id='1' value='21'/></distances>"
        "<cpus num='1'><cpu id='0' socket_id='0' core_id='0' siblings='0'/></cpus></cell>"
        "<cell id='1'><memory unit='MiB'>1</memory><cpus num='1'><cpu id='1'/></cpus></cell>"
        "</cells></topology></host></capabilities>"
    )
    caps = parse_virsh_capabilities(text)
    assert caps.topology == {"sockets": 2, "dies": 1, "cores": 24, "threads": 2}
    assert caps.iommu is True
    assert caps.cells[0]["distances"] == {0: 10, 1: 21}
    assert caps.cells[1]["memory_kb"] == 1024


# cockpit-machines issue 49 (comment by HLFH) and glances issue 1531 (comment by
# nicolargo): virsh domstats after zsh / starship prompts (tests/evaluation/85-*, 86-*)
DOMSTATS_COCKPIT = (ROOT / "tests/evaluation/85-cockpit-virsh-domstats-zsh-cut/comment.txt").read_text()
DOMSTATS_GLANCES = (ROOT / "tests/evaluation/86-glances-virsh-domstats-win11-cut/comment.txt").read_text()


def test_domstats_domains_and_state():
    body = DOMSTATS_COCKPIT.split("\n", 2)[2]  # after the fence and the prompt
    assert detect(body).kind == "virsh_domstats"
    assert for_command("virsh domstats").kind == "virsh_domstats"
    stats = parse_virsh_domstats(body)
    assert [(d.name, d.state) for d in stats.domains] == [("windows-server-2022", "running")]
    assert stats.lines["domains[windows-server-2022]"] == 1
    assert not stats.errors


def test_domstats_line_cut_before_its_value_is_reported():
    stats = parse_virsh_domstats(DOMSTATS_GLANCES.split("\n", 2)[2])
    assert stats.running()[0].name == "win11"
    assert [(e.line, e.message) for e in stats.errors] == [
        (45, "stats line without '=' not read: 'vcpu.0.io_exits.sum'")
    ]


def test_domstats_several_domains_live():
    out = virsh_test_driver("domstats")
    stats = parse_virsh_domstats(out)
    assert [d.name for d in stats.running()] == ["test"]


# virt-manager issue 86, comment by crab2313 (tests/evaluation/91-*/SOURCE.md):
# virsh capabilities of an 8-node arm64 host quoted from inside cell 3 and cut
# inside cell 4's third <pages> element.
CAPS_FRAGMENT = (ROOT / "tests/evaluation/91-virt-manager-capabilities-8node-cut/comment.txt").read_text()


def test_capabilities_fragment_is_recognised_and_not_taken_for_a_domain():
    assert detect(CAPS_FRAGMENT).kind == "virsh_capabilities"


def test_capabilities_fragment_cells_read_and_cut_reported():
    caps = parse_virsh_capabilities(CAPS_FRAGMENT)
    # cell 3's opening tag is not in the paste: its id is the sibling at distance 10
    assert sorted(caps.cells) == [3, 4]
    assert caps.cells[3]["memory_kb"] == 33519936
    assert caps.cells[3]["cpus"] == list(range(24, 32))
    assert caps.cells[3]["distances"] == {0: 30, 1: 20, 2: 20, 3: 10, 4: 40, 5: 30, 6: 30, 7: 20}
    assert caps.cells[4] == {"cpus": [], "memory_kb": 33519872, "distances": {}}
    assert caps.lines["cells[3]"] == 2 and caps.lines["cells[4]"] == 27
    assert [e.line for e in caps.errors] == [2]
    assert "part of the output" in caps.errors[0].message


def test_capabilities_fragment_cell_without_id_or_distances_is_left_out():
    caps = parse_virsh_capabilities(
        "<memory unit='KiB'>1024</memory><cpus num='1'><cpu id='0' socket_id='0' core_id='0'/></cpus>"
        "</cell><cell id='1'><memory unit='KiB'>2048</memory>"
    )
    assert sorted(caps.cells) == [1]
    assert "without its id" in caps.errors[0].message


@pytest.mark.parametrize(
    ("parser", "text"),
    [
        (parse_virsh_version, "error: failed to connect to the hypervisor"),
        (parse_virsh_list, "error: failed to connect to the hypervisor"),
        (parse_virsh_list, " Id   Name   State\n----\n this is not a row at all\n"),
        (parse_virsh_capabilities, "<capabilities><guest/></capabilities>"),
        (parse_virsh_capabilities, "<!DOCTYPE x [<!ENTITY a 'b'>]><capabilities/>"),
        (parse_virsh_capabilities, "no xml here"),
    ],
)
def test_unusable_text_raises_parse_error(parser, text):
    with pytest.raises(ParseError):
        parser(text)


# --------------------------------------------- live placement, nodeinfo, freecell (issue 11)

# One virsh session (the test driver keeps state only within one connection): pin,
# then print. Real output of libvirt's test driver.
PIN_SESSION = (
    "vcpupin test 0 2; vcpupin test 1 3,5; emulatorpin test 4-5; numatune test --mode interleave --nodeset 1"
)
SHOW = ("vcpupin test", "vcpuinfo test", "vcpuinfo test --pretty", "emulatorpin test", "numatune test")


@pytest.fixture(scope="module")
def pinned() -> dict[str, str]:
    """Output of each SHOW command on the test domain after PIN_SESSION."""
    out = virsh_test_driver(PIN_SESSION + "; " + "; ".join(f"echo @@; {c}" for c in SHOW))
    parts = out.split("@@\n")[1:]
    assert len(parts) == len(SHOW)
    return dict(zip(SHOW, parts, strict=True))


def test_live_vcpupin_vcpuinfo_emulatorpin_numatune(pinned):
    from collectors.parsers.virsh import (
        parse_virsh_emulatorpin,
        parse_virsh_numatune,
        parse_virsh_vcpuinfo,
        parse_virsh_vcpupin,
    )

    assert parse_virsh_vcpupin(pinned["vcpupin test"]).affinity == {0: [2], 1: [3, 5]}
    info = parse_virsh_vcpuinfo(pinned["vcpuinfo test"])
    assert info.affinity == {0: [2], 1: [3, 5]} and info.host_cpus == 8
    assert [(v.vcpu, v.state) for v in info.vcpus] == [(0, "running"), (1, "running")]
    assert info.vcpus[0].cpu == 2 and info.vcpus[0].cpu_time_s > 0
    pretty = parse_virsh_vcpuinfo(pinned["vcpuinfo test --pretty"])
    assert (pretty.affinity, pretty.host_cpus) == (info.affinity, 8)
    assert parse_virsh_emulatorpin(pinned["emulatorpin test"]).emulator_affinity == [4, 5]
    tune = parse_virsh_numatune(pinned["numatune test"])
    assert (tune.numa_mode, tune.numa_nodeset) == ("interleave", [1])
    for command, text in pinned.items():
        assert for_command(f"virsh {command}").kind == detect(text).kind, command


def test_live_defaults_are_not_pins():
    """An unpinned domain: every vCPU may run on every host CPU."""
    from collectors.archive import load_host_bytes

    text = "".join(
        f"[root@kvm01 ~]# virsh {c}\n{virsh_test_driver(*c.split())}"
        for c in ("vcpuinfo test", "vcpupin test", "emulatorpin test", "numatune test")
    )
    host = load_host_bytes(text.encode(), name="paste.txt")
    assert not host.errors
    assert [t.command for t in host.domain_tuning] == ["vcpuinfo", "vcpupin", "emulatorpin", "numatune"]
    assert all(t.domain == "test" for t in host.domain_tuning)
    (dom,) = host.domains
    assert (dom.name, dom.fragment, dom.vcpu_current) == ("test", True, 2)
    assert dom.vcpupin == {} and dom.emulatorpin is None and dom.numatune_memory_mode is None


def test_live_pins_reach_the_domain_of_the_same_name(pinned):
    from collectors.archive import load_host_bytes

    xml = virsh_test_driver("dumpxml", "test")
    text = f"[root@kvm01 ~]# virsh dumpxml test\n{xml}"
    for command in ("vcpupin test", "vcpuinfo test", "emulatorpin test", "numatune test"):
        text += f"[root@kvm01 ~]# sudo virsh {command}\n{pinned[command]}"
    host = load_host_bytes(text.encode(), name="paste.txt")
    (dom,) = host.domains
    assert (dom.name, dom.fragment, dom.vcpus) == ("test", False, 2)
    assert dom.vcpupin == {0: [2], 1: [3, 5]}
    assert dom.emulatorpin == [4, 5]
    assert (dom.numatune_memory_mode, dom.numatune_memory_nodeset) == ("interleave", [1])


def test_unprompted_pins_become_a_nameless_fragment(pinned):
    from collectors.archive import load_host_bytes

    host = load_host_bytes(pinned["vcpuinfo test"].encode(), name="vcpuinfo.txt")
    (dom,) = host.domains
    assert (dom.name, dom.fragment, dom.vcpupin) == (None, True, {0: [2], 1: [3, 5]})
    assert pinned["vcpuinfo test"].splitlines()[dom.lines["vcpupin[1]"] - 1].startswith("CPU Affinity:")


def test_live_nodeinfo_is_the_host_cpu_topology():
    from collectors.archive import load_host_bytes
    from collectors.parsers.virsh import parse_virsh_nodeinfo

    out = virsh_test_driver("nodeinfo")
    info = parse_virsh_nodeinfo(out)
    assert (info.cpu_model, info.cpus, info.mhz, info.numa_cells, info.memory_kb) == (
        "i686",
        16,
        1400,
        2,
        3145728,
    )
    # "CPU socket(s)" is per NUMA cell: 2 cells x 2 sockets x 2 cores x 2 threads = 16
    assert (info.sockets_per_cell, info.sockets, info.cores_per_socket, info.threads_per_core) == (2, 4, 2, 2)
    assert detect(out).kind == "virsh_nodeinfo"
    host = load_host_bytes(f"[root@kvm01 ~]# virsh nodeinfo\n{out}".encode(), name="paste.txt")
    assert (host.cpu.cpus, host.cpu.sockets, host.cpu.numa_nodes, host.role) == (16, 4, 2, "physical")
    assert out.splitlines()[host.cpu.lines["sockets"] - 2].startswith("CPU socket(s)")


def test_live_freecell_is_per_node_free_memory():
    from collectors.archive import load_host_bytes
    from collectors.parsers.virsh import parse_virsh_freecell

    out = virsh_test_driver("freecell", "--all")
    cells = parse_virsh_freecell(out)
    assert (cells.free_kb, cells.total_kb) == ({0: 2048, 1: 4096}, 6144)
    assert parse_virsh_freecell(virsh_test_driver("freecell")).total_kb == 3072
    assert parse_virsh_freecell(virsh_test_driver("freecell", "0")).free_kb == {0: 2048}
    assert detect(out).kind == "virsh_freecell"
    host = load_host_bytes(f"[root@kvm01 ~]# virsh freecell --all\n{out}".encode(), name="paste.txt")
    assert {n: node.free_mb for n, node in host.numa.nodes.items()} == {0: 2, 1: 4}
    assert host.numa.sources["VirshFreecell"].artifact == "transcript:virsh freecell --all"


@pytest.mark.parametrize(
    ("command", "domain"),
    [
        ("virsh vcpuinfo db01", "db01"),
        ("sudo virsh -c qemu:///system vcpupin --live db01", "db01"),
        ("virsh vcpupin --domain db01 --vcpu 3", "db01"),
        ("virsh numatune db01 --config", "db01"),
        ("virsh emulatorpin instance-00000009 | cat", "instance-00000009"),
        ("virsh nodeinfo", None),
    ],
)
def test_domain_from_command(command, domain):
    from collectors.parsers.virsh import domain_from_command

    assert domain_from_command(command) == domain


def test_old_layouts_and_partial_rows():
    from collectors.parsers.virsh import parse_virsh_vcpupin

    # the layout virsh printed before the table rework (libvirt < 6.x): "VCPU: CPU Affinity"
    old = "VCPU: CPU Affinity\n----------------------------------\n   0: 2\n   1: 3,5\n   2: junk\n"
    t = parse_virsh_vcpupin(old)
    assert t.affinity == {0: [2], 1: [3, 5]}
    (error,) = t.errors
    assert error.line == 5 and "junk" in error.message


@pytest.mark.parametrize(
    "make",
    [
        lambda n: " VCPU   CPU Affinity\n----\n 0" + " " * n + "x\n",
        lambda n: "VCPU: 0\nCPU" + " " * n + "x\n",
        lambda n: "VCPU: 0\nCPU Affinity: " + "1 " * n + "(out of x)\n",
        lambda n: "CPU model: x\nCPU(s): 1\n" + "Memory size" + " " * n + "\n",
        lambda n: "    0:" + " " * n + "KiB\nTotal: 1 KiB\n",
        lambda n: "emulator: CPU Affinity\n---\n       *: " + ",".join(["0-65535"] * (n // 8)) + "\n",
    ],
    ids=[
        "vcpupin-spaces",
        "field-spaces",
        "pretty-list",
        "nodeinfo-spaces",
        "freecell-spaces",
        "overlapping-ranges",
    ],
)
def test_hostile_lines_cost_linear_time(make):
    from collectors.parsers import virsh
    from tests.collectors.parsers.scaling import assert_linear

    for func in (
        virsh.parse_virsh_vcpupin,
        virsh.parse_virsh_vcpuinfo,
        virsh.parse_virsh_emulatorpin,
        virsh.parse_virsh_nodeinfo,
        virsh.parse_virsh_freecell,
        virsh.parse_virsh_numatune,
    ):
        assert_linear(func, make)


@pytest.mark.parametrize("command", ["vcpupin test", "vcpuinfo test", "emulatorpin test", "numatune test"])
def test_live_placement_outputs_are_read_without_a_prompt(pinned, command):
    from collectors.archive import load_host_bytes

    host = load_host_bytes(pinned[command].encode(), name="out.txt")
    (tuning,) = host.domain_tuning
    assert tuning.command == command.split()[0] and tuning.domain is None
    assert not host.errors


@pytest.mark.parametrize("args", [("nodeinfo",), ("freecell", "--all")])
def test_live_host_outputs_are_read_without_a_prompt(args):
    from collectors.archive import load_host_bytes

    host = load_host_bytes(virsh_test_driver(*args).encode(), name="out.txt")
    assert (host.nodeinfo if args[0] == "nodeinfo" else host.freecell) is not None
    assert not host.errors


def test_rules_run_over_live_placement_fragments(pinned):
    """Fragment Domains made from live output (named and nameless) do not break
    any rule."""
    from collectors.archive import load_host_bytes
    from collectors.facts import SnapshotFacts
    from engine.run import analyze

    text = "".join(f"[root@kvm01 ~]# virsh {c}\n{pinned[c]}" for c in ("vcpuinfo test", "numatune test"))
    named = load_host_bytes(text.encode(), name="paste.txt")
    nameless = load_host_bytes(pinned["vcpupin test"].encode(), name="vcpupin.txt")
    result = analyze(SnapshotFacts(hosts=[named, nameless]))
    assert result.checked  # the engine ran every rule it could
