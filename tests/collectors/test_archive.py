"""Archive loading: collector tarballs (manifest.json mapping), sosreport paths,
directories, single artifacts, limits and provenance."""

from __future__ import annotations

import gzip
import io
import json
import lzma
import tarfile
from pathlib import Path

import pytest

from collectors.archive import load_host, load_host_bytes, load_snapshot
from collectors.facts import to_dict
from collectors.limits import Limits
from tests.conftest import CORPUS, ROOT

NUMACTL = (
    "available: 2 nodes (0-1)\n"
    "node 0 cpus: 0 1 2 3\n"
    "node 0 size: 64000 MB\n"
    "node 0 free: 1000 MB\n"
    "node 1 cpus: 4 5 6 7\n"
    "node 1 size: 64000 MB\n"
    "node 1 free: 50000 MB\n"
    "node distances:\n"
    "node   0   1\n"
    "  0:  10  32\n"
    "  1:  32  10\n"
)
LSCPU = (
    "Architecture:        aarch64\n"
    "CPU(s):              8\n"
    "On-line CPU(s) list: 0-7\n"
    "Thread(s) per core:  1\n"
    "Core(s) per socket:  4\n"
    "Socket(s):           2\n"
    "NUMA node(s):        2\n"
    "NUMA node0 CPU(s):   0-3\n"
    "NUMA node1 CPU(s):   4-7\n"
)
NODE0_MEMINFO = (
    "Node 0 MemTotal:       65536000 kB\n"
    "Node 0 MemFree:         1024000 kB\n"
    "Node 0 FilePages:      60000000 kB\n"
)
NODE1_NUMASTAT = (
    "numa_hit 100\nnuma_miss 900\nnuma_foreign 0\ninterleave_hit 5\nlocal_node 100\nother_node 900\n"
)
MEMINFO = (
    "MemTotal:       131072000 kB\n"
    "MemFree:         51200000 kB\n"
    "HugePages_Total:       0\n"
    "Hugepagesize:       2048 kB\n"
)
NETEM = b"qdisc netem 8004: dev bond0 root refcnt 17 limit 1000 delay 1.0ms\n"


def _tar(members: dict[str, bytes], *, compress: str = "gz") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    raw = buf.getvalue()
    if compress == "gz":
        return gzip.compress(raw)
    if compress == "xz":
        return lzma.compress(raw)
    return raw


def _collector_manifest(**overrides) -> dict:
    manifest = {
        "collector_version": "1.0.0",
        "hostname": "kunpeng-07",
        "time": "2026-11-22T04:00:00Z",
        "commands": [
            {
                "name": "lscpu",
                "command": "lscpu",
                "file": "commands/lscpu.txt",
                "exit_code": 0,
                "duration_s": 0.01,
                "kind": "lscpu",
            },
            {
                "name": "numactl_hardware",
                "command": "numactl --hardware",
                "file": "commands/numactl_hardware.txt",
                "exit_code": 0,
                "duration_s": 0.01,
                "kind": "numactl_hardware",
            },
            # no kind: mapped from the command
            {"name": "sysctl", "command": "sysctl -a", "file": "commands/sysctl.txt", "exit_code": 0},
            # unknown kind: falls back to content detection
            {"name": "x", "command": "x", "file": "commands/zoneinfo-ish.txt", "kind": "no-such-kind"},
            {
                "name": "virsh_list",
                "command": "virsh list --all",
                "file": "commands/virsh.txt",
                "exit_code": 127,
            },
        ],
        "files": [
            {"path": "proc/meminfo", "kind": "meminfo"},
            {"path": "sys/devices/system/node/node0/meminfo", "kind": "node_meminfo"},
            {"path": "sys/devices/system/node/node1/numastat", "kind": "node_numastat"},
        ],
    }
    manifest.update(overrides)
    return manifest


