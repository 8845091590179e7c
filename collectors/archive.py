"""Open an upload safely and turn it into :class:`HostFacts`.

Four inputs are accepted, told apart by content (magic bytes), not by name:

* a collector tarball from ``collectors/collect.sh``: ``manifest.json`` at the
  top or one directory down maps each file to a parser kind;
* a sosreport (``.tar.xz``/``.tar.gz``): members are mapped by the parsers'
  ``paths`` regexes (``sos_commands/processor/lscpu``, ``proc/meminfo`` ...),
  helped by ``sos_reports/manifest.json`` when present;
* a transcript (``.txt``/``.md``/``.log`` or pasted text), split into blocks by
  :mod:`collectors.transcript`;
* a single artifact (a domain XML, a mysqld error log, SHOW GLOBAL VARIABLES):
  a text recognised as one artifact is parsed as that artifact.

Uploads are untrusted. Archives are streamed member by member and never
extracted; nothing is written to disk. Members with absolute paths, ``..``,
links, devices or FIFOs are skipped and reported. The decompressed size is
bounded (total and by compression ratio), as are the member count and the size
of one artifact; past a limit, reading stops with an error and what was parsed
so far is kept. Truncated or corrupt archives give an error, never an exception.
Nested archives are reported, not opened. Only members that map to a parser (or
shallow members that may be a collector's command output) are read at all:
a sosreport has thousands of files we skip without copying them.
"""

from __future__ import annotations

import bisect
import bz2
import gzip
import io
import json
import logging
import lzma
import os
import re
import stat
import tarfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

from collectors import facts as f
from collectors import parsers
from collectors.assemble import NOT_PARSED, HostAssembler, artifact_parse_budget, run_parser
from collectors.decoding import BINARY_PROBE_BYTES, MAX_LINE_CHARS, Decoded, decode_bytes, looks_binary
from collectors.limits import Limits, MiB
from collectors.machines import Boundary, machine_boundaries, repeats_output, split_repeated_outputs
from collectors.normalise import LOG_PREFIXES, UNBOLDED, normalise
from collectors.numbers import whole
from collectors.transcript import (
    PROMPT,
    PROSE,
    READ,
    UNRECOGNISED,
    UNUSED,
    Block,
    Split,
    command_failure,
    detect_kind,
    ensure_parsers,
    host_key,
    kind_for_command,
    kind_for_path,
    match_prompt,
    read_transcript,
    same_host,
)

log = logging.getLogger(__name__)

__all__ = ["Limits", "LoadedUpload", "WorkBudgetExceeded", "load", "load_snapshot"]

MAX_ERRORS = 200  # per host; a hostile archive could otherwise produce 20,000
MAX_BLOCKS = 5_000  # outputs parsed per transcript (a real session has tens)
MAX_UNUSED_BLOCKS = 500  # unused outputs listed per host (all are counted in unused_lines)
MAX_NAME = 1024
MANIFEST_MAX = 4 * MiB
PENDING_MEMBER_MAX = 8 * MiB
_ARCHIVE_SUFFIX = re.compile(r"\.(tar|tgz|tbz2?|txz|gz|xz|bz2|zst|zip|7z|rar|lz4|lzma)$", re.I)
# top-level sosreport directories whose files are only read when a parser maps them
_BULK_DIRS = frozenset(
    [
        "sos_commands",
        "proc",
        "sys",
        "etc",
        "var",
        "usr",
        "lib",
        "lib64",
        "run",
        "boot",
        "dev",
        "opt",
        "sos_logs",
        "sos_reports",
        "sos_strings",
    ]
)
_NODE_IN_PATH = re.compile(r"node(\d+)/[^/]+$")


# ``cat /sys/block/sda/queue/scheduler``: the command names the one device its bare value is of
_ONE_SCHEDULER_FILE = re.compile(
    r"^\S*(?:cat|head|tail)\s+(?:-\S+\s+)*/sys/block/([\w.\-]+)/queue/scheduler\s*$"
)

# a grep of /proc/interrupts by one word: "cat /proc/interrupts | grep ens192",
# "grep -i 'eth0' /proc/interrupts" (options before the word; -v keeps the others)
_INTERRUPTS_GREP = re.compile(
    r"(?:^|\|)\s*(?:e|f)?grep\s+(?P<opts>(?:-[a-zA-Z]+\s+)*)['\"]?(?P<word>[\w.\-]{1,64})['\"]?"
    r"(?:\s+/proc/interrupts)?\s*$"
)


def _named_by_command(block: Block) -> dict[str, Any]:
    """What a block's command line says that its output does not: the device
    of a lone ``/sys/block/<dev>/queue/scheduler`` value, the word a grep of
    /proc/interrupts kept rows of (``cat /proc/interrupts | grep ens192``).

    >>> _named_by_command(Block("cat /proc/interrupts | grep ens192", "", 1, 1, kind="interrupts_grep"))
    {'grep': 'ens192'}
    >>> _named_by_command(Block("grep -v eth0 /proc/interrupts", "", 1, 1, kind="interrupts_grep"))
    {}
    """
    if not block.command:
        return {}
    if block.kind == "interrupts_grep":
        return _grep_word(block.command.strip())
    if block.kind != "io_scheduler":
        return {}
    m = _ONE_SCHEDULER_FILE.match(block.command.strip())
    return {"device": m.group(1)} if m else {}


def _grep_word(command: str) -> dict[str, Any]:
    """``{"grep": word}`` of a grep of /proc/interrupts that keeps the rows holding ``word``."""
    m = _INTERRUPTS_GREP.search(command)
    return {"grep": m.group("word")} if m and "v" not in m.group("opts") else {}


class _LimitExceeded(Exception):
    pass


