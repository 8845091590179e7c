"""Resource limits for reading untrusted uploads.

The defaults are here, in one place: ``settings.CASEBOOK_LIMITS`` starts from
them and lets environment variables override some. When Django is configured
the settings win, and callers (tests, the bench) can pass their own :class:`Limits`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from django.conf import settings

MiB = 1 << 20
GiB = 1 << 30


@dataclass(frozen=True)
class Limits:
    upload_bytes: int = 1 * GiB  # size of one uploaded file (compressed)
    members: int = 20_000  # archive members (or files in a directory) looked at
    unpacked_bytes: int = 4 * GiB  # total decompressed bytes walked through
    ratio: int = 200  # decompressed / compressed, for archives above ratio_floor_bytes
    artifact_bytes: int = 64 * MiB  # one artifact read into memory
    # Text whose kind its name does not tell (a transcript, a pasted log) is
    # split and searched line by line, costing several times its size: only
    # its first text_bytes are read.
    text_bytes: int = 16 * MiB
    # Small archives legitimately compress far better than 200:1 (sparse /sys
    # files, zero-filled logs), so the ratio only applies past this many bytes.
    ratio_floor_bytes: int = 16 * MiB
    # Transcript content detection runs per line on runs up to this many lines.
    detect_lines: int = 5_000
    # Lines of such text read (the rest is reported, not read): the splitter and
    # the normaliser keep a few hundred bytes per line, and text_bytes alone lets
    # a 16 KB gzip of "$ x" lines hold four million of them.
    text_lines: int = 150_000
    # The work one upload may ask for, counted as well as timed (issue 29: a
    # 686 KB upload of 5,000 domain XMLs bought a whole time limit): outputs
    # parsed (archive members, files, transcript blocks, over every file of
    # the upload and its added evidence), and among them libvirt domain XMLs,
    # whose rules cost per guest. Past either the upload is over its budget:
    # reading stops there and the analysis fails with the reason
    # (collectors.archive.WorkBudgetExceeded), never with part of the guests.
    parsed_artifacts: int = 20_000
    domains: int = 10_000

    @classmethod
    def from_settings(cls) -> Limits:
        try:
            configured = dict(getattr(settings, "CASEBOOK_LIMITS", {}) or {})
        except Exception:  # Django not installed or not configured
            configured = {}
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: int(v) for k, v in configured.items() if k in names})

    def unpacked_budget(self, compressed_size: int) -> int:
        """Bytes an archive of ``compressed_size`` may expand to."""
        by_ratio = max(self.ratio * max(compressed_size, 1), self.ratio_floor_bytes)
        return min(self.unpacked_bytes, by_ratio)