def _collector_members(manifest: dict, prefix: str = "") -> dict[str, bytes]:
    files = {
        "commands/lscpu.txt": LSCPU.encode(),
        "commands/numactl_hardware.txt": NUMACTL.encode(),
        "commands/sysctl.txt": b"vm.zone_reclaim_mode = 0\nkernel.numa_balancing = 1\n",
        "commands/zoneinfo-ish.txt": NUMACTL.encode(),
        "commands/virsh.txt": b"",
        "proc/meminfo": MEMINFO.encode(),
        "sys/devices/system/node/node0/meminfo": NODE0_MEMINFO.encode(),
        "sys/devices/system/node/node1/numastat": NODE1_NUMASTAT.encode(),
        "collector.log": b"collect.sh started\n",
    }
    members = {f"{prefix}manifest.json": json.dumps(manifest).encode()}
    members.update({prefix + k: v for k, v in files.items()})
    return members


def _check_collector_host(host):
    assert host.hostname == "kunpeng-07"
    assert host.cpu.cpus == 8 and host.cpu.architecture == "aarch64"
    assert host.role == "physical"
    assert host.sysctl.values["vm.zone_reclaim_mode"] == "0"
    numa = host.numa
    assert sorted(numa.nodes) == [0, 1]
    assert numa.nodes[0].cpus == [0, 1, 2, 3]
    assert numa.nodes[0].meminfo["FilePages"] == 60000000
    # node number from the sysfs path
    assert numa.nodes[1].numastat["numa_miss"] == 900
    assert numa.distances == [[10, 32], [32, 10]]
    assert set(numa.sources) >= {"NumactlHardware", "NodeMeminfo", "Numastat"}
    assert host.meminfo.values["MemTotal"] == 131072000
    assert host.hugepages.nr_hugepages == 0 and host.hugepages.hugepagesize_kb == 2048
    kinds = {a["name"]: a["kind"] for a in host.artifacts}
    assert next(v for k, v in kinds.items() if k.endswith("commands/sysctl.txt")) == "sysctl"
    assert next(v for k, v in kinds.items() if k.endswith("commands/zoneinfo-ish.txt")) == "numactl_hardware"
    failed = [a for a in host.artifacts if a["name"].endswith("virsh.txt")]
    assert failed and failed[0]["parsed"] is False and "127" in failed[0]["note"]
    assert host.errors == []


@pytest.mark.parametrize("prefix", ["", "kunpeng-07-20261122/"])
def test_collector_tarball_manifest_mapping(tmp_path, prefix):
    path = tmp_path / "snapshot.tar.gz"
    path.write_bytes(_tar(_collector_members(_collector_manifest(), prefix)))
    host = load_host(path)
    _check_collector_host(host)
    assert host.numa.nodes[0].meminfo["MemTotal"] == 65536000
    src = host.numa.sources["NodeMeminfo"]
    assert src.artifact == f"{prefix}sys/devices/system/node/node0/meminfo" and src.line == 1


def test_manifest_after_the_files_still_maps_them(tmp_path):
    members = _collector_members(_collector_manifest())
    manifest = members.pop("manifest.json")
    members["manifest.json"] = manifest  # last in the stream
    path = tmp_path / "late.tar"
    path.write_bytes(_tar(members, compress="none"))
    _check_collector_host(load_host(path))


def test_collector_bytes_and_label(tmp_path):
    data = _tar(_collector_members(_collector_manifest()), compress="xz")
    host = load_host_bytes(data, name="upload.bin", label="node-7")
    assert host.label == "node-7" and host.hostname == "kunpeng-07"
    assert host.cpu.cpus == 8


def test_real_collect_sh_manifest_shape_is_what_we_read():
    """collect.sh writes the manifest we map (fields name, command, file,
    exit_code, duration_s, kind; files[] with path and kind)."""
    script = (Path(__file__).resolve().parents[2] / "collectors" / "collect.sh").read_text()
    for field_name in ('"command"', '"file"', '"exit_code"', '"duration_s"', '"kind"', '"path"'):
        assert field_name in script


