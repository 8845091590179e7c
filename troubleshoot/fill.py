"""The wizard's placement: the remediation planner's patch for the session's guests.

The wizard has no planner of its own. For every before-snapshot of a KVM host
whose guests have placement findings, it asks ``engine.remedies`` for the same
patch the report's remediation page shows (``domain_remedy`` on the domain XML
the stored facts keep, read back by ``Snapshot.host_facts``), and a planned
pinning measure gets that patch's part for the measure
(``Remedy.fragment``): vCPU pins, emulator and iothread pins, numatune, guest
NUMA cells. When the planner cannot help, its reason is shown instead.

Planning a guest costs a fraction of a second, so the results are cached per
snapshot and analysis (``CACHE_SECONDS``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.core.cache import cache
from django.urls import reverse

from collectors.cpulist import format_cpulist
from collectors.facts import HostFacts
from engine.remedies import Remedy, RemedyResult
from engine.remedies.libvirt import MEASURES as DOMAIN_MEASURES
from engine.remedies.libvirt import RULES as DOMAIN_RULES
from engine.remedies.libvirt import domain_remedy
from triage.models import Snapshot

# Measures whose configuration comes from the guest's patch.
PINNING = frozenset((*DOMAIN_MEASURES, "static-hugepages"))
CACHE_SECONDS = 3600
_DOMAIN_IN_FACT = re.compile(r"^domains\[(.+?)\]")


@dataclass(frozen=True)
class GuestPlan:
    """The remediation planner's answer for one guest of one host snapshot."""

    snapshot_id: int
    host: str
    domain: str
    result: RemedyResult

    @property
    def ok(self) -> bool:
        return self.result.ok

    @property
    def summary(self) -> dict[str, str] | None:
        """Host node(s), vCPU CPUs, emulator and iothread CPUs of the patch."""
        placement = getattr(self.result, "placement", None)
        if placement is None:
            return None
        return {
            "nodes": format_cpulist(placement.nodes),
            "vcpus": format_cpulist(sorted(placement.vcpupin.values())),
            "emulator": format_cpulist(placement.emulator_cpus),
            "iothreads": "; ".join(
                f"{i}: {format_cpulist(cpus)}" for i, cpus in sorted(placement.iothread_cpus.items())
            ),
        }

    @property
    def url(self) -> str:
        """The report's remediation page of the same guest."""
        return reverse("triage:snapshot_remedy", args=[self.snapshot_id, self.domain])


def _placement_domains(snapshot: Snapshot, host: HostFacts) -> list[str] | None:
    """Guests of ``snapshot`` named by its KVM placement findings; None when
    the snapshot is not a host with such findings. An empty list means the
    findings name no guest: every guest of the host is planned, as the report
    links every guest."""
    if not host.domains:
        return None
    findings = [f for f in snapshot.current_findings() if f.rule in DOMAIN_RULES]
    if not findings:
        return None
    names: list[str] = []
    for f in findings:
        for ev in f.evidence or []:
            m = _DOMAIN_IN_FACT.match(str((ev or {}).get("fact") or ""))
            if m and m.group(1) not in names:
                names.append(m.group(1))
    return names


def _plans_of(snapshot: Snapshot, host: HostFacts, names: list[str]) -> list[GuestPlan]:
    out = []
    for d in host.domains:
        label = d.name or d.uuid
        if not d.raw_xml or not label or "/" in label or (names and not ({d.name, d.uuid} & set(names))):
            continue
        out.append(
            GuestPlan(snapshot.pk, snapshot.host_label, label, domain_remedy(domain_xml=d.raw_xml, host=host))
        )
    return out


def guest_plans(snapshots: list[Snapshot]) -> list[GuestPlan]:
    """The patch (or the reason there is none) of every guest with placement
    findings on the analysed host snapshots among ``snapshots``."""
    out: list[GuestPlan] = []
    for snapshot in snapshots:
        if snapshot.status != Snapshot.Status.DONE:
            continue
        stamp = snapshot.finished_at.isoformat() if snapshot.finished_at else ""
        key = f"troubleshoot:guest-plans:{snapshot.pk}:{snapshot.sha256}:{snapshot.engine_version}:{stamp}"
        plans = cache.get(key)
        if plans is None:
            host = snapshot.host_facts()
            names = _placement_domains(snapshot, host)
            if names is None:
                continue
            plans = _plans_of(snapshot, host, names)
            cache.set(key, plans, CACHE_SECONDS)
        out.extend(plans)
    return out


def fill_commands(slug: str, *, plans: list[GuestPlan]) -> str:
    """The configuration of pinning measure ``slug`` for these guests, from
    their patches; "" when it is not a pinning measure or no patch has it."""
    if slug not in PINNING:
        return ""
    return "\n\n".join(
        text for p in plans if isinstance(p.result, Remedy) and (text := p.result.fragment(slug))
    )
