"""sysctl parser: sysctl -a, sysctl.conf forms and this machine."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from collectors.facts import ParseError
from collectors.parsers.sysctl import parse_sysctl
from tests.collectors.parsers.lookup import detect, for_command, for_path
from tests.conftest import service_unavailable


def _require(tool: str, package: str) -> None:
    """Skip on a developer box without the tool; fail in CI, which must install it."""
    if shutil.which(tool) is None:
        service_unavailable(f"{tool} not installed (apt-get install -y {package})")


def test_conf_with_comments_and_spaces(corpus):
    conf = parse_sysctl((corpus / "sysctl" / "insights-core_test_sysctl_SYSCTL_CONF_TEST.txt").read_text())
    # "; this one has a space" is a comment; the value keeps its inner space
    assert conf.values == {"kernel.domainname": "example.com", "kernel.modprobe": "/sbin/mod probe"}
    assert conf.lines["kernel.modprobe"] == 7


def test_mixed_forms_and_error_lines():
    text = (
        "vm.zone_reclaim_mode = 0\n"
        "kernel.numa_balancing=1\n"
        "sysctl: permission denied on key 'fs.protected_regular'\n"
        "-net.ipv4.conf.all.rp_filter = 1\n"
        "kernel.printk = 4\t4\t1\t7\n"
        "# vm.swappiness = 1\n"
    )
    conf = parse_sysctl(text)
    assert conf.values["vm.zone_reclaim_mode"] == "0"
    assert conf.values["kernel.numa_balancing"] == "1"
    assert conf.values["net.ipv4.conf.all.rp_filter"] == "1"
    assert conf.values["kernel.printk"] == "4\t4\t1\t7"
    assert "vm.swappiness" not in conf.values
    assert conf.setting_count == 4


def test_errors():
    with pytest.raises(ParseError):
        parse_sysctl("# only comments\n; here\n")


def test_registry(corpus):
    assert for_command("sysctl -a").kind == "sysctl"
    assert for_path("etc/sysctl.d/99-numa.conf").kind == "sysctl"
    assert for_path("sosreport/sos_commands/kernel/sysctl_-a").kind == "sysctl"
    assert detect((corpus / "pt-summary" / "007" / "sysctl").read_text()).kind == "sysctl"


def test_this_machine():
    _require("sysctl", "procps")
    result = subprocess.run(["sysctl", "-a"], capture_output=True, text=True)
    conf = parse_sysctl(result.stdout + result.stderr)
    assert conf.values["kernel.ostype"] == "Linux"
    assert "vm.swappiness" in conf.values
    assert conf.setting_count >= len(conf.values) > 100


def test_short_drop_in_is_recognised_by_content():
    drop_in = "# /etc/sysctl.d/90-numa.conf\nvm.zone_reclaim_mode = 1\nkernel.numa_balancing = 1\n"
    assert detect(drop_in).kind == "sysctl"
    assert parse_sysctl(drop_in).values == {"vm.zone_reclaim_mode": "1", "kernel.numa_balancing": "1"}
    # one setting quoted inside prose is not a sysctl file
    assert detect("We then set\nvm.zone_reclaim_mode = 1\non every host.\n") is None
