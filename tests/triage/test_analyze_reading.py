"""``manage.py analyze``: what Casebook read of each host, and the hosts of one
paste (a KVM host and, after ``ssh``, its guest) analysed as a pair."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from tests.conftest import FIXTURES

ZSTACK = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before"


def _one_paste(tmp_path):
    host = (ZSTACK / "zstack-9.txt").read_text().rstrip("\n").removesuffix("[root@zstack-9 ~]#").rstrip("\n")
    guest = (ZSTACK / "infoplus-db.txt").read_text()
    path = tmp_path / "session.txt"
    path.write_text(f"{host}\n[root@zstack-9 ~]# ssh infoplus-db\n{guest}")
    return path


def test_json_has_the_reading_of_each_host_of_one_paste(tmp_path):
    path = _one_paste(tmp_path)
    out = io.StringIO()
    call_command("analyze", str(path), "--json", "--no-similar", stdout=out)
    payload = json.loads(out.getvalue())
    hosts = payload["facts"]["hosts"]
    assert [h["hostname"] for h in hosts] == ["zstack-9", "infoplus-db"]
    assert sum(h["reading"]["lines"] for h in hosts) == len(path.read_text().split("\n"))
    for h in hosts:
        r = h["reading"]
        parts = ("read_lines", "prompt_lines", "prose_lines", "unused_lines", "unrecognised_lines")
        assert sum(r[part] for part in parts) == r["lines"]
        assert all({"kind", "start_line", "end_line", "parsed"} <= set(a) for a in r["artifacts"])
    pairs = {(f["rule"], f["host"]) for f in payload["findings"]}
    assert ("mysql.numa_interleave_unavailable", "infoplus-db") in pairs


def test_text_report_says_what_was_read(tmp_path):
    out = io.StringIO()
    call_command("analyze", str(_one_paste(tmp_path)), "--no-similar", stdout=out)
    assert "2 host(s)" in out.getvalue()
    assert "lines into" in out.getvalue() and "unrecognised block(s)" in out.getvalue()


# ---------------------------------------------------------------- stored snapshot


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    return settings.MEDIA_ROOT


def test_an_uploaded_paste_of_two_hosts_stores_the_second_in_extra_hosts(db, media, tmp_path, monkeypatch):
    from django.contrib.auth import get_user_model

    from triage import analysis, uploads
    from triage.models import Snapshot

    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    user = get_user_model().objects.create_user("carol", password="pw-carol-123")
    snap = uploads.create_snapshot(
        owner=user, data=_one_paste(tmp_path).read_bytes(), filename="session.txt", label="zstack-9"
    )
    analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    snap = Snapshot.objects.get(pk=snap.pk)
    assert snap.status == Snapshot.Status.DONE
    assert snap.facts["hostname"] == "zstack-9" and snap.facts["reading"]["lines"] > 0
    assert [h["hostname"] for h in snap.extra_hosts] == ["infoplus-db"]
    assert snap.extra_hosts[0]["database"]["version"].startswith("10.4")
    assert snap.findings.filter(rule="mysql.numa_interleave_unavailable").exists()
