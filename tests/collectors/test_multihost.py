"""Several hosts in one paste: a prompt naming another host (``ssh guest``,
then ``[root@guest ~]#``) starts a new host of the same snapshot, read as if
it had been uploaded as its own file, and the host/guest rules pair them."""

from __future__ import annotations

import re
from pathlib import Path

from collectors.archive import load_host, load_hosts, load_snapshot
from collectors.facts import SnapshotFacts
from engine.rules import RuleContext, domain_of_guest, host_of_guest
from engine.run import analyze
from tests.collectors import local_outputs as local
from tests.conftest import CORPUS, FIXTURES

ZSTACK = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before"


def _without_trailing_prompt(text: str) -> str:
    lines = text.rstrip("\n").split("\n")
    while lines and lines[-1].strip() in ("", "[root@zstack-9 ~]#", "[root@infoplus-db ~]#"):
        lines.pop()
    return "\n".join(lines)


def _mixed_seed(tmp_path):
    """The seed's KVM host and its guest in one paste, joined by ``ssh``."""
    host = _without_trailing_prompt((ZSTACK / "zstack-9.txt").read_text())
    guest = (ZSTACK / "infoplus-db.txt").read_text()
    path = tmp_path / "session.txt"
    path.write_text(f"{host}\n[root@zstack-9 ~]# ssh infoplus-db\n{guest}")
    return path


def _findings(hosts):
    return {(f.rule, f.host) for f in analyze(SnapshotFacts(hosts=hosts)).findings}


def test_ssh_to_the_guest_gives_two_hosts_like_two_uploads(tmp_path):
    path = _mixed_seed(tmp_path)
    hosts = load_hosts(path)
    assert [h.hostname for h in hosts] == ["zstack-9", "infoplus-db"]
    host, guest = hosts
    assert host.role == "physical" and guest.role == "guest"
    assert len(host.domains) == 1 and guest.database is not None and host.database is None
    assert guest.cpu.cpus == 32 and host.cpu.cpus != 32

    separate = [load_host(ZSTACK / "zstack-9.txt"), load_host(ZSTACK / "infoplus-db.txt")]
    together = _findings(hosts)
    assert together == _findings(separate)
    assert ("mysql.numa_interleave_unavailable", "infoplus-db") in together
    assert ("kvm.guest_numa_missing", "zstack-9") in together

    # every line of the paste belongs to exactly one of the two hosts
    lines = len(path.read_text().split("\n"))
    assert host.reading.lines + guest.reading.lines == lines
    assert guest.reading.artifacts[0].start_line > host.reading.artifacts[-1].end_line


def test_load_host_still_merges_one_upload_into_one_host(tmp_path):
    merged = load_host(_mixed_seed(tmp_path))
    assert merged.hostname == "zstack-9"
    assert merged.database is not None and merged.domains
    assert merged.reading.lines == len(_mixed_seed(tmp_path).read_text().split("\n"))


def test_load_snapshot_uses_every_host_of_every_path(tmp_path):
    snapshot = load_snapshot(
        [_mixed_seed(tmp_path), CORPUS / "numactl" / "percona-toolkit_pt-summary_007_numactl.txt"]
    )
    assert [h.hostname for h in snapshot.hosts][:2] == ["zstack-9", "infoplus-db"]
    assert len(snapshot.hosts) == 3


def test_returning_to_the_first_host_continues_it(tmp_path):
    numactl = (CORPUS / "numactl" / "percona-toolkit_pt-summary_007_numactl.txt").read_text()
    meminfo = (CORPUS / "meminfo" / "node_exporter_proc_meminfo.txt").read_text()
    cmdline = Path("/proc/cmdline").read_text()  # this machine's
    text = (
        f"[root@kvm01 ~]# numactl -H\n{numactl}"
        "[root@kvm01 ~]# ssh db01\n"
        f"[root@db01 ~]# cat /proc/meminfo\n{meminfo}"
        "[root@db01 ~]# exit\n"
        f"[root@kvm01.example.com ~]# cat /proc/cmdline\n{cmdline}"
    )
    path = tmp_path / "t.txt"
    path.write_text(text)
    kvm, db = load_hosts(path)
    assert kvm.hostname == "kvm01" and db.hostname == "db01"
    assert kvm.numa is not None and kvm.cmdline is not None and kvm.meminfo is None
    assert db.meminfo is not None and db.numa is None


def test_this_machine_as_guest_of_a_kvm_host_is_paired(tmp_path):
    """Real outputs only: a two-node host's numactl -H (pt-summary corpus) and
    libvirt's test domain, then ``ssh`` to this machine (a KVM guest) and its
    lscpu and SHOW GLOBAL VARIABLES."""
    numactl = (CORPUS / "numactl" / "percona-toolkit_pt-summary_007_numactl.txt").read_text().rstrip("\n")
    # The test driver's domain as a KVM guest (its type and UUID otherwise mark it
    # as the test driver's, which the rules do not count as a guest of the host).
    kvm_domain = re.sub(
        r"<uuid>[^<]*</uuid>", "<uuid>0f6c3a2e-5b1d-4c8e-9a7f-2d4e6b8c1a90</uuid>", local.output("dumpxml")
    )
    kvm_domain = kvm_domain.replace("type='test'", "type='kvm'").replace('type="test"', 'type="kvm"')
    text = (
        f"[root@kvm-host ~]# numactl -H\n{numactl}\n"
        f"[root@kvm-host ~]# virsh dumpxml test\n{kvm_domain}\n"
        "[root@kvm-host ~]# ssh test\n"
        f"[root@test ~]# lscpu\n{local.output('lscpu')}\n"
        f"[root@test ~]# {local.command('variables')}\n{local.output('variables')}\n"
    )
    path = tmp_path / "pair.txt"
    path.write_text(text)
    host, guest = load_hosts(path)
    assert host.hostname == "kvm-host" and guest.hostname == "test"
    assert host.numa_node_count() == 2 and [d.name for d in host.domains] == ["test"]
    assert guest.is_guest and guest.cpu is not None and guest.database is not None
    assert len(guest.database.variables) == local.mariadb_variable_count()
    ctx = RuleContext(SnapshotFacts(hosts=[host, guest]))
    assert host_of_guest(ctx, guest) is host
    assert domain_of_guest(ctx, guest).name == "test"
