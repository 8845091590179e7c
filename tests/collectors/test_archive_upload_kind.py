"""What an upload is (collectors.archive.upload_kind, and ``Reading.kind`` once
it is read) and the lines of cited artifacts the one read keeps for evidence
excerpts (``Reading.artifact_lines``), within the archive loader's limits."""

from __future__ import annotations

import io
import tarfile

from collectors.archive import (
    ARTIFACT,
    COLLECTOR,
    SOSREPORT,
    TRANSCRIPT,
    load,
    upload_kind,
)
from collectors.limits import Limits
from tests.conftest import CORPUS

NUMA_XML = CORPUS / "libvirt" / "insights-core_test_qemu_xml_XML_NUMA.txt"


def _tar_gz(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


COLLECTOR_TAR = _tar_gz(
    {"casebook-host/manifest.json": b"{}", "casebook-host/lscpu.txt": b"CPU(s): 4\nSocket(s): 1\n"}
)
SOS_TAR = _tar_gz({"sosreport-db1/sos_commands/processor/lscpu": b"CPU(s): 4\n"})


def archive_kind(fh: io.BytesIO, current: str) -> str:
    return load(fh.getvalue(), name="upload").kind(current)


def artifact_lines(fh: io.BytesIO, names: set[str], *, limits: Limits | None = None) -> dict[str, list[str]]:
    return load(fh.getvalue(), name="upload", limits=limits).artifact_lines(names)


def test_upload_kind_from_name_and_first_bytes():
    assert upload_kind("host.tar.gz", COLLECTOR_TAR[:4096]) == COLLECTOR
    assert upload_kind("sosreport-db1.tar.xz", b"\xfd7zXZ\x00rest") == SOSREPORT
    assert upload_kind("t.txt", b"$ lscpu\nCPU(s): 4\n") == TRANSCRIPT
    assert upload_kind("t.md", b"```\nnumactl -H\n```\n") == TRANSCRIPT
    assert upload_kind("q.txt", b"MariaDB [db]> show variables;\n") == TRANSCRIPT
    # a session quoted in an e-mail is still a session: the loader's own detection
    assert (
        upload_kind("mail.eml", b"Hi,\n> [root@db1 ~]# numactl -H\n> available: 2 nodes (0-1)\n")
        == TRANSCRIPT
    )
    assert upload_kind("vm.xml", NUMA_XML.read_bytes()[:4096]) == ARTIFACT
    assert upload_kind("mysqld.log", b"2020-01-01 [Note] InnoDB: started\n") == ARTIFACT


def test_archive_kind_looks_at_the_first_members():
    assert archive_kind(io.BytesIO(SOS_TAR), COLLECTOR) == SOSREPORT
    assert archive_kind(io.BytesIO(COLLECTOR_TAR), SOSREPORT) == COLLECTOR
    assert archive_kind(io.BytesIO(b"not an archive at all"), COLLECTOR) == COLLECTOR


def test_artifact_lines_from_an_archive_and_from_text():
    lines = artifact_lines(io.BytesIO(COLLECTOR_TAR), {"lscpu.txt", "missing.txt"})
    assert lines == {"lscpu.txt": ["CPU(s): 4", "Socket(s): 1", ""]}
    text = b"[root@db1 ~]# lscpu\nCPU(s): 4\n"
    assert artifact_lines(io.BytesIO(text), {"lscpu"}) == {"lscpu": ["[root@db1 ~]# lscpu", "CPU(s): 4", ""]}


def test_artifact_lines_keep_to_the_limits():
    small = Limits(artifact_bytes=8, members=1)
    assert artifact_lines(io.BytesIO(COLLECTOR_TAR), {"lscpu.txt"}, limits=small) == {}  # member 2 of 1
    assert artifact_lines(io.BytesIO(b"x" * 9), {"a"}, limits=small) == {}  # text over 8 bytes
    many = _tar_gz({f"h/{i}.txt": b"1\n" for i in range(5)} | {"h/lscpu.txt": b"CPU(s): 4\n"})
    assert artifact_lines(io.BytesIO(many), {"lscpu.txt"}, limits=Limits(members=3)) == {}
    assert "lscpu.txt" in artifact_lines(io.BytesIO(many), {"lscpu.txt"}, limits=Limits(members=6))
