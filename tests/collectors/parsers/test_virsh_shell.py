"""The interactive ``virsh #`` prompt: its command is the virsh sub-command.

Real paste: Ubuntu Forums, Server Platforms, "qemu/KVM: Win7 guest sees only 2
CPUs" (oudalrich, 2010-09-09), found in the public code corpus; its dominfo,
vcpuinfo and nodeinfo, each behind ``virsh #`` in a fence, kept as posted.
"""

from __future__ import annotations

from collectors.archive import load
from collectors.transcript import match_prompt

FORUM = """dominfo:

```

virsh # dominfo arkadi7
Id:             9
Name:           arkadi7
UUID:           f2637346-76c3-e0cd-e5e9-242bfb822782
OS Type:        hvm
State:          running
CPU(s):         4
CPU time:       55.3s
Max memory:     16777216 kB
Used memory:    16777216 kB
Autostart:      disable
Security model: apparmor
Security DOI:   0
Security label: libvirt-f2637346-76c3-e0cd-e5e9-242bfb822782 (enforcing)

```

virsh says that the 4 CPUs are running, but only 2 are used:

```

virsh # vcpuinfo arkadi7
VCPU:           0
CPU:            5
State:          running
CPU time:       19.5s
CPU Affinity:   yyyyyyyyyyyyyyyyyyyyyyyy

VCPU:           1
CPU:            12
State:          running
CPU time:       17.3s
CPU Affinity:   yyyyyyyyyyyyyyyyyyyyyyyy

VCPU:           2
CPU:            2
State:          running
CPU Affinity:   yyyyyyyyyyyyyyyyyyyyyyyy

VCPU:           3
CPU:            15
State:          running
CPU Affinity:   yyyyyyyyyyyyyyyyyyyyyyyy

```

I googled quite a bit but found no mention of KVM guests ignoring CPUs.

Could it have to do with this:

```

virsh # nodeinfo
CPU model:           x86_64
CPU(s):              24
CPU frequency:       2659 MHz
CPU socket(s):       4
Core(s) per socket:  6
Thread(s) per core:  1
NUMA cell(s):        1
Memory size:         74374984 kB

```
"""


def test_virsh_prompts():
    assert match_prompt("virsh # vcpuinfo arkadi7") == ("shell", "virsh vcpuinfo arkadi7", None)
    assert match_prompt("virsh # nodeinfo") == ("shell", "virsh nodeinfo", None)
    # a user other than root gets "virsh > "
    assert match_prompt("virsh > list --all") == ("shell", "virsh list --all", None)
    assert match_prompt("virsh # ") == ("shell", "virsh", None)
    # a shell redirect and prose are not prompts
    assert match_prompt("virsh > out.txt") is None
    assert match_prompt("virsh #1 is the shell") is None


def test_forum_paste_names_the_domain_from_the_virsh_prompt():
    host = load(FORUM.encode(), name="forum.txt", split=False).host
    commands = {a.get("command"): a["kind"] for a in host.artifacts}
    assert commands["virsh vcpuinfo arkadi7"] == "virsh_vcpuinfo"
    assert commands["virsh nodeinfo"] == "virsh_nodeinfo"
    [tuning] = host.domain_tuning
    assert tuning.domain == "arkadi7"
    assert [v.cpu for v in tuning.vcpus] == [5, 12, 2, 15]
    [domain] = host.domains
    assert (domain.name, domain.vcpu_current) == ("arkadi7", 4)
    # every vCPU may run on all 24 host CPUs (nodeinfo): libvirt's default, not a pin
    assert domain.vcpupin == {}
    assert host.cpu is not None and host.cpu.cpus == 24
