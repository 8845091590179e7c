"""Hostile uploads: every case is generated in tmp_path and loaded with
``load``. Each must return HostFacts with per-artifact errors, never raise,
write nothing (the tree under tmp_path and the working directory are compared
before and after), and stay within a bounded amount of memory."""

from __future__ import annotations

import bz2
import codecs
import gzip
import io
import json
import lzma
import os
import random
import subprocess
import tarfile
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from collectors.archive import load
from collectors.facts import HostFacts, to_dict
from collectors.limits import Limits

MiB = 1 << 20
PEAK_LIMIT = 200 * MiB

NUMACTL = (
    "available: 2 nodes (0-1)\n"
    "node 0 cpus: 0 2 4 6\n"
    "node 0 size: 32722 MB\n"
    "node 0 free: 24803 MB\n"
    "node 1 cpus: 1 3 5 7\n"
    "node 1 size: 32768 MB\n"
    "node 1 free: 28378 MB\n"
    "node distances:\n"
    "node   0   1\n"
    "  0:  10  21\n"
    "  1:  21  10\n"
)
LSCPU = (
    "Architecture:        x86_64\n"
    "CPU(s):              8\n"
    "On-line CPU(s) list: 0-7\n"
    "Thread(s) per core:  2\n"
    "Core(s) per socket:  2\n"
    "Socket(s):           2\n"
    "NUMA node(s):        2\n"
    "Vendor ID:           GenuineIntel\n"
    "L3 cache:            33792K\n"
    "NUMA node0 CPU(s):   0,2,4,6\n"
    "NUMA node1 CPU(s):   1,3,5,7\n"
)
PASSWD_MARK = "root:x:0:0"


@dataclass
class Case:
    path: Path
    error: str | None = None  # a substring expected in some error message ("" = any error)
    limits: Limits | None = None
    forbidden: tuple[str, ...] = ()  # must not appear anywhere in the facts
    check: Callable[[HostFacts], None] | None = None
    extra_files: list[Path] = field(default_factory=list)


# ------------------------------------------------------------------ helpers


def _tar_bytes(members: list[tuple[tarfile.TarInfo, bytes | None]], mode: str = "w") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode, format=tarfile.PAX_FORMAT) as tf:
        for info, data in members:
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return buf.getvalue()


