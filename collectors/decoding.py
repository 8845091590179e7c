"""Bytes from an upload -> text the parsers can read.

Engineers paste artifacts from Chinese and English systems, Windows editors and
terminals, so the order is: a BOM when there is one (UTF-8, UTF-16), then strict
UTF-8, then strict GB18030, then latin-1 (which maps every byte, so decoding never
fails). A file mixing UTF-8 and GB18030 lines is decoded line by line. Line ends
are normalised to ``\\n`` and NUL bytes are stripped (and counted, so the caller can
tell the user). Tabs are kept: parsers split on any whitespace.

Bounded work: whether an upload is binary is known from its first
``BINARY_PROBE_BYTES`` (:func:`looks_binary`), before the rest is read, and a
line longer than ``MAX_LINE_CHARS`` is cut there (no command output has one;
a 60 MB single line otherwise costs every regex that reads the text).
"""

from __future__ import annotations

import codecs
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")
BINARY_PROBE_BYTES = 64 << 10
MAX_LINE_CHARS = 1 << 20
# A line longer than MAX_LINE_CHARS: the first line, or a newline and the line
# after it (a pattern that starts with a literal is searched for at C speed).
# Anchored at line starts, so each line is scanned once (linear, whatever the
# line lengths).
_LONG_FIRST_LINE = re.compile(rb"[^\n]{" + str(MAX_LINE_CHARS + 1).encode() + rb",}")
_LONG_NEXT_LINE = re.compile(rb"\n[^\n]{" + str(MAX_LINE_CHARS + 1).encode() + rb",}")


@dataclass
class Decoded:
    text: str
    encoding: str  # "utf-8", "utf-8-sig", "utf-16", "gb18030", "mixed", "latin-1"
    nul_bytes: int = 0  # NUL bytes removed
    binary: bool = False  # looks like binary data rather than text
    long_lines: int = 0  # lines cut at MAX_LINE_CHARS


def _utf16_without_bom(data: bytes | bytearray) -> str | None:
    """``utf-16-le``/``-be`` when every other byte of the head is NUL (Windows
    tools write UTF-16 without a BOM now and then)."""
    head = data[:4096]
    if len(head) < 8:
        return None
    even_nul = head[0::2].count(0) / len(head[0::2])
    odd_nul = head[1::2].count(0) / len(head[1::2])
    if odd_nul > 0.9 and even_nul < 0.1:
        return "utf-16-le"
    if even_nul > 0.9 and odd_nul < 0.1:
        return "utf-16-be"
    return None


def _decode_lines(data: bytes | bytearray) -> str:
    out = []
    for line in data.split(b"\n"):
        for enc in ("utf-8", "gb18030"):
            try:
                out.append(line.decode(enc))
                break
            except UnicodeDecodeError:
                continue
        else:
            out.append(line.decode("latin-1"))
    return "\n".join(out)


def decode_bytes(data: bytes | bytearray) -> Decoded:
    """Decode ``data`` (never raises).

    >>> decode_bytes(b"\\xef\\xbb\\xbfnode 0 size: 1 MB\\r\\n").text
    'node 0 size: 1 MB\\n'
    """
    long_lines = 0
    found = _decoded_as_utf16_or_by_bom(data)
    if found is None:
        data, long_lines = _cut_long_lines(data)
        found = _decoded_by_trying(data)
    text, encoding = found
    nul = text.count("\x00")
    if nul:
        text = text.replace("\x00", "")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    binary = _looks_binary(text, nul, len(data))
    return Decoded(text=text, encoding=encoding, nul_bytes=nul, binary=binary, long_lines=long_lines)


def _decoded_as_utf16_or_by_bom(data: bytes | bytearray) -> tuple[str, str] | None:
    """``(text, encoding)`` of ``data`` when a BOM names its encoding or its NUL
    bytes show UTF-16 without one; else None."""
    if data.startswith(codecs.BOM_UTF8):
        return data[3:].decode("utf-8", errors="replace"), "utf-8-sig"
    if data.startswith(_UTF16_BOMS):
        return data.decode("utf-16", errors="replace"), "utf-16"
    guessed = _utf16_without_bom(data)
    if guessed:
        return data.decode(guessed, errors="replace"), "utf-16"
    return None


def _decoded_by_trying(data: bytes | bytearray) -> tuple[str, str]:
    """``(text, encoding)`` of ``data`` as strict UTF-8, else strict GB18030,
    else line by line (``"mixed"``)."""
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("gb18030"), "gb18030"
    except UnicodeDecodeError:
        # Per-line fallback is slower, so only files that are neither
        # pure UTF-8 nor pure GB18030 pay for it.
        return _decode_lines(data), "mixed"


def _cut_long_lines(data: bytes | bytearray) -> tuple[bytes | bytearray, int]:
    """Lines longer than MAX_LINE_CHARS bytes cut to it, before decoding (so a
    60 MB line is never a 60 MB string). A bytearray is cut in place; bytes
    are copied only when there is a line to cut. (UTF-16 text, recognised
    earlier, is not cut: its bytes are not lines.)"""
    if len(data) <= MAX_LINE_CHARS:
        return data, 0
    first = _LONG_FIRST_LINE.match(data)
    spans = [first.span()] if first else []
    spans += [(m.start() + 1, m.end()) for m in _LONG_NEXT_LINE.finditer(data)]
    if not spans:
        return data, 0
    buf = data if isinstance(data, bytearray) else bytearray(data)
    for start, end in reversed(spans):
        del buf[start + MAX_LINE_CHARS : end]
    return buf, len(spans)


def looks_binary(head: bytes | bytearray) -> bool:
    """Whether an upload whose first bytes are ``head`` is binary, by the same
    test ``decode_bytes`` applies, on the first BINARY_PROBE_BYTES only: a
    60 MB binary file is refused without being read, let alone decoded.

    >>> looks_binary(b"node 0 size: 1 MB\\n"), looks_binary(bytes(range(256)) * 64)
    (False, True)
    """
    return decode_bytes(bytes(head[:BINARY_PROBE_BYTES])).binary


def _looks_binary(text: str, nul: int, size: int) -> bool:
    if nul > max(16, size * 0.05):  # a few stray NULs in a paste are not binary
        return True
    head = text[:65536]
    if not head:
        return False
    controls = len(_CONTROL.findall(head))
    replacement = head.count("\ufffd")
    return (controls + replacement) / len(head) > 0.05


def input_text(paths: Iterable[str | os.PathLike[str]], limit: int = 8000) -> str:
    """The decoded text of the regular files among ``paths`` (directories are
    walked), at most ``limit`` characters in all: what a prose-only snapshot
    says, to match it against cases by text."""
    parts: list[str] = []
    left = limit
    for path in _files_in(paths):
        if left <= 0:
            break
        with open(path, "rb") as fh:
            decoded = decode_bytes(fh.read(left * 4))
        if not decoded.binary:
            parts.append(decoded.text[:left])
            left -= len(parts[-1])
    return "\n".join(parts)


def _files_in(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The regular files among ``paths``, a directory's (walked, sorted) in its place."""
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files += sorted(q for q in p.rglob("*") if q.is_file())
        elif p.is_file():
            files.append(p)
    return files