# the first bytes of a compressed file or archive -> its format
_MAGIC: tuple[tuple[bytes | tuple[bytes, ...], str], ...] = (
    (b"\x1f\x8b", "gzip"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"BZh", "bzip2"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    ((b"PK\x03\x04", b"PK\x05\x06"), "zip"),
    (b"7z\xbc\xaf\x27\x1c", "7z"),
    (b"Rar!", "rar"),
)


def _magic(head: bytes | bytearray) -> str:
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if _is_tar_header(head) or (len(head) == 512 and not head.strip(b"\0")):
        return "tar"  # a header, or the zero blocks of an empty tar
    return "text"


def _is_tar_header(block: bytes | bytearray) -> bool:
    if len(block) < 512:
        return False
    if block[257:262] == b"ustar":
        return True
    try:
        tarfile.TarInfo.frombuf(block[:512], "utf-8", "surrogateescape")
        return True
    except (tarfile.HeaderError, ValueError):
        return False


class _CountingReader(io.RawIOBase):
    """Reads a (decompressed) stream, raising once more than ``budget`` bytes
    came out of it: this is what stops a zip bomb, whether we read a member or
    tarfile skips over one."""

    def __init__(self, stream: IO[bytes] | io.BufferedIOBase, budget: int, prefix: bytes = b""):
        self.stream = stream
        self.budget = budget
        self.prefix = prefix
        self.count = 0

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            n = 1 << 20
        if self.prefix:
            data, self.prefix = self.prefix[:n], self.prefix[n:]
        else:
            data = self.stream.read(n)
        self.count += len(data)
        if self.count > self.budget:
            raise _LimitExceeded(f"archive expands to more than {self.budget} bytes")
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


class _SafeTarInfo(tarfile.TarInfo):
    """Refuses oversized pax / GNU long-name headers, which tarfile would
    otherwise read into memory whole."""

    def _proc_pax(self, tarfile_: tarfile.TarFile) -> tarfile.TarInfo:
        if self.size > MiB:
            raise tarfile.HeaderError(f"pax header of {self.size} bytes")
        return super()._proc_pax(tarfile_)  # type: ignore[misc,no-any-return]  # private in typeshed

    def _proc_gnulong(self, tarfile_: tarfile.TarFile) -> tarfile.TarInfo:
        if self.size > 64 * 1024:
            raise tarfile.HeaderError(f"GNU long name of {self.size} bytes")
        return super()._proc_gnulong(tarfile_)  # type: ignore[misc,no-any-return]  # private in typeshed


@dataclass
class _ManifestEntry:
    kind: str | None
    command: str | None = None
    exit_code: int | None = None

    def failed_silently(self, data: bytes | bytearray) -> bool:
        """Whether ``data``, the entry's output, is empty and its command said it failed."""
        return self.exit_code not in (None, 0) and not data.strip()


# what a member name holds that needs its parts split and checked
_NAME_TO_NORMALISE = re.compile(r"\.\.|\\|//|\./")
# a member only a sosreport holds: a command output, or its sos_reports/ directory
_SOS_MEMBER = re.compile(r"sos_commands/|(?:^|/)sos_reports/")


def _cannot_read(exc: OSError) -> str:
    """The error of a file or member the system would not read: the system's reason."""
    return f"cannot read: {exc.strerror or type(exc).__name__}"


def _clean_member_name(name: str) -> tuple[str | None, str | None]:
    """``(normalised name, None)`` or ``(None, reason to skip)``."""
    why = _unsafe_name(name)
    if why is not None:
        return None, why
    if not _NAME_TO_NORMALISE.search(name):
        name = name.rstrip("/")
        return (name, None) if name else (None, "empty member name")
    parts = [p for p in re.split(r"[\\/]+", name) if p not in ("", ".")]
    if ".." in parts:
        return None, "member path contains '..'"
    if not parts:
        return None, "empty member name"
    return "/".join(parts), None


def _unsafe_name(name: str) -> str | None:
    """Why a member name is refused before it is read: too long, a NUL, absolute."""
    if len(name) > MAX_NAME:
        return "member name too long"
    if "\x00" in name:
        return "member name contains NUL"
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[\\/]", name):
        return "absolute member path"
    return None


def _safe_label(name: str) -> str:
    """A name for messages: printable, bounded."""
    cleaned = name if name.isprintable() else "".join(c if c.isprintable() else "?" for c in name)
    return cleaned if len(cleaned) <= 200 else cleaned[:197] + "..."


def _one_artifact(split: Split, kind: str, text: str) -> bool:
    """Whether a text file detected as ``kind`` is one artifact (a domain XML,
    an error log), parsed whole so that a parser sees all of it, rather than
    several pasted one after the other (parsed block by block)."""
    # (a command quoted alone on its line, without a prompt, does not make the text a session)
    kinds = {
        b.kind for b in split.blocks if b.kind and not b.prose and (b.command is None or b.prompt is None)
    }
    # Output lines that Markdown bold wrapped, or a logger prefixed, are only clean in the split.
    cleaned = any(note == UNBOLDED or note.endswith(LOG_PREFIXES) for note in split.notes)
    # ... and two outputs of one whole-machine command are two machines
    return not (kinds - {kind}) and not cleaned and not repeats_output(kind, text)


class WorkBudgetExceeded(Exception):
    """The upload asks for more work than :class:`Limits` allows (outputs
    parsed, domain XMLs). Raised while reading and caught by :func:`load`,
    which stops reading and says so in :attr:`LoadedUpload.over_budget`."""


# The work each budget counts: (Limits field, the parser kind it counts, or
# None for every parse; what it counts, for the reason; its setting).
_BUDGETS = (
    ("domains", "libvirt_domain", "libvirt domain XMLs", "CASEBOOK_MAX_DOMAINS"),
    ("parsed_artifacts", None, "command outputs and files to parse", "CASEBOOK_MAX_PARSED_ARTIFACTS"),
)


def _count_reading(assemblers: list[HostAssembler], starts: list[int], roles: bytearray) -> None:
    """Each machine's lines of a transcript counted by what they were read as."""
    bounds = [*starts[1:], len(roles)]
    for asm, a, b in zip(assemblers, starts, bounds, strict=True):
        reading = asm.host.reading
        reading.lines += b - a
        chunk = roles[a:b]
        reading.read_lines += chunk.count(READ)
        reading.prompt_lines += chunk.count(PROMPT)
        reading.prose_lines += chunk.count(PROSE)
        reading.unrecognised_lines += chunk.count(UNRECOGNISED)
        reading.unused_lines += chunk.count(UNUSED)


def _list_unread(name: str, split: Split, assemblers: list[HostAssembler], starts: list[int]) -> None:
    """The unused and the unrecognised blocks of a transcript, each under its
    machine (at most MAX_UNUSED_BLOCKS unused ones, then a line saying there are more)."""
    for start, end, what in split.unused:
        unused = assemblers[bisect.bisect_right(starts, start - 1) - 1].host.reading.unused
        if len(unused) < MAX_UNUSED_BLOCKS:
            unused.append(f.UnusedBlock(start_line=start, end_line=end, what=what, name=name))
        elif len(unused) == MAX_UNUSED_BLOCKS:
            more = "(more, not listed)"
            unused.append(f.UnusedBlock(start_line=start, end_line=end, what=more, name=name))
    for start, end, first in split.unrecognised:
        asm = assemblers[bisect.bisect_right(starts, start - 1) - 1]
        asm.host.reading.unrecognised.append(
            f.UnrecognisedBlock(start_line=start, end_line=end, first_line=first, name=name)
        )


class _Loader:
    def __init__(self, *, label: str, limits: Limits | None, split_hosts: bool = False):
        ensure_parsers()
        self.limits = limits or Limits.from_settings()
        self.asm = HostAssembler(label=label)
        self._errors_dropped = 0
        self._hostname: str | None = None
        # with split_hosts, a transcript whose prompts name other hosts
        # ("[root@guest ~]#" after "ssh guest") gives one more host each
        self.split_hosts = split_hosts
        self.main = self.asm
        self.extra: list[tuple[str, HostAssembler]] = []
        self._extra_by_name: dict[str, HostAssembler] = {}  # host_key -> the first such host
        # what was kept of each file read (cited lines, prose, archive kind)
        self.files: list[UploadFile] = []
        self._file: UploadFile | None = None
        self._machines = 1  # machines counted so far, for the labels of split-off ones
        self._boundaries: dict[int, Boundary] = {}  # first line (0-based) -> why a machine starts there
        # parses charged to each budget of _BUDGETS, over every file of the upload
        self._spent: dict[str, int] = dict.fromkeys((name for name, *_ in _BUDGETS), 0)
        self.over_budget = ""

    # ------------------------------------------------------------------ bookkeeping
    def error(self, artifact: str, message: str, line: int | None = None) -> None:
        if len(self.asm.host.errors) >= MAX_ERRORS:
            self._errors_dropped += 1
            return
        self.asm.error(_safe_label(artifact), message, line)

    def finish(self) -> f.HostFacts:
        return self.finish_all()[0]

    def finish_all(self) -> list[f.HostFacts]:
        self.asm = self.main
        if self._errors_dropped:
            self.asm.host.errors.append(
                f.ArtifactError("(upload)", f"{self._errors_dropped} more errors not listed")
            )
        hosts = [self.main.finish(hostname=self._hostname)]
        hosts.extend(asm.finish(hostname=name or None) for name, asm in self.extra)
        return hosts

    def charge(self, kind: str | None) -> None:
        """Count one parse of ``kind`` against the upload's work budgets;
        :class:`WorkBudgetExceeded` when it is one more than a budget allows."""
        for name, counted, what, setting in _BUDGETS:
            if counted is not None and counted != kind:
                continue
            self._spent[name] += 1
            limit = getattr(self.limits, name)
            if self._spent[name] > limit:
                raise WorkBudgetExceeded(
                    f"over the work budget: more than {limit:,} {what} in one upload "
                    f"({setting}); reading stopped there and nothing was analysed"
                )

    def stop_over_budget(self, name: str, exc: WorkBudgetExceeded) -> None:
        """Record why reading stopped (once, whichever file it stopped in)."""
        if not self.over_budget:
            self.over_budget = str(exc)
            self.main.error(_safe_label(name), str(exc))

    # ------------------------------------------------------------------ reading record
    def read_whole(
        self, name: str, kind: str | None, lines: int, *, parsed: bool, member: bool, prose: int = 0
    ) -> None:
        """A file or member read as one artifact: all its lines are read, but
        ``prose`` lines (prose before and after the output, see :func:`_prose_margins`)."""
        reading = self.asm.host.reading
        reading.lines += lines
        reading.read_lines += lines - prose
        reading.prose_lines += prose
        reading.artifacts.append(
            f.ReadArtifact(
                kind=kind,
                start_line=0 if member else 1,
                end_line=0 if member else lines,
                parsed=parsed,
                name=name,
            )
        )

    def read_unrecognised(self, name: str, text: str, lines: int, *, member: bool) -> None:
        reading = self.asm.host.reading
        reading.lines += lines
        reading.unrecognised_lines += lines
        first = next((line.strip() for line in text.split("\n", 50) if line.strip()), "")
        reading.unrecognised.append(
            f.UnrecognisedBlock(
                start_line=0 if member else 1,
                end_line=0 if member else lines,
                first_line=first[:200],
                name=name,
            )
        )

    def note_member(self, raw_name: str) -> None:
        """What the archive is, from one of its first members (:func:`member_kind`)."""
        if self._file is not None and self._file.archive_kind is None:
            self._file.archive_kind = member_kind(raw_name)

    def host_for(self, host: str | None, first: str | None) -> HostAssembler:
        """The assembler of the host a prompt named: the loaded host when it is
        the transcript's first host (or splitting is off), else one per name."""
        if not self.split_hosts or not host or first is None or same_host(host, first):
            return self.main
        key = host_key(host)
        asm = self._extra_by_name.get(key)
        if asm is None:
            asm = self._extra_by_name[key] = HostAssembler(label=host)
            self.extra.append((host, asm))
        return asm

    def machine_segments(self, split: Split, text: str = "") -> list[tuple[int, str | None, str | None]]:
        """The transcript's segments ``(start, host, None)``, with one more
        ``(start, label, reason)`` where a block shows another machine than the
        one before it without a prompt naming it (:mod:`collectors.machines`)."""
        segments: list[tuple[int, str | None, str | None]] = [(a, h, None) for a, h in split.segments]
        if not self.split_hosts:
            return segments
        starts = [start for start, _host in split.segments]
        lines = text.split("\n") if text else None
        hosts = [host for _start, host in split.segments]
        for boundary in machine_boundaries(
            split.blocks, starts, split.parsed, lines=lines, segment_hosts=hosts
        ):
            self._machines += 1
            base = self.main.host.label or "paste"
            label = f"{base}: machine {self._machines} (line {boundary.line})"
            segments.append((boundary.start, label, boundary.reason))
            self._boundaries[boundary.start] = boundary
        segments.sort(key=lambda s: s[0])
        return segments

    def new_machine(self, label: str | None, reason: str | None, start: int) -> HostAssembler:
        """A machine the loader split off a paste (no prompt named it); the
        host its blocks inherit from the prompts before it is not its name."""
        boundary = self._boundaries.get(start)
        hostname = boundary.hostname if boundary else None
        asm = HostAssembler(label=hostname or label or "")
        asm.host.split_reason = reason
        if boundary is not None and boundary.previous:
            asm.not_named.add(boundary.previous.strip())
        self.extra.append((hostname or "", asm))
        return asm

    # ------------------------------------------------------------------ entry points
    def load_path(self, path: Path) -> None:
        try:
            st = os.lstat(path)
        except OSError as exc:
            self.error(path.name or str(path), _cannot_read(exc))
            return
        if stat.S_ISDIR(st.st_mode):
            self.load_directory(path)
        elif stat.S_ISREG(st.st_mode):
            self.load_file(path, path.name, st.st_size)
        elif stat.S_ISLNK(st.st_mode):
            self.error(path.name, "symbolic link not followed")
        else:
            self.error(path.name, "not a regular file")

    def load_directory(self, root: Path) -> None:
        total = 0
        for count, (full, rel) in enumerate(self.directory_files(root), 1):
            if count > self.limits.members:
                self.error(str(root.name), f"more than {self.limits.members} files; the rest was not read")
                return
            size = self.regular_size(full, rel)
            if size is None:
                continue
            total += size
            if total > self.limits.unpacked_bytes:
                self.error(str(root.name), "directory larger than the unpacked limit; the rest was not read")
                return
            self.load_file(full, rel, size)

    def directory_files(self, root: Path) -> Iterator[tuple[Path, str]]:
        """(path, path relative to ``root``) of every file under ``root``, in
        sorted order; a linked directory is reported, not followed."""
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames.sort()
            base = Path(dirpath)
            for d in list(dirnames):
                if (base / d).is_symlink():
                    self.error(str((base / d).relative_to(root)), "symbolic link not followed")
                    dirnames.remove(d)
            for name in sorted(filenames):
                full = base / name
                yield full, full.relative_to(root).as_posix()

    def regular_size(self, full: Path, rel: str) -> int | None:
        """The size of a regular file; None (reported) for a link, a device, a
        FIFO, a socket or a file that cannot be read."""
        try:
            st = os.lstat(full)
        except OSError as exc:
            self.error(rel, _cannot_read(exc))
            return None
        if stat.S_ISLNK(st.st_mode):
            self.error(rel, "symbolic link not followed")
            return None
        if not stat.S_ISREG(st.st_mode):
            self.error(rel, "not a regular file (device, FIFO or socket) skipped")
            return None
        return st.st_size

    def load_file(self, path: Path, name: str, size: int) -> None:
        if size > self.limits.upload_bytes:
            self.error(name, f"file of {size} bytes exceeds the upload limit ({self.limits.upload_bytes})")
            return
        try:
            # O_NOFOLLOW: the file may have been swapped for a link since lstat
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        except OSError as exc:
            self.error(name, _cannot_read(exc))
            return
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                self.error(name, "not a regular file")
                return
            self.load_stream(fh, name, size)

    def begin_file(self, name: str) -> None:
        """What is kept from here on is kept for this file of the upload."""
        self._file = UploadFile(name=name)
        self.files.append(self._file)

    def load_stream(self, fh: IO[bytes], name: str, size: int) -> None:
        try:
            head = fh.read(512)
        except OSError as exc:
            self.error(name, _cannot_read(exc))
            return
        kind = _magic(head)
        if kind in ("zstd", "zip", "7z", "rar"):
            self.error(name, f"{kind} archives are not supported; upload a .tar.gz, .tar.xz or .tar")
            return
        if kind == "text":
            self.load_text(fh, name, head, size)
            return
        budget = self.limits.unpacked_budget(size)
        if kind == "tar":
            reader = _CountingReader(fh, max(budget, size + MiB), prefix=head)
            self.load_tar(reader, name)
            return
        self.load_compressed(fh, name, kind, budget)

    def load_text(self, fh: IO[bytes], name: str, head: bytes, size: int) -> None:
        """A text upload: its head kept for the report, then read as one file."""
        path_kind = kind_for_path(name)
        data = self._read_text(fh, name, head, known_kind=path_kind is not None)
        if data is None:
            return
        if self._file is not None:
            self._file.keep_head(data, whole=size <= self.limits.artifact_bytes)
        self.text_file(name, data, path_kind=path_kind)

    def load_compressed(self, fh: IO[bytes], name: str, kind: str, budget: int) -> None:
        """A gzip, xz or bzip2 upload: a compressed tar, or one compressed file."""
        fh.seek(0)
        try:
            stream = self._decompressor(kind, fh)
            first = stream.read(512)
        except (OSError, EOFError, lzma.LZMAError, zlib.error, ValueError) as exc:
            self.error(name, f"corrupt or truncated {kind} data ({type(exc).__name__})")
            return
        reader = _CountingReader(stream, budget, prefix=first)
        if _magic(first) == "tar":
            self.load_tar(reader, name)
        else:
            self.compressed_file(reader, name, kind)

    def _read_text(self, fh: IO[bytes], name: str, head: bytes, *, known_kind: bool) -> bytearray | None:
        """The rest of a text upload after ``head``, in one growing buffer
        (``text_file`` frees it once decoded). Binary content is refused from
        its first bytes, before the rest is read. Text of a kind its name
        tells is read whole (up to the artifact limit); other text (a
        transcript, a log) up to ``text_bytes``, cut at the last full line."""
        limit = (
            self.limits.artifact_bytes
            if known_kind
            else min(self.limits.text_bytes, self.limits.artifact_bytes)
        )
        try:
            data = bytearray(head)
            data += fh.read(max(BINARY_PROBE_BYTES - len(data), 0))
            if looks_binary(data):
                self.binary_artifact(name)
                return None
            _read_up_to(fh, data, limit)
        except OSError as exc:
            self.error(name, _cannot_read(exc))
            return None
        if len(data) > limit:
            if known_kind:
                self.error(name, f"artifact larger than {limit} bytes not read")
                return None
            del data[(data.rfind(b"\n", 0, limit) + 1) or limit :]  # a full line, unless there is none
            self.error(name, f"only the first {limit >> 20} MiB read (the limit for a transcript or log)")
        return data

    def binary_artifact(self, name: str) -> None:
        name = _safe_label(name)
        self.error(name, "binary content, not a text artifact")
        self.asm.artifact(name, None, lines=None, parsed=False, note="binary")

    @staticmethod
    def _decompressor(kind: str, fh: IO[bytes]) -> io.BufferedIOBase:
        if kind == "gzip":
            return gzip.GzipFile(fileobj=fh, mode="rb")
        if kind == "xz":
            return lzma.LZMAFile(fh, mode="rb")
        return bz2.BZ2File(fh, mode="rb")

    def compressed_file(self, reader: _CountingReader, name: str, kind: str) -> None:
        """A compressed single file (``meminfo.gz``): read up to the artifact limit."""
        limit = self.limits.artifact_bytes
        chunks: list[bytes] = []
        total = 0
        try:
            while True:
                chunk = reader.read(MiB)
                if not chunk:
                    break
                total += len(chunk)
                if total > limit:
                    self.error(name, f"decompressed artifact larger than {limit} bytes not read")
                    return
                chunks.append(chunk)
        except _LimitExceeded as exc:
            self.error(name, f"{exc}; not read")
            return
        except (OSError, EOFError, lzma.LZMAError, zlib.error, ValueError) as exc:
            self.error(name, f"corrupt or truncated {kind} data ({type(exc).__name__})")
            return
        inner = re.sub(r"\.(gz|xz|bz2)$", "", name, flags=re.I)
        data = b"".join(chunks)
        del chunks
        if _magic(data[:512]) != "text":
            self.error(name, "nested archive inside a compressed file is not opened")
            return
        self.text_file(name, data, path_kind=kind_for_path(inner))

    # ------------------------------------------------------------------ tar
    def load_tar(self, reader: _CountingReader, name: str) -> None:
        tar = _TarWalk(self, name)
        try:
            with tarfile.open(fileobj=reader, mode="r|", tarinfo=_SafeTarInfo) as tf:
                tar.walk(tf)
        except _LimitExceeded as exc:
            self.error(name, f"{exc}; stopped after {tar.members} members, kept what was read")
        except (tarfile.TarError, EOFError, OSError, lzma.LZMAError, zlib.error, ValueError) as exc:
            self.error(name, _broken_tar(tar.members, exc))
        tar.finish()
        if tar.members == 0 and not self.has_error(name):
            self.error(name, "empty archive")

    def has_error(self, name: str) -> bool:
        """Whether the current host already has an error about the artifact ``name``."""
        return any(e.artifact == _safe_label(name) for e in self.asm.host.errors)

    # ------------------------------------------------------------------ artifacts
    def text_file(
        self,
        name: str,
        data: bytes | bytearray,
        *,
        path_kind: str | None,
        member: bool = False,
        **kwargs: Any,
    ) -> bool:
        """A file or member whose kind may be known from its path; otherwise it is
        one artifact recognised by content, or a transcript. An empty archive
        member (a command with no output) or a configuration file holding only
        comments says "nothing set", which is not an error."""
        name = _safe_label(name)
        decoded = decode_bytes(data)
        if isinstance(data, bytearray):
            data.clear()  # the caller's reference too: the raw bytes are not needed any more
        del data
        lines = self.lines_to_read(name, decoded, path_kind)
        if decoded.binary:
            self.binary_artifact(name)
            self.read_unrecognised(name, "(binary content)", lines, member=member)
            return False
        self.keep_text(name, decoded.text, member=member)
        self.report_decoding(name, decoded)
        if self.holds_nothing(name, decoded.text, path_kind, lines, member=member):
            return False
        if path_kind:
            ok = self.parse(name, path_kind, decoded.text, lines=lines, encoding=decoded.encoding, **kwargs)
            self.read_whole(name, path_kind, lines, parsed=ok, member=member)
            return ok
        return self.text_artifact(name, decoded.text, encoding=decoded.encoding, member=member)

    def lines_to_read(self, name: str, decoded: Decoded, path_kind: str | None) -> int:
        """The number of lines of the decoded text to read: all of them, or the
        first ``text_lines`` of a longer transcript or log (cut there, and said)."""
        lines = decoded.text.count("\n") + 1
        if path_kind is not None or lines <= self.limits.text_lines or decoded.binary:
            return lines
        # a transcript or log of more lines than the splitter reads: the first ones
        decoded.text = decoded.text[: _nth_newline(decoded.text, self.limits.text_lines)]
        self.error(
            name,
            f"only the first {self.limits.text_lines} lines read (the limit for a transcript or log)",
        )
        return self.limits.text_lines

    def report_decoding(self, name: str, decoded: Decoded) -> None:
        """What decoding the text removed or cut."""
        if decoded.nul_bytes:
            self.error(name, f"{decoded.nul_bytes} NUL bytes removed")
        if decoded.long_lines:
            self.error(
                name, f"{decoded.long_lines} line(s) longer than {MAX_LINE_CHARS} characters cut there"
            )

    def holds_nothing(self, name: str, text: str, path_kind: str | None, lines: int, *, member: bool) -> bool:
        """A blank file, or a configuration file of comments only, recorded as
        read with nothing in it."""
        if not text.strip():
            if not member:
                self.error(name, "empty artifact")
            self.asm.artifact(name, path_kind, lines=0, parsed=False, note="empty")
        elif path_kind and _only_comments(text):
            self.asm.artifact(name, path_kind, lines=lines, parsed=False, note="only comments")
        else:
            return False
        self.asm.host.reading.lines += lines  # blank lines or comments: nothing to read
        self.asm.host.reading.prose_lines += lines
        return True

    def keep_text(self, name: str, text: str, *, member: bool) -> None:
        """Keep the text of a member, or of a whole text file, for the lines a
        finding cites (:meth:`LoadedUpload.artifact_lines`)."""
        if self._file is not None:
            self._file.keep(name, text, member=member)

    def parse(
        self, name: str, kind: str, text: str, *, lines: int, encoding: str = "", **kwargs: Any
    ) -> bool:
        if kind == "node_numastat" and "node" not in kwargs:
            m = _NODE_IN_PATH.search(name)
            if m:
                kwargs["node"] = int(m.group(1))
        self.charge(kind)
        results, err = run_parser(kind, text, artifact=name, **kwargs)
        if err:
            self.error(err.artifact, err.message, err.line)
        for result in results:
            self.asm.add(result, kind=kind)
        self.asm.artifact(name, kind, lines=lines, parsed=err is None, encoding=encoding or None)
        return err is None

    def text_artifact(self, name: str, text: str, *, encoding: str = "", member: bool = False) -> bool:
        # Splitting and parsing one text share one time budget (run_parser), and
        # a text parsed once as a kind is not parsed again (parsers.parse_cache).
        with artifact_parse_budget(), parsers.parse_cache():
            return self._text_artifact(name, text, encoding=encoding, member=member)

    def _text_artifact(self, name: str, text: str, *, encoding: str = "", member: bool = False) -> bool:
        lines = text.count("\n") + 1
        transcript_like = _looks_like_transcript(text)
        # Text without prompts or fences is a log or one command's output: it is
        # still split where an artifact starts, with a small detection budget.
        split = self.split(name, text, detect_budget=2_000 if transcript_like else 150)
        if split is None:
            self.read_unrecognised(name, text, lines, member=member)
            return False
        kind = detect_kind(text)
        fallback: f.ArtifactError | None = None
        if kind and not transcript_like and _one_artifact(split, kind, text):
            fallback = self.whole_artifact(
                name, kind, text, split, lines=lines, encoding=encoding, member=member
            )
            if fallback is None:
                return True
        parsed = self.transcript(name, split, text)
        if not parsed:
            self.nothing_parsed(name, kind, split, fallback, lines=lines, encoding=encoding)
        return parsed > 0

    def whole_artifact(
        self, name: str, kind: str, text: str, split: Split, *, lines: int, encoding: str, member: bool
    ) -> f.ArtifactError | None:
        """Parse ``text`` whole as ``kind``; the parser's error, or None when it read it."""
        self.charge(kind)
        results, err = run_parser(kind, text, artifact=name)
        if err is not None:
            return err
        for result in results:
            self.asm.add(result, kind=kind)
        self.asm.artifact(name, kind, lines=lines, parsed=True, encoding=encoding or None)
        self.read_whole(name, kind, lines, parsed=True, member=member, prose=_prose_margins(split, text))
        return None

    def nothing_parsed(
        self,
        name: str,
        kind: str | None,
        split: Split,
        fallback: f.ArtifactError | None,
        *,
        lines: int,
        encoding: str,
    ) -> None:
        """Record a text file of which no block parsed: not used, or an error
        (the whole parse's, when there was one)."""
        if split.unused and UNRECOGNISED not in split.roles and READ not in split.roles:
            # only outputs Casebook does not use (and prose): recognised, nothing to report
            self.asm.artifact(
                name, None, lines=lines, parsed=False, encoding=encoding or None, note="not used"
            )
            return
        if fallback:
            self.error(fallback.artifact, fallback.message, fallback.line)
        else:
            self.error(name, "no recognisable artifact (not a known command output, file or transcript)")
        self.asm.artifact(name, kind, lines=lines, parsed=False, encoding=encoding or None)

    def split(self, name: str, text: str, *, detect_budget: int) -> Split | None:
        try:
            return read_transcript(text, detect_lines=self.limits.detect_lines, detect_budget=detect_budget)
        except Exception as exc:  # the splitter must not fail an upload either
            log.exception("transcript splitting failed on %s", name)
            self.error(name, f"internal transcript error: {type(exc).__name__}")
            return None

    def transcript(self, name: str, split: Split, text: str = "") -> int:
        """Parse the blocks of a split transcript and record what each line was
        read as. With ``split_hosts``, each host the prompts name gets its own
        blocks, lines and errors."""
        split.blocks = split_repeated_outputs(split.blocks, split.parsed)
        segments = self.machine_segments(split, text)
        starts = [start for start, _host, _why in segments]
        first_host = split.segments[0][1]
        assemblers = [
            self.host_for(host, first_host) if why is None else self.new_machine(host, why, start)
            for start, host, why in segments
        ]
        _count_reading(assemblers, starts, split.roles)
        _list_unread(name, split, assemblers, starts)
        for note in split.notes:
            if note.startswith("more than"):
                self.error(name, note)
        try:
            return self.parse_blocks(name, split, assemblers, starts)
        finally:
            self.asm = self.main

    def parse_blocks(
        self, name: str, split: Split, assemblers: list[HostAssembler], starts: list[int]
    ) -> int:
        """The number of the transcript's blocks parsed, each under the machine
        whose segment (from ``starts``) holds it."""
        parsed = 0
        for count, block in enumerate(split.blocks):
            self.asm = assemblers[bisect.bisect_right(starts, block.start_line - 1) - 1]
            if count >= MAX_BLOCKS:
                self.skip_block(name, block, first=count == MAX_BLOCKS)
                continue
            if _output_follows(split.blocks, count):
                continue  # its output is the next block: no "not numactl output" error
            parsed += self.block(name, block, split.parsed.get(count, NOT_PARSED))
        return parsed

    def skip_block(self, name: str, block: Block, *, first: bool) -> None:
        """A paste of more than MAX_BLOCKS outputs is hostile or generated:
        the rest is listed, not parsed, so that the time stays bounded."""
        if first:
            self.error(
                name, f"more than {MAX_BLOCKS} command outputs; the rest was not parsed", block.start_line
            )
        self.asm.host.reading.artifacts.append(
            f.ReadArtifact(
                kind=block.kind,
                start_line=block.start_line,
                end_line=block.end_line,
                parsed=False,
                name=block.label,
                command=block.command,
            )
        )

    def block(self, name: str, block: Block, result: Any = NOT_PARSED) -> int:
        if block.host:
            self.asm.hostname(block.host)
        if block.unused is not None or block.kind is None:
            self.record_unread(name, block)
            return 0
        return self.parse_block(name, block, block.kind, result)

    def record_unread(self, name: str, block: Block) -> None:
        """A block kept out of the facts (why: ``unused``) or of no known kind (a
        failed command says so)."""
        source, entry_name, nlines = _block_entry(name, block)
        if block.unused is not None:
            self.asm.artifact(
                entry_name, None, lines=nlines, parsed=False, source=source, note=f"not used ({block.unused})"
            )
            return
        failure = command_failure(block.text) if block.command else None
        if failure is not None:
            # "error: Operation not supported ..." of virsh, "bash: numastat: command
            # not found": the command ran and failed, which says what to re-run
            self.error(source, f"the command failed: {failure}", block.start_line)
        self.asm.artifact(entry_name, None, lines=nlines, parsed=False, source=source, note="not recognised")

    def parse_block(self, name: str, block: Block, kind: str, result: Any) -> int:
        """A block of a known kind parsed (or its result taken) and recorded."""
        source, entry_name, nlines = _block_entry(name, block)
        self.charge(kind)
        named = _named_by_command(block)
        results, err = run_parser(
            kind,
            block.text,
            artifact=source,
            line_offset=block.start_line - 1,
            line_map=block.origins,
            parsed=result if not named else NOT_PARSED,  # the splitter's parse lacks what is named
            **named,
        )
        if err and not block.prose:
            self.error(err.artifact, err.message, err.line)
        for result in results:
            self.asm.add(result, kind=kind)
        self.asm.artifact(
            entry_name,
            kind,
            lines=nlines,
            parsed=err is None,
            source=source,
            start_line=block.start_line,
            command=block.command,
        )
        self.asm.host.reading.artifacts.append(
            f.ReadArtifact(
                kind=kind,
                start_line=block.start_line,
                end_line=block.end_line,
                parsed=err is None,
                name=block.label,
                command=block.command,
            )
        )
        return 1 if err is None or results else 0  # a partial parse kept facts


def _block_entry(name: str, block: Block) -> tuple[str, str, int]:
    """A transcript block's source, its entry's name among the artifacts and its line count."""
    return f"transcript:{block.label}", f"{name}:{block.start_line}", block.end_line - block.start_line + 1


def _nth_newline(text: str, n: int) -> int:
    """The index of the ``n``-th newline of ``text`` (1-based), or its length."""
    pos = -1
    find = text.find
    for _ in range(n):
        pos = find("\n", pos + 1)
        if pos < 0:
            return len(text)
    return pos


def _read_up_to(fh: IO[bytes], data: bytearray, limit: int) -> None:
    """Append what ``fh`` still holds to ``data``, 1 MiB at a time, stopping one
    byte past ``limit`` (so the caller can tell "over the limit")."""
    while len(data) <= limit:
        chunk = fh.read(min(MiB, limit + 1 - len(data)))
        if not chunk:
            break
        data += chunk


def _output_follows(blocks: list[Block], index: int) -> bool:
    """A command printed nothing after its prompt, and the next block, found by
    its content, is that command's kind: a write-up that fences the command
    (``$ sudo numactl --hardware``), says "结果：" (result) and fences the
    output apart. The output block is the artifact; the empty one is not an error."""
    block = blocks[index]
    if block.command is None or block.kind is None or block.text.strip() or index + 1 >= len(blocks):
        return False
    following = blocks[index + 1]
    return following.command is None and following.kind == block.kind and not following.prose


def _prose_margins(split: Split, text: str) -> int:
    """Lines of prose before the first and after the last block the splitter
    found (a sentence introducing one quoted ``tc`` line): not read, although
    the text is parsed whole. A margin of blank lines only stays with the
    artifact; prose between blocks may belong to it (a log line that reads
    like a sentence) and stays counted as read."""
    spans = [(b.start_line, b.end_line) for b in split.blocks if b.kind and not b.prose]
    if not spans:
        return 0
    first, last = min(a for a, _b in spans), max(b for _a, b in spans)
    lines = text.split("\n")
    roles = split.roles
    prose = 0
    for a, b in ((0, first - 1), (last, len(roles))):
        if any(line.strip() for line in lines[a:b]):
            prose += roles[a:b].count(PROSE)
    return prose


def _broken_tar(members: int, exc: Exception) -> str:
    """The error of a tar stream that failed after ``members`` members: empty,
    or truncated or corrupt."""
    if members == 0 and isinstance(exc, tarfile.ReadError) and "empty" in str(exc).lower():
        return "empty archive"
    return f"archive truncated or corrupt after {members} members ({type(exc).__name__}); kept what was read"


def _only_comments(text: str) -> bool:
    return all(not line.strip() or line.lstrip().startswith(("#", ";")) for line in text.split("\n"))


def _looks_like_transcript(text: str) -> bool:
    """Prompts or fences near the top, once the paste is cleaned (quoted,
    indented, wrapped in a ticket): a pasted session, not one artifact."""
    head = normalise("\n".join(text.split("\n", 400)[:400]))
    return any(line.lstrip().startswith(("```", "~~~")) or match_prompt(line) for line in head.lines)


def _unreadable_type(member: tarfile.TarInfo) -> str | None:
    """Why a member that is neither a directory nor a link is not read."""
    if member.ischr() or member.isblk() or member.isfifo():
        return "device or FIFO member skipped"
    if not member.isreg():
        return "unsupported member type skipped"
    return None


def _string(item: dict[str, Any], key: str) -> str | None:
    """``item[key]`` when it is a string (a manifest is JSON anyone may have written)."""
    value = item.get(key)
    return value if isinstance(value, str) else None


def _manifest_note(doc: dict[str, Any], key: str) -> str | None:
    """A manifest's ``key`` as the artifact list shows it: as text, at most 64 characters."""
    value = doc.get(key)
    return str(value)[:64] if value else None


def _manifest_items(doc: dict[str, Any], limit: int) -> list[tuple[str, dict[str, Any]]]:
    """("commands" or "files", entry) of the collector's manifest, at most ``limit`` of each."""
    entries: list[tuple[str, dict[str, Any]]] = []
    for key in ("commands", "files"):
        items = doc.get(key)
        if isinstance(items, list):
            entries.extend((key, item) for item in items[:limit] if isinstance(item, dict))
    return entries


def _sos_commands(plugins: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(command, file path) of every command a sos manifest's plugins ran."""
    for plugin in plugins.values():
        commands = plugin.get("commands") if isinstance(plugin, dict) else None
        if not isinstance(commands, list):
            continue
        for cmd in commands:
            exec_, path = (cmd.get("exec"), cmd.get("filepath")) if isinstance(cmd, dict) else (None, None)
            if isinstance(exec_, str) and isinstance(path, str):
                yield exec_, path


def _shallow(parts: list[str]) -> bool:
    """Whether a member's path (its ``parts``) is shallow: at most two directories
    down, none of them a directory of bulk data."""
    return len(parts) <= 3 and not (set(parts[:-1]) & _BULK_DIRS)


class _TarWalk:
    """One pass over a tar stream: map, read or skip each member."""

    def __init__(self, loader: _Loader, archive: str):
        self.loader = loader
        self.archive = archive
        self.members = 0
        self.manifest: dict[str, _ManifestEntry] = {}
        self.manifest_seen = False
        self.pending: list[tuple[str, bytes | bytearray]] = []
        self.pending_bytes = 0
        self.is_sos = False
        self.links: list[str] = []

    def error(self, member: str, message: str) -> None:
        self.loader.error(member, message)

    def walk(self, tf: tarfile.TarFile) -> None:
        limits = self.loader.limits
        for member in tf:
            # A streamed tar still keeps every TarInfo it has read: drop them,
            # or 100,000 members cost ~100 MB.
            tf.members.clear()  # type: ignore[attr-defined]  # not in typeshed
            self.members += 1
            if self.members > limits.members:
                self.error(self.archive, f"more than {limits.members} members; stopped, kept what was read")
                return
            self.take(tf, member)

    def take(self, tf: tarfile.TarFile, member: tarfile.TarInfo) -> None:
        """One member: a directory passed, a link kept for :meth:`report_links`, an
        unsafe name or a device reported, a regular file read."""
        raw_name = member.name
        if self.members <= KIND_MEMBERS:
            self.loader.note_member(raw_name)
        if member.isdir():
            return
        name, why = _clean_member_name(raw_name)
        if name is None:
            self.error(_safe_label(raw_name), f"{why}; skipped")
            return
        if member.issym() or member.islnk():
            self.links.append(name)  # reported in finish(), once we know if this is a sosreport
            return
        unreadable = _unreadable_type(member)
        if unreadable is not None:
            self.error(name, unreadable)
            return
        if _SOS_MEMBER.search(name):
            self.is_sos = True
        self.member(tf, member, name)

    def _read(
        self, tf: tarfile.TarFile, member: tarfile.TarInfo, name: str, limit: int
    ) -> bytes | bytearray | None:
        if member.size > limit:
            self.error(name, f"member of {member.size} bytes exceeds the artifact limit ({limit}); skipped")
            return None
        fh = tf.extractfile(member)
        if fh is None:
            return None
        data = bytearray(fh.read(min(limit + 1, BINARY_PROBE_BYTES)))
        if len(data) == BINARY_PROBE_BYTES and _magic(bytes(data[:512])) == "text" and looks_binary(data):
            # A large binary member is refused from its first bytes, unread.
            self.loader.binary_artifact(name)
            return None
        _read_up_to(fh, data, limit)
        if len(data) > limit:
            self.error(name, f"member larger than {limit} bytes; skipped")
            return None
        return data

    def member(self, tf: tarfile.TarFile, member: tarfile.TarInfo, name: str) -> None:
        parts = name.split("/")
        if self.manifest_member(tf, member, name, parts):
            return
        entry = self.manifest.get(name)
        kind = entry.kind if entry else kind_for_path(name)
        if entry is not None or kind is not None:
            self.mapped_member(tf, member, name, kind, entry)
        elif parts[-1] == "hostname" and member.size <= 256:
            self.hostname_member(tf, member, name)
        else:
            self.unmapped_member(tf, member, name, parts)

    def hostname_member(self, tf: tarfile.TarFile, member: tarfile.TarInfo, name: str) -> None:
        """The archive's ``hostname`` file read as the host's name, unless one is already known."""
        data = self._read(tf, member, name, 256)
        if data:
            self.loader._hostname = self.loader._hostname or data.decode("utf-8", "replace").strip()

    def mapped_member(
        self,
        tf: tarfile.TarFile,
        member: tarfile.TarInfo,
        name: str,
        kind: str | None,
        entry: _ManifestEntry | None,
    ) -> None:
        """A member the manifest or its path maps to a kind, read (a nested archive is not)."""
        if _ARCHIVE_SUFFIX.search(name.rsplit("/", 1)[-1]):
            self.error(name, "nested archive not opened")
            return
        data = self._read(tf, member, name, self.loader.limits.artifact_bytes)
        if data is not None:
            self.artifact(name, data, kind, entry)

    def manifest_member(
        self, tf: tarfile.TarFile, member: tarfile.TarInfo, name: str, parts: list[str]
    ) -> bool:
        """The collector's ``manifest.json`` (at the top or one directory down) or
        a sosreport's ``sos_reports/manifest.json``, read; False for any other member."""
        if parts[-1] == "manifest.json" and len(parts) <= 2:
            read, prefix = self.read_manifest, "/".join(parts[:-1])
        elif name.endswith("sos_reports/manifest.json"):
            read, prefix = self.read_sos_manifest, name[: -len("sos_reports/manifest.json")]
        else:
            return False
        data = self._read(tf, member, name, MANIFEST_MAX)
        if data is not None:
            read(name, data, prefix=prefix)
        return True

    def unmapped_member(
        self, tf: tarfile.TarFile, member: tarfile.TarInfo, name: str, parts: list[str]
    ) -> None:
        """A member no manifest or path maps: a shallow one of a collector archive
        is kept (within PENDING_MEMBER_MAX) to be recognised by its content once
        the manifest, which may come later, has been read (:meth:`finish`)."""
        if not _shallow(parts):
            return
        if _ARCHIVE_SUFFIX.search(parts[-1]):
            self.error(name, "nested archive not opened")
            return
        if self.is_sos:
            return
        limits = self.loader.limits
        if member.size > PENDING_MEMBER_MAX or self.pending_bytes + member.size > limits.artifact_bytes:
            self.loader.asm.artifact(
                name, None, lines=None, parsed=False, note="not read: unmapped and large"
            )
            return
        data = self._read(tf, member, name, PENDING_MEMBER_MAX)
        if data is None:
            return
        self.pending.append((name, data))
        self.pending_bytes += len(data)

    def artifact(
        self, name: str, data: bytes | bytearray, kind: str | None, entry: _ManifestEntry | None
    ) -> None:
        if _magic(data[:512]) not in ("text",):
            self.error(name, "nested archive or binary member not opened")
            return
        if entry is not None and entry.failed_silently(data):
            self.loader.asm.artifact(
                name,
                kind,
                lines=0,
                parsed=False,
                note=f"command exited {entry.exit_code}",
                command=entry.command,
            )
            return
        if kind is None and entry is not None and entry.command:
            kind = kind_for_command(entry.command)
        self.loader.text_file(name, data, path_kind=kind, member=True)

    def finish(self) -> None:
        self.report_links()
        pending, self.pending = self.pending, []
        for name, data in pending:
            entry = self.manifest.get(name)
            if entry is not None:
                self.artifact(name, data, entry.kind, entry)
            elif not self.is_sos:
                self.unmapped_text(name, data)

    def unmapped_text(self, name: str, data: bytes | bytearray) -> None:
        """A kept member no manifest maps: parsed whole as the kind its content
        shows, or recorded as not recognised (binary and blank ones are passed)."""
        if _magic(data[:512]) != "text":
            self.error(name, "nested archive or binary member not opened")
            return
        decoded = decode_bytes(data)
        if decoded.binary or not decoded.text.strip():
            return
        self.loader.keep_text(name, decoded.text, member=True)
        kind = detect_kind(decoded.text)
        lines = decoded.text.count("\n") + 1
        if kind:
            ok = self.loader.parse(name, kind, decoded.text, lines=lines)
            self.loader.read_whole(name, kind, lines, parsed=ok, member=True)
        else:
            self.loader.asm.artifact(name, None, lines=None, parsed=False, note="not recognised")
            self.loader.read_unrecognised(name, decoded.text, lines, member=True)

    def report_links(self) -> None:
        """Links are never followed. A sosreport links files it also stores
        (``uname`` -> ``sos_commands/kernel/uname_-a``, ...), so there they are
        one line, not an error each; in any other archive a link is unexpected
        and each is reported."""
        links, self.links = self.links, []
        if self.is_sos and links:
            names = ", ".join(PurePosixPath(n).name for n in links[:8]) + (", ..." if len(links) > 8 else "")
            self.error(
                self.archive,
                f"{len(links)} symbolic link(s) of the sosreport not followed ({names}); "
                "sos stores their targets, which were read directly",
            )
            return
        for name in links:
            self.error(name, "link member skipped")

    # -- manifests
    def read_manifest(self, name: str, data: bytes | bytearray, *, prefix: str) -> None:
        try:
            doc = json.loads(data.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError) as exc:
            self.error(name, f"manifest is not valid JSON ({type(exc).__name__}); files mapped by path")
            return
        if not isinstance(doc, dict):
            self.error(name, "manifest is not a JSON object; files mapped by path")
            return
        self.manifest_seen = True
        hostname = doc.get("hostname")
        if isinstance(hostname, str):
            self.loader._hostname = hostname.strip()[:253] or None
        self.map_manifest(name, doc, f"{prefix}/" if prefix else "")
        self.loader.asm.artifact(
            name,
            "manifest",
            lines=None,
            parsed=True,
            collector_version=_manifest_note(doc, "collector_version"),
            time=_manifest_note(doc, "time"),
        )

    def map_manifest(self, name: str, doc: dict[str, Any], pre: str) -> None:
        """Each file the manifest lists -> its parser kind, command and exit code."""
        for key, item in _manifest_items(doc, self.loader.limits.members):
            path = item.get("file") if key == "commands" else item.get("path")
            if not isinstance(path, str) or not path:
                continue
            clean, why = _clean_member_name(path)
            if clean is None:
                self.error(name, f"manifest entry {_safe_label(path)!r}: {why}; ignored")
                continue
            self.manifest[pre + clean] = self._manifest_entry(item, clean)

    def _manifest_entry(self, item: dict[str, Any], clean: str) -> _ManifestEntry:
        """What a manifest says of one file: its parser kind (as written, else
        from its command, else from its path), the command and its exit code."""
        kind = _string(item, "kind")
        if kind not in self._kinds():
            kind = None
        command = _string(item, "command")
        if kind is None and command:
            kind = kind_for_command(command)
        if kind is None:
            kind = kind_for_path(clean)
        exit_code = item.get("exit_code")
        return _ManifestEntry(
            kind=kind,
            command=command,
            exit_code=exit_code if whole(exit_code) else None,
        )

    def read_sos_manifest(self, name: str, data: bytes | bytearray, *, prefix: str) -> None:
        try:
            doc = json.loads(data.decode("utf-8", errors="replace"))
            plugins = doc["components"]["report"]["plugins"]
        except (ValueError, KeyError, TypeError, RecursionError):
            self.error(name, "sos manifest not readable; files mapped by path")
            return
        if not isinstance(plugins, dict):
            return
        for exec_, path in _sos_commands(plugins):
            clean, _why = _clean_member_name(path)
            kind = kind_for_command(exec_)
            if clean and kind:
                self.manifest.setdefault(prefix + clean, _ManifestEntry(kind=kind, command=exec_))

    @staticmethod
    def _kinds() -> set[str]:
        return set(parsers.REGISTRY)


# ---------------------------------------------------------------------- public API

# The first bytes of a text upload kept for its prose (what a prose-only upload
# says: similar cases are matched on it), as many as a reader of the stored
# upload would take.
PROSE_HEAD_BYTES = 32_000
PROSE_CHARS = 8_000


@dataclass
class UploadFile:
    """What the loader kept of one file of an upload, so that nothing reads it
    again: the text of a text file (within the artifact limit) or of each
    archive member it read, its first bytes, and what an archive is."""

    name: str
    archive_kind: str | None = None  # COLLECTOR or SOSREPORT, from the first members
    head: bytes = b""
    text: str | None = None
    members: dict[str, str] = field(default_factory=dict)
    whole: bool = False  # a text file within the artifact limit: its text is kept

    def keep_head(self, data: bytes | bytearray, *, whole: bool) -> None:
        self.head = bytes(data[:PROSE_HEAD_BYTES])
        self.whole = whole

    def keep(self, name: str, text: str, *, member: bool) -> None:
        if member:
            self.members.setdefault(name, text)
        elif self.whole and self.text is None:
            self.text = text

    def artifact_lines(self, names: Iterable[str]) -> dict[str, list[str]]:
        """The lines of the named artifacts: archive members by their path (a
        name cited below or above a leading directory too), every name of a
        text file the file's lines (its line numbers are lines of the file)."""
        if self.text is not None:
            lines = self.text.split("\n")
            return dict.fromkeys(names, lines)
        out: dict[str, list[str]] = {}
        for name in names:
            text = self.members.get(name)
            if text is None:
                text = next((t for m, t in self.members.items() if _same_path(name, m)), None)
            if text is not None:
                out[name] = text.split("\n")
        return out


@dataclass
class LoadedUpload:
    """One read of an upload (:func:`load`): the facts of its hosts, and what the
    report needs of the files afterwards (cited lines, prose, archive kind)."""

    hosts: list[f.HostFacts]
    files: list[UploadFile] = field(default_factory=list)
    # why reading stopped short, when the upload asked for more work than
    # Limits allows (WorkBudgetExceeded); "" when it was read within them
    over_budget: str = ""

    @property
    def host(self) -> f.HostFacts:
        """The host the upload is about (the first)."""
        return self.hosts[0]

    @property
    def upload(self) -> UploadFile:
        """The first file read (the upload itself; added evidence follows)."""
        return self.files[0] if self.files else UploadFile(name="")

    def kind(self, current: str) -> str:
        """``sosreport`` or ``collector`` for an archive whose first
        :data:`KIND_MEMBERS` members show it (``sos_commands/`` or the
        collector's ``manifest.json``); ``current`` for anything else."""
        return self.upload.archive_kind or current

    def prose(self) -> str:
        """The first 8,000 characters of a text upload, decoded as every upload is."""
        return decode_bytes(self.upload.head).text[:PROSE_CHARS]

    def artifact_lines(self, names: Iterable[str]) -> dict[str, list[str]]:
        """The lines of the named artifacts of the upload (evidence excerpts)."""
        return self.upload.artifact_lines(names)

    def file_lines(self, basename: str) -> list[str] | None:
        """The lines of a text file read with the upload (added evidence), by base name."""
        for file in self.files[1:]:
            if os.path.basename(file.name) == basename and file.text is not None:
                return file.text.split("\n")
        return None


Source = str | os.PathLike[str] | bytes | Iterable[str | os.PathLike[str]]


def load(
    source: Source, *, split: bool = True, name: str = "", label: str = "", limits: Limits | None = None
) -> LoadedUpload:
    """Read an upload once: a file (archive, transcript, single artifact) or a
    directory, several files read as one upload (a snapshot's upload and the
    evidence added to it later: their artifacts land in the same host(s), each
    keeping its name), or bytes held in memory (``name`` is the upload's name).

    With ``split``, a transcript in which the prompts name another host
    (``[root@guest ~]#`` after ``ssh guest``, ``user@other:~$``) gives one more
    host per name, exactly as if each had been uploaded on its own; the first
    host (named ``label``) is the one the upload is about. Without it,
    everything lands in that one host. Never raises on content; errors are
    listed per artifact in each ``HostFacts.errors``.

    >>> reading = load(b"[root@db1 ~]# nproc\\n4\\n", name="t.txt", label="db1")
    >>> reading.host.label, reading.artifact_lines({"nproc"})
    ('db1', {'nproc': ['[root@db1 ~]# nproc', '4', '']})
    """
    loader = _Loader(label=label, limits=limits, split_hosts=split)
    if isinstance(source, (bytes, bytearray)):
        _read_bytes(loader, bytes(source), name or "upload")
    else:
        paths = [source] if isinstance(source, (str, os.PathLike)) else list(source)
        for path in paths:
            if loader.over_budget:
                break
            _read_path(loader, Path(path))
    hosts = loader.finish_all()
    return LoadedUpload(
        hosts=hosts if split else hosts[:1], files=loader.files, over_budget=loader.over_budget
    )


def _read_path(loader: _Loader, path: Path) -> None:
    loader.begin_file(path.name)
    try:
        loader.load_path(path)
    except WorkBudgetExceeded as exc:
        loader.stop_over_budget(path.name or str(path), exc)
    except Exception as exc:  # last line of defence: an upload never raises
        log.exception("loading %s failed", path)
        loader.error(path.name or str(path), f"internal error: {type(exc).__name__}")


def _read_bytes(loader: _Loader, data: bytes, name: str) -> None:
    name = _safe_label(PurePosixPath(name.replace("\\", "/")).name or "upload")
    loader.begin_file(name)
    try:
        if len(data) > loader.limits.upload_bytes:
            loader.error(
                name, f"upload of {len(data)} bytes exceeds the limit ({loader.limits.upload_bytes})"
            )
        else:
            loader.load_stream(io.BytesIO(data), name, len(data))
    except WorkBudgetExceeded as exc:
        loader.stop_over_budget(name, exc)
    except Exception as exc:
        log.exception("loading %s failed", name)
        loader.error(name, f"internal error: {type(exc).__name__}")


def load_snapshot(
    paths: Iterable[str | os.PathLike[str]],
    *,
    limits: Limits | None = None,
    labels: Iterable[str] | None = None,
) -> f.SnapshotFacts:
    """Every host of several uploads (each :func:`load` on its own, labelled
    by ``labels`` in order), analysed together."""
    paths = list(paths)
    names = list(labels) if labels is not None else [""] * len(paths)
    names += [""] * (len(paths) - len(names))
    hosts: list[f.HostFacts] = []
    for p, lbl in zip(paths, names, strict=False):
        hosts.extend(load(p, label=lbl, limits=limits).hosts)
    return f.SnapshotFacts(hosts=hosts)


# ------------------------------------------------------------- what an upload is

# The kinds of upload the snapshot model knows (``triage.models.Snapshot.Kind``).
COLLECTOR, SOSREPORT, TRANSCRIPT, ARTIFACT = "collector", "sosreport", "transcript", "artifact"
TEXT_SUFFIXES = (".txt", ".md", ".log", ".text", ".out")
# members looked at to tell a collector archive from a sosreport
KIND_MEMBERS = 200


# Formats engineers attach that carry no command output Casebook can read.
_BINARY_FORMATS = (
    (b"%PDF", "a PDF document"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"\x7fELF", "an executable (ELF)"),
    (b"\xd0\xcf\x11\xe0", "an Office document"),
)
# Share of control bytes (not tab, newline, carriage return, form feed,
# backspace or escape) above which a head is not text in any encoding we read.
BINARY_CONTROL_SHARE = 0.05
_BINARY_CONTROLS = frozenset(range(0x20)) - frozenset(b"\t\n\r\f\b\x1b")


def binary_reason(head: bytes) -> str | None:
    """Why an upload's first bytes are not something Casebook reads, or None.

    Archives (gzip, xz, tar ...) are read member by member and pass; a PDF, an
    image or an executable is named; other bytes are binary when they hold NULs
    or more than 5 % control bytes (text in UTF-8, GB18030 or latin-1 holds
    neither; UTF-16 with a byte order mark passes).

    >>> binary_reason(b"%PDF-1.7\\n%\\xe2\\xe3")
    'a PDF document'
    >>> binary_reason(b"[root@db1 ~]# lscpu\\nCPU(s): 4\\n") is None
    True
    >>> binary_reason(bytes(range(256)))
    'binary data (not text, not an archive)'
    """
    if _magic(head[:512]) != "text":  # (no bytes are text: no reason either)
        return None
    named = _format_name(head)
    if named is None and _not_text(head):
        return "binary data (not text, not an archive)"
    return named


def _format_name(head: bytes) -> str | None:
    """The name of the binary format ``head`` starts with (a PDF, an image ...), or None."""
    return next((name for magic, name in _BINARY_FORMATS if head.startswith(magic)), None)


def _not_text(head: bytes) -> bool:
    """Whether ``head`` holds NULs or too many control bytes to be text (UTF-16
    with a byte order mark is text)."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return False
    controls = sum(1 for b in head if b in _BINARY_CONTROLS)
    return b"\x00" in head or controls > BINARY_CONTROL_SHARE * len(head)


def upload_kind(filename: str, head: bytes) -> str:
    """What an upload is, from its name and first bytes (a few KiB).

    Compressed or tar data is an archive: ``sosreport`` when named like one,
    else ``collector`` until its one read looks inside (:meth:`LoadedUpload.kind`); text whose top
    reads as a pasted session (prompts or fences, as the loader sees them) is
    a ``transcript``; XML and anything else is a single ``artifact``.

    >>> upload_kind("t.txt", b"[root@db1 ~]# lscpu\\nCPU(s): 4\\n")
    'transcript'
    >>> upload_kind("sosreport-db1.tar.xz", b"\\xfd7zXZ\\x00...")
    'sosreport'
    >>> upload_kind("mysqld.log", b"2020-01-01 [Note] InnoDB: started\\n")
    'artifact'
    """
    name = filename.lower()
    if _magic(head[:512]) != "text":
        return SOSREPORT if "sosreport" in name else COLLECTOR
    text = head.decode("utf-8", errors="replace")
    if text.lstrip().startswith("<"):
        return ARTIFACT
    if _looks_like_transcript(text):
        return TRANSCRIPT
    if name.endswith(TEXT_SUFFIXES):
        # A .log is usually a database error log (a single artifact) unless it
        # has prompts, which were checked above.
        return ARTIFACT if name.endswith(".log") else TRANSCRIPT
    return ARTIFACT


def member_kind(name: str) -> str | None:
    """``sosreport`` for a member under ``sos_commands/``, ``collector`` for a
    ``manifest.json``; None for any other member."""
    parts = PurePosixPath(name).parts
    if "sos_commands" in parts:
        return SOSREPORT
    if parts and parts[-1] == "manifest.json":
        return COLLECTOR
    return None


def _same_path(name: str, member: str) -> bool:
    """Whether an artifact ``name`` (as evidence cites it) is archive ``member``:
    equal, or one is the other below a leading directory."""
    return member == name or member.endswith("/" + name) or name.endswith("/" + member)


def _tar_members(fh: IO[bytes], limits: Limits) -> Iterable[tuple[tarfile.TarFile, tarfile.TarInfo]]:
    """The regular file members of a (possibly compressed) tar stream, within
    the loader's member limit and its guards on headers; nothing on error."""
    try:
        with tarfile.open(fileobj=fh, mode="r|*", tarinfo=_SafeTarInfo) as tar:
            for count, member in enumerate(tar, start=1):
                if count > limits.members:
                    return
                yield tar, member
    except (tarfile.TarError, OSError, EOFError, lzma.LZMAError, zlib.error, ValueError):
        return


def artifact_lines(fh: IO[bytes], names: set[str], *, limits: Limits | None = None) -> dict[str, list[str]]:
    """The lines of the named artifacts of an upload that was not read with
    :func:`load` (another host of the cluster, whose findings the analysis
    cites): archive members by their path, in one pass, within the loader's
    limits (members, one artifact's size, total unpacked bytes); a transcript
    or single artifact, whose line numbers are lines of the file, from the
    file itself. An artifact that cannot be read is left out. The upload that
    was read keeps its lines (:meth:`LoadedUpload.artifact_lines`)."""
    limits = limits or Limits.from_settings()
    head = fh.read(512)
    fh.seek(0)
    if _magic(head) == "text":
        data = fh.read(limits.artifact_bytes + 1)
        if len(data) > limits.artifact_bytes:
            return {}
        return dict.fromkeys(names, decode_bytes(data).text.split("\n"))
    return _member_lines(fh, names, limits)


def _member_lines(fh: IO[bytes], names: set[str], limits: Limits) -> dict[str, list[str]]:
    """The lines of the named members of an archive (see :func:`artifact_lines`)."""
    out: dict[str, list[str]] = {}
    remaining = set(names)
    unpacked = 0
    for tar, member in _tar_members(fh, limits):
        if not remaining:
            break
        match = _wanted_member(member, remaining, limits)
        if match is None:
            continue
        unpacked += member.size
        if unpacked > limits.unpacked_bytes:
            break
        extracted = tar.extractfile(member)
        if extracted is not None:
            out[match] = decode_bytes(extracted.read()).text.split("\n")
            remaining.discard(match)
    return out


def _wanted_member(member: tarfile.TarInfo, remaining: set[str], limits: Limits) -> str | None:
    """The name in ``remaining`` a regular member of a readable size stands for."""
    if not member.isfile() or member.size > limits.artifact_bytes:
        return None
    clean, _skip = _clean_member_name(member.name)
    if clean is None:
        return None
    return next((n for n in remaining if _same_path(n, clean)), None)
