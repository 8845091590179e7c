"""collectors.derived.libvirt.CpuSharing answers what the pairwise check of
kvm.host_contention answered (every other guest against every guest), for
random hosts of pinned, partly pinned, auto-placed and unpinned guests, with
and without a virsh list. Its cost against the number of guests is measured
by bench/domains.py, not here."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.derived.libvirt import (
    CpuSharing,
    domain_is_pinned,
    domain_label,
    domain_pinned_cpus,
)
from collectors.facts import Domain


def pairwise(d: Domain, domains: list[Domain], running: list[str], listed: bool) -> list[str]:
    """The check as kvm.host_contention made it before: each guest against all others."""
    mine = domain_pinned_cpus(d) if domain_is_pinned(d) else None

    def apart(other: Domain) -> bool:
        return bool(mine) and domain_is_pinned(other) and not (domain_pinned_cpus(other) & (mine or set()))

    others = []
    for name in running:
        if name in (d.name, d.uuid):
            continue
        xml = next((o for o in domains if name in (o.name, o.uuid)), None)
        if xml is not None and apart(xml):
            continue
        others.append(name)
    for o in domains:
        if o is d or (o.name in running) or (o.uuid in running) or apart(o):
            continue
        if not listed:
            others.append(domain_label(o))
    return others


@st.composite
def hosts(draw):
    n = draw(st.integers(min_value=1, max_value=12))
    domains = []
    for i in range(n):
        vcpus = draw(st.integers(min_value=1, max_value=4))
        kind = draw(st.sampled_from(["pinned", "partial", "auto", "cpuset", "none"]))
        pins = {v: [draw(st.integers(0, 7))] for v in range(vcpus)}
        if kind == "partial":
            pins = dict(list(pins.items())[:-1])
        domains.append(
            Domain(
                name=f"g{i}" if draw(st.booleans()) or i == 0 else None,
                uuid=f"u{i}",
                vcpus=vcpus,
                vcpupin=pins if kind in ("pinned", "partial") else {},
                vcpu_placement="auto" if kind == "auto" else None,
                vcpu_cpuset=[draw(st.integers(0, 7))] if kind == "cpuset" else [],
            )
        )
    listed = draw(st.booleans())
    names = [d.name or d.uuid for d in domains] + ["not-defined-here"]
    running = draw(st.lists(st.sampled_from(names), max_size=8)) if listed else []
    return domains, running, listed


@settings(max_examples=300, deadline=None)
@given(hosts())
def test_cpu_sharing_answers_as_the_pairwise_check(host):
    domains, running, listed = host
    sharing = CpuSharing(domains, running=running, listed=listed)
    for d in domains:
        expected = pairwise(d, domains, running, listed)
        count, names = sharing.others(d, shown=5)
        assert count == len(expected)
        assert names == expected[:5]
