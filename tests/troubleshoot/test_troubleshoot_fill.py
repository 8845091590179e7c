"""The wizard's pinning comes from the remediation planner: for the rebuilt
ZStack incident (seed 000) the plan step's measures carry exactly the pins,
emulator/iothread pins and numatune of the report's remediation page, and
when the planner cannot help the plan step shows its reason."""

from __future__ import annotations

import html
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.troubleshoot.conftest import SEEDS
from triage import analysis
from troubleshoot import lifecycle, planning, snapshots
from troubleshoot.fill import PINNING, fill_commands

pytestmark = pytest.mark.django_db

ZSTACK_HOST = SEEDS / "zstack-mariadb-v2v" / "before" / "zstack-9.txt"
GUEST = "8c1f5e2a0d9b4c6e9f3a7b2d1e4c6a80"
VCPUPIN = re.compile(r"<vcpupin vcpu='(\d+)' cpuset='([^']+)'/>")
SINGLE = {
    "emulatorpin": re.compile(r"<emulatorpin cpuset='([^']+)'/>"),
    "iothreadpin": re.compile(r"<iothreadpin iothread='(\d+)' cpuset='([^']+)'/>"),
    "numatune": re.compile(r"<memory mode='(\w+)' nodeset='([^']+)'/>"),
    "memnode": re.compile(r"<memnode cellid='(\d+)' mode='(\w+)' nodeset='([^']+)'/>"),
}


@pytest.fixture
def alice_client(client, teams):
    client.force_login(teams["alice"])
    return client


def pins(text: str) -> dict:
    return {
        "vcpupin": dict(VCPUPIN.findall(text)),
        **{name: sorted(set(pattern.findall(text))) for name, pattern in SINGLE.items()},
    }


def host_snapshot(session):
    return next(s for s in snapshots.snapshots_of(session, "before") if s.host_facts().domains)


def test_wizard_pinning_equals_the_remediation_page(zstack_session, teams, alice_client):
    alice = teams["alice"]
    lifecycle.update_session(session=zstack_session, user=alice, changes={"guest_reboot_allowed": True})
    planned = {
        slug: planning.plan_measure(session=zstack_session, user=alice, slug=slug).commands
        for slug in ("pin-vcpus", "pin-emulator", "pin-iothreads", "numatune-memory-binding")
    }
    wizard = pins("\n".join(planned.values()))

    page = alice_client.get(reverse("triage:snapshot_remedy", args=[host_snapshot(zstack_session).pk, GUEST]))
    assert page.status_code == 200
    remediation = pins(html.unescape(page.content.decode()))

    assert wizard == remediation
    # The planner's choice: node 1, SMT sibling pairs, the emulator and the
    # iothread on spare whole cores of the same node.
    assert len(wizard["vcpupin"]) == 32
    assert (wizard["vcpupin"]["0"], wizard["vcpupin"]["1"], wizard["vcpupin"]["31"]) == ("1", "37", "67")
    assert wizard["emulatorpin"] == ["33,69"]
    assert wizard["iothreadpin"] == [("1", "35,71")]
    assert wizard["numatune"] == [("strict", "1")]
    # each measure carries only its own part, with its virsh commands
    assert "emulatorpin" not in planned["pin-vcpus"] and "vcpupin" not in planned["pin-emulator"]
    assert f"virsh emulatorpin {GUEST} 33,69 --config" in planned["pin-emulator"]
    assert "<!-- disk vdb -->" in planned["pin-iothreads"] and "iothread='1'" in planned["pin-iothreads"]


def test_plan_step_shows_the_placement_and_links_the_remediation_page(zstack_session, alice_client):
    page = alice_client.get(reverse("troubleshoot:step", args=[zstack_session.pk, "plan"])).content.decode()
    section = page[page.index('id="placement"') :]
    assert f'data-domain="{GUEST}" data-ok="yes"' in section
    assert "host node(s) 1; vCPUs on CPUs 1,3,5" in section and "emulator on 33,69" in section
    url = reverse("triage:snapshot_remedy", args=[host_snapshot(zstack_session).pk, GUEST])
    assert f'href="{url}"' in section


def test_the_planners_cannot_help_reason_is_shown(teams, founding_cases, media, no_queue, alice_client):
    """The same host with its guest defined as plain QEMU emulation: the
    planner refuses, the plan step says why and the catalogue text is used."""
    alice = teams["alice"]
    session = lifecycle.create_session(owner=alice, title="emulated guest")
    text = ZSTACK_HOST.read_text().replace("<domain type='kvm' id='1'>", "<domain type='qemu' id='1'>")
    snap = snapshots.upload_snapshot(
        session=session,
        user=alice,
        uploaded_file=SimpleUploadedFile("zstack-9.txt", text.encode()),
        phase="before",
    )
    analysis.analyze_snapshot_now(snapshot_id=snap.pk, force=True)

    [plan] = planning.guest_plans(session)
    assert not plan.ok and "domain type is qemu, not kvm" in plan.result.reason
    page = alice_client.get(reverse("troubleshoot:step", args=[session.pk, "plan"])).content.decode()
    assert 'data-ok="no"' in page and "domain type is qemu, not kvm" in page
    assert fill_commands("pin-vcpus", plans=[plan]) == ""
    pm = planning.plan_measure(session=session, user=alice, slug="pin-vcpus")
    assert pm.commands == pm.measure.commands  # the catalogue's text, not a made-up placement


def test_only_pinning_measures_are_filled(zstack_session):
    plans = planning.guest_plans(zstack_session)
    assert fill_commands("zone-reclaim-mode", plans=plans) == ""
    assert "zone-reclaim-mode" not in PINNING
    vnuma = fill_commands("guest-numa-topology", plans=plans)
    assert "<topology sockets='1' cores='16' threads='2'/>" in vnuma
    assert "<cell id='0' cpus='0-31' memory='33554432' unit='KiB'/>" in vnuma