def _reg(name: str, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _special(name: str, kind: bytes, linkname: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info, None


def _gzip_stream(path: Path, chunks: int, chunk: bytes = b"\0" * MiB) -> None:
    with gzip.open(path, "wb", compresslevel=9) as g:
        for _ in range(chunks):
            g.write(chunk)


class _ZeroReader(io.RawIOBase):
    """``size`` zero bytes, produced lazily (for a member bigger than memory)."""

    def __init__(self, size: int):
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self.left)
        buffer[:n] = b"\0" * n
        self.left -= n
        return n


def _tar_with_zero_member(path: Path, name: str, size: int, mode: str) -> None:
    with tarfile.open(path, mode) as tf:
        info = tarfile.TarInfo(name)
        info.size = size
        tf.addfile(info, io.BufferedReader(_ZeroReader(size), buffer_size=MiB))


# ------------------------------------------------------------------ cases


def case_gzip_bomb(d: Path) -> Case:
    p = d / "bomb.txt.gz"
    _gzip_stream(p, 300)  # 300 MiB of zeros in ~300 KiB
    return Case(p, error="")


def case_tar_gz_ratio_bomb(d: Path) -> Case:
    p = d / "ratio.tar.gz"
    _tar_with_zero_member(p, "proc/meminfo", 200 * MiB, "w:gz")
    return Case(p, error="")


def case_tar_gz_unpacked_limit(d: Path) -> Case:
    p = d / "unpacked.tar.gz"
    _tar_with_zero_member(p, "var/big.bin", 40 * MiB, "w:gz")
    return Case(p, error="expands", limits=Limits(unpacked_bytes=8 * MiB, ratio_floor_bytes=MiB))


def case_xz_bomb(d: Path) -> Case:
    p = d / "bomb.tar.xz"
    _tar_with_zero_member(p, "sos_commands/processor/lscpu", 64 * MiB, "w:xz")
    return Case(p, error="")


def case_bz2_bomb(d: Path) -> Case:
    p = d / "bomb.txt.bz2"
    comp = bz2.BZ2Compressor(9)
    with open(p, "wb") as fh:
        for _ in range(150):
            fh.write(comp.compress(b"\0" * MiB))
        fh.write(comp.flush())
    return Case(p, error="")


def case_sparse_member(d: Path) -> Case:
    sparse = d / "src" / "proc" / "meminfo"
    sparse.parent.mkdir(parents=True)
    with open(sparse, "wb") as fh:
        fh.truncate(1 << 40)  # 1 TiB of holes
    p = d / "sparse.tar"
    subprocess.run(["tar", "--sparse", "-cf", str(p), "-C", str(d / "src"), "proc"], check=True)
    return Case(p, error="exceeds the artifact limit")


def case_too_many_members(d: Path) -> Case:
    p = d / "many.tar"
    p.write_bytes(_tar_bytes([_reg(f"f{i}.txt", b"x\n") for i in range(50)]))
    return Case(p, error="more than 20 members", limits=Limits(members=20))


def case_traversal(d: Path) -> Case:
    p = d / "traversal.tar"
    p.write_bytes(_tar_bytes([_reg("../../etc/x", NUMACTL.encode()), _reg("ok/../../x", b"1\n")]))
    return Case(p, error="'..'")


def case_absolute_member(d: Path) -> Case:
    p = d / "absolute.tar"
    p.write_bytes(_tar_bytes([_reg("/etc/passwd", b"root:x:0:0:root:/root:/bin/bash\n")]))
    return Case(p, error="absolute", forbidden=(PASSWD_MARK,))


def case_symlink_member(d: Path) -> Case:
    p = d / "symlink.tar"
    p.write_bytes(_tar_bytes([_special("proc/meminfo", tarfile.SYMTYPE, "/etc/passwd")]))
    return Case(p, error="link", forbidden=(PASSWD_MARK,))


def case_hardlink_member(d: Path) -> Case:
    p = d / "hardlink.tar"
    p.write_bytes(_tar_bytes([_special("proc/cpuinfo", tarfile.LNKTYPE, "/etc/shadow")]))
    return Case(p, error="link")


def case_device_members(d: Path) -> Case:
    p = d / "devices.tar"
    p.write_bytes(
        _tar_bytes(
            [
                _special("dev/sda", tarfile.BLKTYPE),
                _special("dev/null", tarfile.CHRTYPE),
                _special("proc/meminfo", tarfile.FIFOTYPE),
            ]
        )
    )
    return Case(p, error="device or FIFO")


def case_truncated_gzip(d: Path) -> Case:
    data = gzip.compress(_tar_bytes([_reg("proc/meminfo", b"MemTotal: 1 kB\n" * 5000)]))
    p = d / "truncated.tar.gz"
    p.write_bytes(data[: len(data) // 2])
    return Case(p, error="")


def case_truncated_tar(d: Path) -> Case:
    data = _tar_bytes([_reg("sos_commands/processor/lscpu", LSCPU.encode() * 50)])
    p = d / "truncated.tar"
    p.write_bytes(data[:1200])
    return Case(p, error="")


def case_truncated_xz(d: Path) -> Case:
    data = lzma.compress(_tar_bytes([_reg("proc/meminfo", b"MemTotal: 1 kB\n" * 5000)]))
    p = d / "truncated.tar.xz"
    p.write_bytes(data[: len(data) // 2])
    return Case(p, error="")


def case_nested_archive(d: Path) -> Case:
    inner = gzip.compress(_tar_bytes([_reg("sos_commands/processor/lscpu", LSCPU.encode())]))
    p = d / "nested.tar.gz"
    p.write_bytes(gzip.compress(_tar_bytes([_reg("inner.tar.gz", inner), _reg("lscpu.txt", inner)])))
    return Case(p, error="nested archive")


def case_billion_laughs(d: Path) -> Case:
    entities = '<!ENTITY lol "lol">' + "".join(
        f'<!ENTITY lol{i} "{"&lol{};".format(i - 1 if i > 1 else "") * 10}">' for i in range(1, 10)
    )
    xml = (
        f'<?xml version="1.0"?><!DOCTYPE domain [{entities}]><domain type="kvm"><name>&lol9;</name></domain>'
    )
    p = d / "laughs.xml"
    p.write_text(xml)
    return Case(p, error="", forbidden=("lollollollollollollollollollollol",))


def case_external_entity(d: Path) -> Case:
    xml = (
        '<?xml version="1.0"?>\n<!DOCTYPE domain [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>\n'
        "<domain type='kvm'><name>&xxe;</name><vcpu>2</vcpu></domain>\n"
    )
    p = d / "xxe.xml"
    p.write_text(xml)
    return Case(p, error="", forbidden=(PASSWD_MARK, "/bin/bash", "nologin"))


def case_dtd(d: Path) -> Case:
    xml = (
        '<?xml version="1.0"?>\n<!DOCTYPE domain SYSTEM "http://127.0.0.1:9/evil.dtd">\n'
        "<domain type='kvm'><name>g</name><vcpu>2</vcpu></domain>\n"
    )
    p = d / "dtd.xml"
    p.write_text(xml)
    return Case(p, error="")


def case_single_20mb_line(d: Path) -> Case:
    p = d / "line.txt"
    p.write_bytes(b"numa_hit " + b"9" * (20 * MiB) + b"\n")
    return Case(p, error="")


def case_nul_bytes(d: Path) -> Case:
    p = d / "nul.txt"
    p.write_bytes(NUMACTL.replace("\n", "\n\0").encode())

    def check(h: HostFacts) -> None:
        assert sorted(h.numa.nodes) == [0, 1]

    return Case(p, error="NUL", check=check)


def case_gb18030(d: Path) -> Case:
    p = d / "gb18030.txt"
    text = "# 物理机 NUMA 信息\n[root@主机-1 ~]# numactl -H\n" + NUMACTL + "以上是输出。\n"
    p.write_bytes(text.encode("gb18030"))

    def check(h: HostFacts) -> None:
        assert sorted(h.numa.nodes) == [0, 1]
        assert h.numa.nodes[1].size_mb == 32768
        assert h.numa.source.line == 3  # first output line after the prompt

    return Case(p, error=None, check=check)


def case_mixed_encodings(d: Path) -> Case:
    p = d / "mixed.txt"
    data = (
        "说明：物理机信息\n".encode()
        + "第二行说明\n".encode("gb18030")
        + b"$ numactl -H\n"
        + NUMACTL.encode()
    )
    p.write_bytes(data)

    def check(h: HostFacts) -> None:
        assert sorted(h.numa.nodes) == [0, 1]

    return Case(p, error=None, check=check)


def case_utf16(d: Path) -> Case:
    p = d / "lscpu-utf16.txt"
    p.write_bytes(codecs.BOM_UTF16_LE + LSCPU.replace("\n", "\r\n").encode("utf-16-le"))

    def check(h: HostFacts) -> None:
        assert h.cpu.cpus == 8 and h.cpu.sockets == 2

    return Case(p, error=None, check=check)


def case_empty_file(d: Path) -> Case:
    p = d / "empty.txt"
    p.write_bytes(b"")
    return Case(p, error="empty")


def case_empty_tar(d: Path) -> Case:
    p = d / "empty.tar"
    p.write_bytes(_tar_bytes([]))
    return Case(p, error="empty archive")


def case_empty_tar_gz(d: Path) -> Case:
    p = d / "empty.tar.gz"
    p.write_bytes(gzip.compress(_tar_bytes([])))
    return Case(p, error="empty archive")


def case_random_bytes(d: Path) -> Case:
    p = d / "random.bin"
    p.write_bytes(random.Random(0).randbytes(256 * 1024))
    return Case(p, error="")


def case_random_after_gzip_magic(d: Path) -> Case:
    p = d / "fake.gz"
    p.write_bytes(b"\x1f\x8b\x08\x00" + random.Random(1).randbytes(4096))
    return Case(p, error="")


def case_directory_with_links_and_fifo(d: Path) -> Case:
    root = d / "host"
    root.mkdir()
    (root / "numactl.txt").write_text(NUMACTL)
    (root / "x").symlink_to("../outside")
    (root / "passwd").symlink_to("/etc/passwd")
    (root / "linkdir").symlink_to("/etc")
    os.mkfifo(root / "pipe")
    (root / "..x").write_text("not an artifact, only a confusing name\n")
    (root / "evil\nname\x1b[31m.txt").write_text(LSCPU)

    def check(h: HostFacts) -> None:
        assert sorted(h.numa.nodes) == [0, 1]
        assert h.cpu.cpus == 8
        assert all("\n" not in a["name"] and "\x1b" not in a["name"] for a in h.artifacts)
        assert all("\x1b" not in e.artifact for e in h.errors)

    return Case(root, error="symbolic link", forbidden=(PASSWD_MARK,), check=check)


def case_very_long_member_name(d: Path) -> Case:
    p = d / "longname.tar"
    p.write_bytes(_tar_bytes([_reg("a/" * 3000 + "meminfo", b"MemTotal: 1 kB\n")]))
    return Case(p, error="too long")


def case_pax_header_bomb(d: Path) -> Case:
    info = tarfile.TarInfo("proc/meminfo")
    info.pax_headers = {"comment": "x" * (3 * MiB)}
    info.size = 5
    p = d / "pax.tar"
    p.write_bytes(_tar_bytes([(info, b"x\nx\n\n")]))
    return Case(p, error="")


def _manifest_tar(manifest: bytes, extra: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    return gzip.compress(_tar_bytes([_reg("host-a/manifest.json", manifest), *extra]))


def case_manifest_invalid_json(d: Path) -> Case:
    p = d / "badmanifest.tar.gz"
    p.write_bytes(
        _manifest_tar(
            b"{not json",
            [
                _reg("host-a/commands/numactl.txt", NUMACTL.encode()),
                _reg("host-a/proc/meminfo", b"MemTotal: 1 kB\n"),
            ],
        )
    )

    def check(h: HostFacts) -> None:
        # without a usable manifest the files are still mapped by path or content
        assert h.meminfo.values["MemTotal"] == 1
        assert sorted(h.numa.nodes) == [0, 1]

    return Case(p, error="not valid JSON", check=check)


def case_manifest_points_outside(d: Path) -> Case:
    manifest = {
        "hostname": "h",
        "commands": [
            {"name": "x", "command": "cat /etc/passwd", "file": "../../etc/passwd", "kind": "meminfo"},
            {"name": "y", "command": "lscpu", "file": "/etc/passwd", "kind": "lscpu"},
        ],
        "files": [{"path": "proc/../../../etc/shadow", "kind": "meminfo"}, "junk", {"path": 5}],
    }
    p = d / "outside.tar.gz"
    p.write_bytes(_manifest_tar(json.dumps(manifest).encode(), []))
    return Case(p, error="manifest entry", forbidden=(PASSWD_MARK,))


def case_manifest_deeply_nested(d: Path) -> Case:
    p = d / "deep.tar.gz"
    p.write_bytes(_manifest_tar(b"[" * 200_000 + b"]" * 200_000, []))
    return Case(p, error="manifest")


def case_manifest_too_large(d: Path) -> Case:
    p = d / "hugemanifest.tar.gz"
    big = json.dumps({"commands": [], "pad": "x" * (5 * MiB)}).encode()
    p.write_bytes(_manifest_tar(big, []))
    return Case(p, error="exceeds the artifact limit")


def case_zip(d: Path) -> Case:
    import zipfile

    p = d / "upload.zip"
    with zipfile.ZipFile(p, "w") as z:
        z.writestr("lscpu.txt", LSCPU)
    return Case(p, error="not supported")


def case_deep_xml(d: Path) -> Case:
    p = d / "deep.xml"
    p.write_text("<domain type='kvm'>" + "<a>" * 100_000 + "</a>" * 100_000 + "</domain>")
    return Case(p, error="")


def case_member_over_artifact_limit(d: Path) -> Case:
    p = d / "bigmember.tar.gz"
    body = b"MemTotal: 1 kB\n" * (2 * MiB // 15 + 1)
    p.write_bytes(gzip.compress(_tar_bytes([_reg("proc/meminfo", body)])))
    return Case(p, error="artifact limit", limits=Limits(artifact_bytes=MiB))


def case_missing_path(d: Path) -> Case:
    return Case(d / "does-not-exist.tar.gz", error="cannot read")


def case_many_prompts_no_output(d: Path) -> Case:
    p = d / "prompts.txt"
    p.write_text("".join(f"[root@h{i % 7} ~]# true {i}\n" for i in range(5_000)))

    def check(h: HostFacts) -> None:
        assert h.hostname == "h0"

    return Case(p, error="no recognisable", check=check)


CASES = [
    case_gzip_bomb,
    case_tar_gz_ratio_bomb,
    case_tar_gz_unpacked_limit,
    case_xz_bomb,
    case_bz2_bomb,
    case_sparse_member,
    case_too_many_members,
    case_traversal,
    case_absolute_member,
    case_symlink_member,
    case_hardlink_member,
    case_device_members,
    case_truncated_gzip,
    case_truncated_tar,
    case_truncated_xz,
    case_nested_archive,
    case_billion_laughs,
    case_external_entity,
    case_dtd,
    case_single_20mb_line,
    case_nul_bytes,
    case_gb18030,
    case_mixed_encodings,
    case_utf16,
    case_empty_file,
    case_empty_tar,
    case_empty_tar_gz,
    case_random_bytes,
    case_random_after_gzip_magic,
    case_directory_with_links_and_fifo,
    case_very_long_member_name,
    case_pax_header_bomb,
    case_manifest_invalid_json,
    case_manifest_points_outside,
    case_manifest_deeply_nested,
    case_manifest_too_large,
    case_zip,
    case_deep_xml,
    case_member_over_artifact_limit,
    case_missing_path,
    case_many_prompts_no_output,
]


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = Path(dirpath) / name
            st = os.lstat(full)
            out[str(full.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return out


@pytest.mark.parametrize("make", CASES, ids=[c.__name__.removeprefix("case_") for c in CASES])
def test_hostile_input(make, tmp_path, monkeypatch):
    source = tmp_path / "in"
    source.mkdir()
    case = make(source)
    # a traversal that escaped would land in tmp_path/etc/x or tmp_path/x
    work = tmp_path / "work" / "deep"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    before = _tree(tmp_path)
    passwd_before = os.stat("/etc/passwd").st_mtime_ns

    tracemalloc.start()
    try:
        host = load(case.path, limits=case.limits, split=False).host
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert isinstance(host, HostFacts)
    assert Path.cwd() == work
    assert _tree(tmp_path) == before, "loading wrote to disk"
    assert os.stat("/etc/passwd").st_mtime_ns == passwd_before
    assert peak < PEAK_LIMIT, f"peak memory {peak / MiB:.0f} MiB"
    if case.error is not None:
        messages = [e.message for e in host.errors]
        assert messages, "expected a per-artifact error"
        assert any(case.error in m for m in messages), messages
        assert all(e.artifact for e in host.errors)
    dumped = json.dumps(to_dict(host), ensure_ascii=False)
    for needle in case.forbidden:
        assert needle not in dumped
    if case.check:
        case.check(host)


def test_at_least_thirty_cases():
    assert len(CASES) >= 30


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x1f\x8b",
        b"\xfd7zXZ\x00",
        b"BZh9",
        b"\0" * 1024,
        b"ustar" * 200,
        random.Random(2).randbytes(600),
    ],
    ids=["empty", "gzip-magic", "xz-magic", "bz2-magic", "zero-blocks", "ustar-text", "random"],
)
def test_hostile_bytes(data):
    host = load(data, name="../../upload", split=False).host
    assert isinstance(host, HostFacts)
    assert host.errors
    assert all(not e.artifact.startswith("..") for e in host.errors)


# --------------------------------------------------------------------------- worker RSS


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("random.bin", "binary content"),
        ("minified.json", "only the first"),
        ("app-zh.log", "only the first"),
        ("many-members.tar.gz", "members"),
    ],
)
def test_worker_rss_stays_bounded(name, expected, tmp_path):
    """A real process loads the upload (as the Celery worker's task does) and
    reports its peak RSS growth: below +128 MB for each input of the
    reliability test (it measured +834, +240, +193 and +92 MB). The inputs
    and the probe are bench/memory.py's."""
    from bench import memory

    path = tmp_path / name
    memory.INPUTS[name](path)
    grew_mb, messages = memory.measure(path)
    assert grew_mb < 128, (name, grew_mb, messages)
    assert any(expected in m for m in messages), messages
