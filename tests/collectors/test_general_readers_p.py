"""Readers of the fix made after issue 26's blind round P, each on the round P
text that needed it and on a text of the same kind from another source (sources
in tests/fixtures/published/README.md, ``roundp/``)."""

from __future__ import annotations

from pathlib import Path

from collectors.archive import load
from tests.conftest import FIXTURES

ROUND_P = FIXTURES / "published" / "roundp"
BLIND = Path(__file__).resolve().parents[1] / "evaluation_blind" / "round-p"


def test_an_output_an_author_made_a_markdown_list_is_read_without_its_markers():
    """ancii.com (round P 2001): every line of ``iostat -x 5`` under a "- "
    marker, the prompt line included; the reports are read as iostat's."""
    post = next(BLIND.glob("2001-*")) / "post.txt"
    host = load(post, split=False).host
    assert host.reading.unrecognised_lines == 0
    assert host.disks is not None
    assert "sda" in {d.device for d in host.disks.devices}


def test_a_nested_markdown_list_holding_a_prompt_and_its_output_is_read():
    """brucemj/md_docs (another source): ``[root@mj34 3.4]# rpm -ivh ...`` as a
    list item, rpm's lines as items of a list nested under it."""
    host = load(ROUND_P / "md-docs-zabbix-rpm-ivh-dash-listed-zh.txt", split=False).host
    assert host.reading.unrecognised_lines == 0


def test_a_post_s_bullet_points_keep_their_markers_when_nothing_is_behind_them():
    """Prose bullet points are not a logger's prefix: nothing is recognised
    behind their markers, so they stay as they are (and unread as prose is)."""
    from collectors.normalise import strip_log_prefixes

    lines = ["- first point of the post", "- second point of it", "- third one"]
    assert strip_log_prefixes(lines, None, lambda run: None, lambda kind, run: False) == 0
    assert lines[0] == "- first point of the post"
