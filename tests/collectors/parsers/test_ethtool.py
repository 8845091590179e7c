"""ethtool -l (channels): this machine's NIC live, and a published multi-device output."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from collectors.archive import load
from collectors.facts import ParseError
from collectors.parsers.ethtool import parse_ethtool_channels
from tests.collectors.parsers.lookup import detect, for_command
from tests.conftest import FIXTURES, service_unavailable


def live_channels() -> tuple[str, str]:
    """``(device, ethtool -l output)`` of the first device that reports channels."""
    if shutil.which("ethtool") is None:
        service_unavailable("ethtool is not installed")
    for dev in ("eth0", "ens3", "enp1s0", "eno1"):
        proc = subprocess.run(["ethtool", "-l", dev], capture_output=True, text=True, timeout=30, check=False)
        if proc.returncode == 0 and "Combined" in proc.stdout:
            return dev, proc.stdout
    pytest.skip("no NIC on this machine reports channels (ethtool -l: Operation not supported)")


def test_live_ethtool_l():
    dev, out = live_channels()
    (nic,) = parse_ethtool_channels(out)
    assert nic.device == dev
    assert set(nic.maximum) == set(nic.current) == {"rx", "tx", "other", "combined"}
    # the current counts never exceed the maximums
    for key, value in nic.current.items():
        if value is not None and nic.maximum[key] is not None:
            assert value <= nic.maximum[key]
    assert detect(out).kind == "ethtool_channels"
    host = load(f"[root@db01 ~]# ethtool -l {dev}\n{out}".encode(), name="paste.txt", split=False).host
    assert [n.device for n in host.nic_channels] == [dev] and not host.errors
    assert out.splitlines()[host.nic_channels[0].lines["current.combined"] - 2].startswith("Combined:")


def test_published_multi_device_output():
    text = (FIXTURES / "network" / "ethtool_l_all_netdev_20230315.txt").read_text()
    nics = parse_ethtool_channels(text)
    assert [(n.device, n.maximum["combined"], n.current["combined"], n.current["other"]) for n in nics] == [
        ("eth0", 8, 8, 1),
        ("eth1", 8, 8, 1),
        ("eth2", 2, 2, 1),
    ]
    assert nics[0].maximum["rx"] is None  # "n/a"
    host = load(
        f"mike@lion:~> /usr/sbin/ethtool -l '*'\n\n{text}".encode(), name="paste.txt", split=False
    ).host
    assert [n.device for n in host.nic_channels] == ["eth0", "eth1", "eth2"]
    unprompted = load(text.encode(), name="channels.txt", split=False).host
    assert len(unprompted.nic_channels) == 3


def test_unsupported_device_gives_no_facts_and_no_error():
    assert parse_ethtool_channels("netlink error: Operation not supported\n") == []
    with pytest.raises(ParseError):
        parse_ethtool_channels("nothing to see here\n")


def test_commands():
    assert for_command("ethtool -l eth0").kind == "ethtool_channels"
    assert for_command("ethtool --show-channels ens1f0").kind == "ethtool_channels"


@pytest.mark.parametrize(
    "make",
    [
        lambda n: "Channel parameters for " + "a:" * n + "\n",
        lambda n: "Pre-set maximums:\nRX:" + " " * n + "x\nCurrent hardware settings:\n",
        lambda n: "Channel parameters for eth0:\nPre-set maximums:\nRX: 1\n" * (n // 50),
    ],
    ids=["colons", "spaces", "many-devices"],
)
def test_hostile_lines_cost_linear_time(make):
    from tests.collectors.parsers.scaling import assert_linear

    assert_linear(parse_ethtool_channels, make)
