"""The work budget of one upload (collectors.limits.Limits ``parsed_artifacts``
and ``domains``, issue 29): counted in outputs parsed and libvirt domain XMLs
as well as in time. Past either, reading stops and the upload says why
(``LoadedUpload.over_budget``); ``load`` still never raises. The input: a
sosreport-shaped archive of the shared corpus's real domain XMLs
(``etc/libvirt/qemu/*.xml``) and this corpus's real numactl and lscpu."""

from __future__ import annotations

import io
import tarfile

from collectors.archive import load
from collectors.limits import Limits
from tests.conftest import CORPUS

DOMAINS = sorted((CORPUS / "libvirt").iterdir())


def sosreport(copies: int = 1) -> bytes:
    """numactl and lscpu, then every corpus domain XML ``copies`` times."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:

        def add(name: str, data: bytes) -> None:
            info = tarfile.TarInfo(f"sosreport-kvm/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))

        add(
            "sos_commands/numa/numactl_--hardware",
            (CORPUS / "numactl" / "percona-toolkit_pt-summary_007_numactl.txt").read_bytes(),
        )
        add(
            "sos_commands/processor/lscpu",
            (CORPUS / "lscpu" / "insights-core_test_lscpu_LSCPU_3.txt").read_bytes(),
        )
        for copy in range(copies):
            for i, path in enumerate(DOMAINS):
                add(f"etc/libvirt/qemu/guest-{copy}-{i:02d}.xml", path.read_bytes())
    return buf.getvalue()


def test_within_the_budget_nothing_is_said():
    loaded = load(sosreport(), name="sosreport-kvm.tar.gz", limits=Limits(domains=len(DOMAINS)))
    assert loaded.over_budget == ""
    assert sum(a["kind"] == "libvirt_domain" for a in loaded.host.artifacts) == len(DOMAINS) == 55


def domain_parses(loaded) -> int:
    return sum(a["kind"] == "libvirt_domain" for a in loaded.host.artifacts)


def test_more_domain_xmls_than_the_budget_stop_the_reading_with_the_reason():
    loaded = load(sosreport(copies=3), name="sosreport-kvm.tar.gz", limits=Limits(domains=20))
    assert loaded.over_budget == (
        "over the work budget: more than 20 libvirt domain XMLs in one upload (CASEBOOK_MAX_DOMAINS); "
        "reading stopped there and nothing was analysed"
    )
    assert domain_parses(loaded) == 20  # the 21st was never parsed, nor the rest
    assert loaded.over_budget in [e.message for e in loaded.host.errors]


def test_more_outputs_than_the_budget_stop_the_reading_too():
    loaded = load(sosreport(), name="sosreport-kvm.tar.gz", limits=Limits(parsed_artifacts=10))
    assert "more than 10 command outputs and files to parse" in loaded.over_budget
    assert "CASEBOOK_MAX_PARSED_ARTIFACTS" in loaded.over_budget
    assert len(loaded.host.artifacts) <= 10


def test_the_budget_spans_the_upload_and_its_added_evidence(tmp_path):
    """Evidence added later is read with the upload (one load): one budget."""
    first, second = tmp_path / "a.tar.gz", tmp_path / "b.tar.gz"
    first.write_bytes(sosreport())
    second.write_bytes(sosreport())
    assert load([first], limits=Limits(domains=len(DOMAINS) + 5)).over_budget == ""
    both = load([first, second], limits=Limits(domains=len(DOMAINS) + 5))
    assert "libvirt domain XMLs" in both.over_budget