def test_sosreport_like_archive_maps_sos_paths(tmp_path):
    root = "sosreport-db01-2026-11-22-abcdef/"
    members = {
        root + "sos_commands/processor/lscpu": LSCPU.encode(),
        root + "sos_commands/numa/numactl_--hardware": NUMACTL.encode(),
        root + "sos_commands/kernel/sysctl_-a": b"vm.zone_reclaim_mode = 1\n",
        root + "proc/meminfo": MEMINFO.encode(),
        root + "sys/devices/system/node/node0/meminfo": NODE0_MEMINFO.encode(),
        root + "sys/devices/system/node/node1/numastat": NODE1_NUMASTAT.encode(),
        root + "sys/kernel/mm/transparent_hugepage/enabled": b"always [madvise] never\n",
        root + "sos_commands/networking/tc_-s_qdisc_show": NETEM,
        root + "hostname": b"db01\n",
        # unmapped bulk the loader must skip without reading
        root + "var/log/messages": b"x" * 100_000,
        root + "sos_commands/block/lsblk": b"NAME MAJ:MIN\n",
        root + "etc/fstab": b"# nothing\n",
    }
    path = tmp_path / "sosreport.tar.xz"
    path.write_bytes(_tar(members, compress="xz"))
    host = load_host(path)
    assert host.hostname == "db01"
    assert host.cpu.cpus == 8
    assert host.sysctl.values["vm.zone_reclaim_mode"] == "1"
    assert host.numa.nodes[1].numastat["numa_hit"] == 100
    assert host.hugepages.thp_enabled == "madvise"
    assert host.tc.qdiscs[0].delay_ms == 1.0
    names = {a["name"] for a in host.artifacts}
    assert root + "var/log/messages" not in names and root + "etc/fstab" not in names
    assert host.errors == []


def test_single_artifact_files_are_recognised_by_content(tmp_path):
    xml = tmp_path / "guest.xml"
    xml.write_text(
        "<domain type='kvm'><name>g1</name><vcpu placement='static' current='4'>8</vcpu>"
        "<cpu mode='host-model'/></domain>\n"
    )
    host = load_host(xml)
    assert [d.name for d in host.domains] == ["g1"]
    assert host.domains[0].vcpus == 8 and host.domains[0].vcpu_current == 4
    assert host.artifacts[0]["kind"] == "libvirt_domain"

    variables = CORPUS / "mysql" / "percona-toolkit_pt-mysql-summary_temp_enc008_mysql-variables.txt"
    if variables.exists():
        db = load_host(variables).database
        assert db is not None and db.variables


