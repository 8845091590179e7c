"""TuneD profile parser (tuned-adm active/list, /etc/tuned/active_profile) on
published outputs (tests/fixtures/published/README.md)."""

from __future__ import annotations

import pytest

from collectors.archive import load
from collectors.facts import ParseError
from collectors.parsers.tuned import parse_active_profile, parse_tuned_adm
from tests.collectors.parsers.lookup import detect, for_command, for_path
from tests.conftest import FIXTURES

PUBLISHED = FIXTURES / "published"


def _host(name: str):
    path = PUBLISHED / name
    return load(path.read_bytes(), name=name, split=False).host


def test_tuned_adm_list_of_a_centos7_guest():
    host = _host("tuned-adm-list-centos7-virtual-guest.txt")
    assert host.tuned.profiles == ["virtual-guest"] and host.tuned.applied is True
    assert len(host.tuned.available) == 9 and "virtual-host" in host.tuned.available
    assert host.tuned.lines["profiles"] == 12  # the line of the paste that says it
    assert not host.errors


def test_a_preset_profile_is_not_applied():
    """tuned-adm list while the daemon is stopped (insights-core test data): the
    preset is named, but nothing of it is in effect."""
    host = _host("tuned-adm-list-preset-insights.txt")
    assert host.tuned.profiles == ["virtual-guest"] and host.tuned.applied is False


def test_active_after_a_list_cut_before_its_status_line():
    host = _host("tuned-oracle-transcript.txt")
    assert host.tuned.profiles == ["oracle"] and host.tuned.applied is True
    assert not host.errors


def test_active_profile_file_and_merged_profiles():
    # TuneD writes the profiles it was told to merge, space-separated
    out = parse_active_profile("virtual-guest powersave\n")
    assert out.profiles == ["virtual-guest", "powersave"] and out.applied is None
    assert parse_tuned_adm("No current active profile.\n").applied is False
    with pytest.raises(ParseError):
        parse_active_profile("Current active profile: oracle\nmore\n")
    with pytest.raises(ParseError):
        parse_tuned_adm("Available profiles:\n")


def test_registrations():
    assert for_command("tuned-adm active").kind == "tuned_adm"
    assert for_command("sudo tuned-adm list").kind == "tuned_adm"
    assert for_path("sosreport-h/sos_commands/tuned/tuned-adm_active").kind == "tuned_adm"
    assert for_path("sosreport-h/sos_commands/tuned/tuned-adm_list").kind == "tuned_adm"
    assert for_path("sosreport-h/etc/tuned/active_profile").kind == "tuned_active_profile"
    assert for_command("cat /etc/tuned/active_profile").kind == "tuned_active_profile"
    assert detect("Current active profile: virtual-guest\n").kind == "tuned_adm"
