"""virsh version / list / capabilities: seed 000 and libvirt's test driver run live."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from collectors.facts import ParseError
from collectors.parsers import detect, for_command
from collectors.parsers.virsh import parse_virsh_capabilities, parse_virsh_list, parse_virsh_version
from tests.conftest import FIXTURES, IN_CI, SEEDS, service_unavailable


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
