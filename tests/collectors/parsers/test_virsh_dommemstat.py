"""virsh dommemstat parser on real pastes.

- https://github.com/libvirt/libvirt/pull/14 (k51312, 2020-03-23): a CentOS 7
  guest with the balloon driver (every statistic) and a Windows guest without it
  (actual, last_update, rss), each under a bold "virsh dommemstat NAME" line
- https://github.com/nicolargo/glances/issues/1531 (tests/evaluation/98-*):
  ``❯ virsh dommemstat win11`` behind a starship prompt
"""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.archive import load
from collectors.facts import ParseError
from collectors.parsers.virsh import domain_from_command, parse_virsh_dommemstat
from tests.collectors.parsers.lookup import detect, for_command

CENTOS = """actual 4194304
swap_in 0
swap_out 0
major_fault 194
minor_fault 219454
unused 3729588
available 3881812
last_update 1581406529
rss 2969400
"""
WINDOWS = """actual 8388608
last_update 1584947706
rss 8263664
"""
GLANCES = (
    Path(__file__).parents[2] / "evaluation" / "98-glances-starship-virsh-several" / "comment.txt"
).read_text(encoding="utf-8")


def test_every_statistic_of_a_ballooned_guest():
    out = parse_virsh_dommemstat(CENTOS)
    assert out.stats["actual"] == 4194304
    assert out.stats["available"] - out.stats["unused"] == 152224
    assert out.stats["major_fault"] == 194
    assert out.lines["stats.rss"] == 9
    assert out.errors == []


def test_guest_without_balloon_driver_and_detection():
    assert parse_virsh_dommemstat(WINDOWS).stats == {
        "actual": 8388608,
        "last_update": 1584947706,
        "rss": 8263664,
    }
    for text in (CENTOS, WINDOWS):
        spec = detect(text)
        assert spec is not None and spec.kind == "virsh_dommemstat"
    assert for_command("virsh dommemstat --period 10 win11").kind == "virsh_dommemstat"
    assert domain_from_command("virsh dommemstat --period 10 win11") == "win11"


def test_line_not_name_number_is_reported():
    out = parse_virsh_dommemstat(WINDOWS + "rss\n")
    assert [e.line for e in out.errors] == [4]
    with pytest.raises(ParseError):
        parse_virsh_dommemstat("error: failed to get domain 'x'\n")


def test_not_taken_for_proc_vmstat():
    spec = detect("nr_free_pages 1000\nnr_zone_inactive_anon 20\npswpin 0\n")
    assert spec is None or spec.kind != "virsh_dommemstat"


def test_prompted_paste_names_the_domain():
    host = load(GLANCES.encode(), name="comment.txt", split=False).host
    [stats] = host.domain_memstats
    assert stats.domain == "win11"
    assert stats.stats == {"actual": 8388608, "last_update": 0, "rss": 8168560}


# the whole issue text of libvirt/libvirt#14: prose that reads like data runs the
# prompted virsh list into the first dommemstat
PR14 = f"""hi, every one
  I have some trouble with the virsh to get vm mem-usage in guest os.
[root@localhost ~]# virsh list --all
 Id    Name                           State
----------------------------------------------------
 1     wwl_centos7_1708               running
 2     windows-virtio-template        running

I create two vms  one guest os is centos, the other is window 7
**virsh dommemstat wwl_centos7_1708**
{CENTOS}so i can get the vm mem-used detail,
but if my guest os is windows, though I install virtio-win driver and run blnsrv.exe -i  start the service,
I fail to get not enough vm mem stat info, as following:
**virsh dommemstat windows-virtio-template**
{WINDOWS}
can anyone tell me how can I succ to get window's vm with enough mem stat info  the same with centos ?
"""


def test_list_running_into_prose_keeps_its_rows_and_reports_the_rest():
    host = load(PR14.encode(), name="issue.txt", split=False).host
    assert host.virsh_list is not None
    assert [d.name for d in host.virsh_list.running()] == ["wwl_centos7_1708", "windows-virtio-template"]
    assert any("text after the table not read: 'I create two vms" in e.message for e in host.errors)
    # the second dommemstat, after a prose line, is read by content (the first one
    # stays inside the list's output: a known limit)
    assert [m.stats.get("rss") for m in host.domain_memstats] == [8263664]
