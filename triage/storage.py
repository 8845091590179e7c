"""Reading stored uploads back: storage names, local paths, the text of an upload.

Shared by the upload, analysis, excerpt and selector modules of the app; the
files themselves are written by :mod:`triage.uploads`.
"""

from __future__ import annotations

import os

from django.core.files.storage import default_storage
from django.db.models.fields.files import FieldFile

from collectors.decoding import decode_bytes
from triage.models import Snapshot

CHUNK = 1 << 20


def stored_name(file: FieldFile) -> str:
    """The storage name of a stored file (a saved row always has one)."""
    return file.name or ""


def local_path(name: str) -> str | None:
    """The file's path when the storage keeps it on a local disk; None for
    remote storages (S3 has no ``path()``) and path-less in-memory ones."""
    try:
        path = default_storage.path(name)
    except NotImplementedError:
        return None
    return path if os.path.exists(path) else None


def upload_text(snapshot: Snapshot) -> str:
    """The first 8,000 characters of a text upload, decoded as every upload is."""
    try:
        with default_storage.open(stored_name(snapshot.file), "rb") as fh:
            return decode_bytes(fh.read(32_000)).text[:8000]
    except OSError:
        return ""
