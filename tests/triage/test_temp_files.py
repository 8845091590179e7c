"""triage.uploads.cleanup_temp_files: stale upload temp files go, files in
use or still being written stay."""

from __future__ import annotations

import os
import time

import pytest

from triage.uploads import cleanup_temp_files


@pytest.fixture
def tmp_dir(settings, tmp_path):
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "tmp")
    os.mkdir(settings.FILE_UPLOAD_TEMP_DIR)
    return tmp_path / "tmp"


def _aged(path, seconds):
    path.write_bytes(b"x" * 1024)
    then = time.time() - seconds
    os.utime(path, (then, then))
    return path


def test_stale_files_go_and_recent_or_open_ones_stay(tmp_dir):
    stale = _aged(tmp_dir / "tmpab12.upload.tar.gz", 3600)
    recent = _aged(tmp_dir / "tmpcd34.upload", 5)
    held = _aged(tmp_dir / "tmpef56", 3600)
    (tmp_dir / "sub").mkdir()
    with open(held, "rb"):
        removed = cleanup_temp_files()
    assert removed == [stale.name]
    assert not stale.exists() and recent.exists() and held.exists() and (tmp_dir / "sub").is_dir()


def test_start_up_removes_everything_not_held_open(tmp_dir):
    left = _aged(tmp_dir / "tmpgh78.upload", 1)
    assert cleanup_temp_files(older_than=0) == [left.name]


def test_missing_directory_is_nothing_to_do(settings, tmp_path):
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "absent")
    assert cleanup_temp_files() == []
