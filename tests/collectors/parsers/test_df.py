"""df parser: seed 004, -h/-k forms, pt-summary mounted_fs and this machine."""

from __future__ import annotations

import subprocess

import pytest

from collectors.facts import ParseError
from collectors.parsers.df import parse_df
from tests.collectors.parsers.lookup import detect, for_command


def test_seed_004_df(seeds_dir):
    lines = next(seeds_dir.glob("004_*.txt")).read_text(encoding="utf-8").splitlines()
    start = lines.index("$df") + 1
    df = parse_df("\n".join(lines[start : start + 15]))
    data1 = next(f for f in df.filesystems if f.mounted_on == "/data/1")
    assert (data1.filesystem, data1.size_kb, data1.used_kb, data1.use_pct) == (
        "/dev/mapper/vg1-data",
        7497910272,
        4947433384,
        66.0,
    )
    assert len(df.filesystems) == 13
    assert df.lines["/data/1"] == 13


def test_human_sizes_and_wrapped_rows():
    text = (
        "Filesystem                       Size  Used Avail Use% Mounted on\n"
        "/dev/mapper/very--long--volume--name\n"
        "                                 1.5T  1.2T  300G  81% /data\n"
        "tmpfs                            7.8G     0  7.8G   0% /dev/shm\n"
    )
    df = parse_df(text)
    data = df.filesystems[0]
    assert data.filesystem == "/dev/mapper/very--long--volume--name"
    assert data.size_kb == round(1.5 * 1024**3)
    assert data.use_pct == 81.0
    assert df.lines["/data"] == 3


def test_pt_summary_mounted_fs(corpus):
    df = parse_df((corpus / "pt-summary" / "007" / "mounted_fs").read_text())
    opt = next(f for f in df.filesystems if f.mounted_on == "/opt")
    assert opt.use_pct == 100.0


def test_errors():
    with pytest.raises(ParseError):
        parse_df("Filesystem 1K-blocks Used Available Use% Mounted on\n")


def test_registry():
    assert for_command("df -h").kind == "df"
    assert (
        detect("Filesystem     1K-blocks    Used Available Use% Mounted on\n/dev/sda 10 5 5 50% /\n").kind
        == "df"
    )


@pytest.mark.parametrize("args", [["df"], ["df", "-k"], ["df", "-h"], ["df", "-P"]])
def test_this_machine(args):
    df = parse_df(subprocess.run(args, capture_output=True, text=True).stdout)
    root = next(f for f in df.filesystems if f.mounted_on == "/")
    assert root.size_kb and root.size_kb > 0
    assert 0 <= root.use_pct <= 100


def test_type_column_and_spaces_in_mount_point():
    text = (
        "Filesystem     Type     1K-blocks     Used Available Use% Mounted on\n"
        "/dev/sdb1      xfs      104857600 94371840  10485760  90% /mnt/my data\n"
    )
    fs = parse_df(text).filesystems[0]
    assert (fs.filesystem, fs.mounted_on, fs.size_kb, fs.use_pct) == (
        "/dev/sdb1",
        "/mnt/my data",
        104857600,
        90.0,
    )


def test_inode_report_is_refused():
    with pytest.raises(ParseError, match="inodes"):
        parse_df("Filesystem      Inodes  IUsed   IFree IUse% Mounted on\n/dev/sda1 100 10 90 10% /\n")


def test_this_machine_with_types():
    df = parse_df(subprocess.run(["df", "-T"], capture_output=True, text=True).stdout)
    assert any(f.mounted_on == "/" for f in df.filesystems)


@pytest.mark.parametrize("args", [["df"], ["df", "-h"], ["df", "-T"]])
def test_this_machine_chinese_locale(args):
    import os

    env = {**os.environ, "LANGUAGE": "zh_CN", "LC_ALL": "C.UTF-8"}
    text = subprocess.run(args, capture_output=True, text=True, env=env).stdout
    english = parse_df(subprocess.run(args, capture_output=True, text=True).stdout)
    chinese = parse_df(text)
    assert detect(text).kind == "df"
    assert {f.mounted_on for f in chinese.filesystems} == {f.mounted_on for f in english.filesystems}


def test_sos_paths_skip_the_inode_report():
    from tests.collectors.parsers.lookup import for_path

    assert for_path("sosreport-h/sos_commands/filesys/df_-al_-x_autofs").kind == "df"
    spec = for_path("sosreport-h/sos_commands/filesys/df_-ali_-x_autofs")
    assert spec is None or spec.kind != "df"
    assert for_path("collector/df_-h.txt").kind == "df"
