"""Every libvirt domain XML of the shared corpus gets a valid patch or a reason.

The host is the ZStack seed hypervisor (2 nodes x 18 cores x 2 threads). Most
of libvirt's own test documents are ``type='qemu'`` (TCG), which correctly get
"not kvm"; each file is therefore also tried as ``type='kvm'`` so the patcher
meets every shape of XML in the corpus (NUMA cells, numad placement, iothread
ids, hugepage nodesets, hot-plug, namespaces, insights-core dumps).

"Valid" means: the patched XML parses, pins every vCPU, and real libvirt
(test driver, with and without RNG validation) accepts it whenever it accepts
the original. Some corpus documents are rejected as they are (fake MAC
addresses such as ``aa:ss:bb:ff:ee:mm``, an uuid with 33 digits, a watchdog
model unknown to this libvirt, a cputune naming a missing iothread): for those
the patch must not add an error of its own, i.e. libvirt reports the same
error for the patched document.
"""

from __future__ import annotations

import re

import pytest

from collectors.parsers.libvirt import parse_domain
from engine.remedies.libvirt import domain_remedy
from tests.conftest import CORPUS

FILES = sorted((CORPUS / "libvirt").iterdir())


def _first_error(result) -> str:
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    # "error: Failed to define domain from X" is followed by the actual reason
    return next((ln for ln in lines if "Failed to define" not in ln), "")


def test_corpus_is_there():
    assert len(FILES) == 55


@pytest.mark.parametrize("as_kvm", [False, True], ids=["as-is", "as-kvm"])
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_patch_or_reason(path, as_kvm, zstack_host, virsh_define):
    text = path.read_text(encoding="utf-8", errors="replace")
    if as_kvm:
        text = re.sub(r"<domain type=(['\"])qemu\1", "<domain type='kvm'", text, count=1)
    result = domain_remedy(domain_xml=text, host=zstack_host)
    if not result.ok:
        assert len(result.reason) > 30, result.reason
        if not as_kvm and "type='qemu'" in text:
            assert "not kvm" in result.reason
        return
    patched = parse_domain(result.patched)
    n = patched.vcpus
    assert n and patched.vcpu_current == n and sorted(patched.vcpupin) == list(range(n))
    assert patched.emulatorpin and patched.numatune_memory_mode == "strict" and patched.numa_cells
    assert patched.cpu_mode == "host-passthrough"
    assert result.diff.startswith("--- ") and result.rollback.startswith("virsh define ")
    for flags in ("validate", "plain"):
        original = virsh_define(result.original, f"original-{flags}.xml", validate=flags == "validate")
        after = virsh_define(result.patched, f"patched-{flags}.xml", validate=flags == "validate")
        if original.returncode == 0:
            assert after.returncode == 0, (flags, after.stderr)
        else:
            assert after.returncode == 0 or _first_error(after) == _first_error(original), (
                flags,
                original.stderr,
                after.stderr,
            )
