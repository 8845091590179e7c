"""Upload bytes -> text: BOMs, UTF-8, GB18030, mixed lines, latin-1, line ends, NULs."""

from __future__ import annotations

import codecs
import random
from pathlib import Path

import pytest

from collectors.decoding import decode_bytes

CHINESE = "物理机 NUMA 信息：node 0 size: 32722 MB\n"


@pytest.mark.parametrize(
    ("data", "encoding"),
    [
        (CHINESE.encode(), "utf-8"),
        (codecs.BOM_UTF8 + CHINESE.encode(), "utf-8-sig"),
        (CHINESE.encode("gb18030"), "gb18030"),
        (codecs.BOM_UTF16_LE + CHINESE.encode("utf-16-le"), "utf-16"),
        (codecs.BOM_UTF16_BE + CHINESE.encode("utf-16-be"), "utf-16"),
        ("node 0 size: 32722 MB\n".encode("utf-16-le"), "utf-16"),  # no BOM
    ],
)
def test_encodings(data, encoding):
    decoded = decode_bytes(data)
    assert decoded.encoding == encoding
    assert "node 0 size: 32722 MB" in decoded.text
    assert not decoded.binary


def test_mixed_lines_keep_both_scripts():
    data = "第一行\n".encode() + "第二行\n".encode("gb18030") + b"caf\xe9\n"
    decoded = decode_bytes(data)
    assert decoded.encoding == "mixed"
    assert decoded.text.splitlines() == ["第一行", "第二行", "café"]


def test_line_ends_and_nul_bytes():
    decoded = decode_bytes(b"a\r\nb\rc\x00\x00\n\td")
    assert decoded.text == "a\nb\nc\n\td"
    assert decoded.nul_bytes == 2 and not decoded.binary


def test_binary_is_flagged():
    assert decode_bytes(random.Random(0).randbytes(4096)).binary
    assert decode_bytes(b"\x00" * 100 + b"x").binary
    assert not decode_bytes(b"").binary


def test_input_text_reads_files_and_directories_up_to_the_limit(tmp_path):
    from collectors.decoding import input_text

    (tmp_path / "host").mkdir()
    (tmp_path / "host" / "a.txt").write_bytes("节点22C，cpu_quota_concurrency 默认 4".encode("gb18030"))
    (tmp_path / "b.txt").write_text("second file\n", encoding="utf-8")
    text = input_text([tmp_path / "host", tmp_path / "b.txt", tmp_path / "missing"])
    assert text == "节点22C，cpu_quota_concurrency 默认 4\nsecond file\n"
    assert input_text([tmp_path / "b.txt"], limit=6) == "second"


def test_binary_is_told_from_the_first_bytes():
    from collectors.decoding import BINARY_PROBE_BYTES, looks_binary

    elf = Path("/bin/ls").read_bytes()  # this machine's own binary
    assert looks_binary(elf[:BINARY_PROBE_BYTES])
    text = Path("/proc/meminfo").read_bytes()
    assert not looks_binary(text)
    assert not looks_binary("节点 0 内存不足\n".encode("gb18030") * 100)


def test_long_lines_are_cut_before_decoding():
    from collectors.decoding import MAX_LINE_CHARS

    data = b"start\n" + b"x" * (3 * MAX_LINE_CHARS) + b"\nnode 0 size: 1 MB\n" + b"y" * (MAX_LINE_CHARS + 5)
    decoded = decode_bytes(data)
    assert decoded.long_lines == 2
    lines = decoded.text.split("\n")
    assert lines[0] == "start" and lines[2] == "node 0 size: 1 MB"
    assert len(lines[1]) == MAX_LINE_CHARS and len(lines[3]) == MAX_LINE_CHARS
    buffer = bytearray(data)
    assert decode_bytes(buffer).long_lines == 2  # a bytearray is cut in place
    assert len(buffer) == len(decoded.text.encode())


def test_lines_just_under_the_cap_are_kept():
    # The search for long lines is anchored at line starts: lines of a
    # million characters are each scanned once (unanchored, this never ends).
    from collectors.decoding import MAX_LINE_CHARS

    data = (b"z" * MAX_LINE_CHARS + b"\n") * 8
    decoded = decode_bytes(data)
    assert decoded.long_lines == 0 and decoded.text.encode() == data