def test_directory_is_one_host_and_paths_map_kinds(tmp_path):
    (tmp_path / "lscpu.txt").write_text(LSCPU)
    (tmp_path / "notes.md").write_text(f"We ran this on the host:\n\n```\n$ numactl -H\n{NUMACTL}```\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "meminfo.gz").write_bytes(gzip.compress(MEMINFO.encode()))
    host = load_host(tmp_path)
    assert host.cpu.cpus == 8
    assert sorted(host.numa.nodes) == [0, 1]
    # provenance of a transcript block: the line in notes.md
    assert host.numa.source.artifact == "transcript:numactl -H"
    assert host.numa.source.line == 5
    assert host.meminfo.values["MemTotal"] == 131072000
    assert host.errors == []


def test_limits_are_configurable_and_default_from_settings(tmp_path, settings):
    settings.CASEBOOK_LIMITS = {**settings.CASEBOOK_LIMITS, "artifact_bytes": 100}
    assert Limits.from_settings().artifact_bytes == 100
    big = tmp_path / "lscpu.txt"
    big.write_text(LSCPU)
    assert any("larger than 100" in e.message for e in load_host(big).errors)
    assert load_host(big, limits=Limits()).cpu.cpus == 8


def test_load_snapshot_one_host_per_path(tmp_path):
    a = tmp_path / "a.txt"
    a.write_text(f"[root@host-a ~]# lscpu\n{LSCPU}")
    b = tmp_path / "b.xml"
    b.write_text("<domain type='kvm'><name>g</name><vcpu>2</vcpu></domain>")
    snap = load_snapshot([a, b], labels=["host", "guest-xml"])
    assert [h.label for h in snap.hosts] == ["host", "guest-xml"]
    assert snap.hosts[0].hostname == "host-a"
    assert snap.hosts[1].domains and snap.errors == []


def test_limits_stop_reading_but_keep_what_was_parsed(tmp_path):
    members = {"sos_commands/processor/lscpu": LSCPU.encode()}
    members.update({f"junk/{i}.txt": b"x\n" for i in range(30)})
    members["proc/meminfo"] = MEMINFO.encode()  # after the limit: not read
    path = tmp_path / "many.tar.gz"
    path.write_bytes(_tar(members))
    host = load_host(path, limits=Limits(members=10))
    assert host.cpu.cpus == 8
    assert host.meminfo is None
    assert any("more than 10 members" in e.message for e in host.errors)


def test_truncated_archive_keeps_the_members_before_the_cut(tmp_path):
    raw = _tar(
        {"sos_commands/processor/lscpu": LSCPU.encode(), "proc/meminfo": MEMINFO.encode() * 2000},
        compress="none",
    )
    path = tmp_path / "cut.tar.gz"
    path.write_bytes(gzip.compress(raw[: len(raw) // 2]))
    host = load_host(path)
    assert host.cpu.cpus == 8
    assert any("truncated or corrupt" in e.message for e in host.errors)


def test_seeds_serialise_to_json(seeds_dir):
    for path in sorted(seeds_dir.glob("*.txt")):
        json.dumps(to_dict(load_host(path)), ensure_ascii=False)


def test_unprompted_paste_of_two_artifacts_is_split(tmp_path):
    top = (
        "top - 11:38:32 up 64 days, 18 min, 2 users, load average: 1.09, 1.23, 1.42\n"
        "%Cpu0  :  1.7 us,  1.1 sy,  0.0 ni, 96.1 id,  0.0 wa,  0.0 hi,  1.1 si,  0.0 st\n"
        "%Cpu1  :  0.0 us,  0.0 sy,  0.0 ni,100.0 id,  0.0 wa,  0.0 hi,  0.0 si,  0.0 st\n"
    )
    path = tmp_path / "paste.txt"
    path.write_text(top + "\n" + NUMACTL)
    host = load_host(path)
    assert [c.cpu for c in host.cpu_usage.per_cpu] == ["0", "1"]
    assert sorted(host.numa.nodes) == [0, 1]
    assert host.numa.source.line == 5


def test_single_file_recognised_by_whole_content_when_its_header_misleads(corpus):
    # a "CPU0 CPU1" header alone reads as /proc/interrupts; the rows say softirqs
    host = load_host(corpus / "softirqs" / "node_exporter_proc_softirqs.txt")
    assert host.errors == []
    assert "NET_RX" in host.softirqs.rows and host.interrupts is None


def test_load_host_files_reads_an_upload_and_added_evidence_into_one_host(tmp_path):
    """A snapshot's upload plus an output pasted later (the ZStack host's
    transcript without its ``virsh dumpxml`` block, then that block): one host,
    each block named after its own file, line numbers per file."""
    from collectors.archive import load_host_files
    from engine.rules import evidence
    from tests.triage.founding_gaps import GAPS

    text, block = GAPS[0].split()
    upload, added = tmp_path / "zstack-9.txt", tmp_path / "added-1-dumpxml.txt"
    upload.write_text(text, encoding="utf-8")
    added.write_text(block, encoding="utf-8")
    host = load_host_files([upload, added, tmp_path / "gone.txt"], label="zstack-9")
    assert host.hostname == "zstack-9" and len(host.domains) == 1
    assert host.cpu is not None and host.virsh_list is not None  # from the upload
    names = [a["name"] for a in host.artifacts]
    assert "added-1-dumpxml.txt:2" in names and "zstack-9.txt:3" in names
    assert any(e.artifact == "gone.txt" for e in host.errors)  # reported, never raised

    # Evidence cites the block of the file its line is in (line 14 of the
    # paste, not line 14 of the upload's lscpu).
    domain = host.domains[0]
    cited = evidence(host, "domains[0].vcpus", 32, domain, line=14)
    assert cited.artifact == domain.source.artifact and "virsh dumpxml" in cited.artifact


def test_a_command_that_failed_is_reported_as_such():
    # glances issue 1531 (tests/evaluation/98-*): virsh cpu-stats fails on cgroup v2
    host = load_host(ROOT / "tests/evaluation/98-glances-starship-virsh-several/comment.txt")
    failed = [e for e in host.errors if "the command failed" in e.message]
    assert [(e.artifact, e.line) for e in failed] == [("transcript:virsh cpu-stats win11", 10)]
    assert "Failed to retrieve CPU statistics for domain 'win11'" in failed[0].message
    assert [d.name for d in host.virsh_list.running()] == ["win11"]
