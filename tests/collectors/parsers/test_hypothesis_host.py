"""Property tests: every host parser returns a fact or raises ParseError, whatever the text.

Three kinds of input per parser: arbitrary unicode (NUL bytes, surrogates excluded
by Python's str), damaged copies of a valid sample (lines dropped, duplicated,
tokens replaced by garbage or numbers thousands of digits long), and the
parser's detect() on the same text (must return a bool, never raise).
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collectors.facts import Parsed, ParseError
from collectors.parsers import load_all
from tests.conftest import ROOT

# `grep eth /proc/interrupts` rows of irqbalance issue 122 (tests/fixtures/published/README.md)
IRQBALANCE_122 = ROOT / "tests" / "fixtures" / "published" / "host" / "irqbalance-122-grep-eth-interrupts.txt"

# the samples are artifact lines, kept whole
# ruff: noqa: E501

SAMPLES = {
    "lscpu": (
        "Architecture:        x86_64\nCPU(s):              96\nOn-line CPU(s) list: 0-95\n"
        "Thread(s) per core:  2\nCore(s) per socket:  24\nSocket(s):           2\nNUMA node(s):        1\n"
        "L3 cache:            33792K\nNUMA node0 CPU(s):   0-62:2\n\n# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n"
        "0,0,0,0,,0,0,0,0\n1,1,0,0,,1,1,1,0\n"
    ),
    "numactl_hardware": (
        "available: 2 nodes (0-1)\nnode 0 cpus: 0 2 4\nnode 0 size: 32722 MB\nnode 0 free: 24803 MB\n"
        "node 1 cpus: 1 3 5\nnode 1 size: 32768 MB\nnode 1 free: 28378 MB\nnode distances:\n"
        "node   0   1\n  0:  10  20\n  1:  20  10\npolicy: default\n"
    ),
    "numactl_show": (
        "policy: default\npreferred node: current\nphyscpubind: 0 1 2 3 4 5 6 7\ncpubind: 0 1\n"
        "nodebind: 0 1\nmembind: 0 1\n"
    ),
    "numastat": (
        "\t\tnode0\tnode1\nnuma_hit\t40995736\t22924791\nnuma_miss\t53540664\t10471137\n"
        "Per-node system memory usage (in MBs):\n        Node 0   Node 1   Total\n"
        " --------------- ---------------\nMemTotal  4826.20  4826.20  9652.40\n"
    ),
    "node_numastat": "numa_hit 193460335812\nnuma_miss 12624528\nlocal_node 193454780853\nother_node 18179487\n",
    "node_meminfo": "Node 1 MemTotal:      402653184 kB\nNode 1 MemFree:      342521148 kB\nNode 1 HugePages_Total: 0\n",
    "meminfo": "MemTotal:        8009912 kB\nMemFree:          538760 kB\nHugePages_Total:       0\n",
    "zoneinfo": "Node 0, zone   Normal\n  pages free     3840\n        min      52\n        low      65\n        high     78\n",
    "sysctl": "vm.zone_reclaim_mode = 0\nkernel.numa_balancing=1\n; comment\nsysctl: permission denied on key 'x'\n",
    "cmdline": "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro isolcpus=2-15 nohz_full=2-15 quiet\n",
    "hugepages": "/sys/kernel/mm/transparent_hugepage/enabled:always [madvise] never\n",
    "thp_enabled": "always [madvise] never\n",
    "thp_defrag": "always defer defer+madvise [madvise] never\n",
    "nr_hugepages": "64\n",
    "interrupts": (
        "           CPU0       CPU1\n  0:         45          0   IO-APIC-edge      timer\n"
        "NMI:        210         92   Non-maskable interrupts\nIPI0:2768808080 2844211768 Rescheduling\nERR:   0\n"
    ),
    "interrupts_grep": "\n".join(IRQBALANCE_122.read_text().splitlines()[1:4]) + "\n",
    "softirqs": "                    CPU0       CPU1\n          HI:          7          1\n      NET_RX:      43066     104508\n",
    "top": (
        "top - 17:19:08 up 47 days, 17:07, 3 users, load average: 22.43, 7.27, 3.81\n"
        "Tasks: 1421 total, 2 running, 1419 sleeping, 0 stopped, 0 zombie\n"
        "%Cpu0 : 45.6 us, 19.3 sy, 0.0 ni, 4.9 id, 0.0 wa, 0.0 hi, 30.2 si, 0.0 st\n"
        "KiB Mem : 79179116+total, 38146384+free, 28456528+used, 12576206+buff/cache\n"
        "PID USER PR NI VIRT RES SHR S %CPU %MEM TIME+ COMMAND\n"
        "45497 test 20 0 101.7g 90.8g 68400 S 1329 12.0 2737:33 /bin/observer\n"
    ),
    "mpstat": (
        "10:00:01 AM  CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle\n"
        "10:00:02 AM  all   20.00    0.00    5.00    0.00    0.00   10.00    0.00    0.00    0.00   65.00\n"
        "Average:       0   80.00    0.00   10.00    0.00    0.00   10.00    0.00    0.00    0.00    0.00\n"
    ),
    "sar_cpu": "0:48:34\tCPU\tZuser\t%nice\t%system\tZiowait\t%steal\tZidle\n0:48:35\ta11\t20,63\t51.44\t5.93\t0.03\t0.00\t21.96\n",
    "iostat": (
        "Device            r/s     w/s  r_await w_await  aqu-sz  %util\n"
        "nvme0n1        100.00  300.00     2.00    6.00    1.00  50.00\n"
        "Time ---------dm-0---------\nTime rrqms await rawait wawait util\n25/10/21-14:29 0.00 0.03 0.08 0.03 8.02\n"
    ),
    "df": (
        "Filesystem 1K-blocks Used Available Use% Mounted on\n/dev/sda3 51343996 33182756 15523416 69% /\n"
        "/dev/mapper/long-name\n       1.5T  1.2T  300G  81% /data\n"
    ),
    "kernel": 'Linux db01 4.18.0-305.el8.x86_64 #1 SMP x86_64 GNU/Linux\nPRETTY_NAME="Debian GNU/Linux 12"\n',
}

KINDS = sorted(SAMPLES)
EXAMPLES = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# garbage that tends to break naive parsers: NULs, huge numbers, separators, unicode digits
_huge = st.text(alphabet="0123456789", min_size=20, max_size=6000)
_token = st.one_of(
    st.text(max_size=30),
    _huge,
    st.sampled_from(
        [
            "\x00",
            ":",
            "=",
            "%",
            "[",
            "]",
            "-",
            "--",
            "0-",
            "-1",
            "9" * 5000,
            "١٢٣",
            "1e309",
            "nan",
            "\t",
            "²",
            "①",
            "٣",
        ]
    ),
)


@st.composite
def damaged(draw, kind: str) -> str:
    lines = SAMPLES[kind].splitlines()
    for _ in range(draw(st.integers(0, 6))):
        op = draw(st.sampled_from(["drop", "dup", "token", "insert", "truncate"]))
        if not lines:
            lines.append(draw(st.text(max_size=50)))
            continue
        pos = draw(st.integers(0, len(lines) - 1))
        if op == "drop":
            del lines[pos]
        elif op == "dup":
            lines.insert(pos, lines[pos])
        elif op == "insert":
            lines.insert(pos, draw(st.text(max_size=80)))
        elif op == "truncate":
            lines[pos] = lines[pos][: draw(st.integers(0, max(len(lines[pos]), 0)))]
        else:
            tokens = lines[pos].split(" ")
            at = draw(st.integers(0, len(tokens) - 1))
            tokens[at] = draw(_token)
            lines[pos] = " ".join(tokens)
    return "\n".join(lines)


def _kwargs(kind: str, data) -> dict:
    if kind in ("numastat", "node_numastat"):
        return {"node": data.draw(st.one_of(st.none(), st.integers(-(10**30), 10**30)))}
    if kind == "hugepages":
        return {"name": data.draw(st.sampled_from([None, "thp_enabled", "thp_defrag", "nr_hugepages"]))}
    return {}


def _check(kind: str, text: str, kwargs: dict) -> None:
    spec = load_all()[kind]
    try:
        fact = spec.func(text, **kwargs)
    except ParseError as exc:
        assert isinstance(exc.message, str)
        return
    assert isinstance(fact, Parsed)
    assert all(isinstance(v, int) for v in fact.lines.values())
    if spec.detect is not None:
        assert spec.detect(text[:8192]) in (True, False)


HOST_MODULES = {
    f"collectors.parsers.{name}"
    for name in [
        "lscpu",
        "numactl",
        "numastat",
        "node_meminfo",
        "meminfo",
        "zoneinfo",
        "sysctl",
        "cmdline",
        "hugepages",
        "interrupts",
        "softirqs",
        "cpu_usage",
        "iostat",
        "df",
        "kernel",
    ]
}


def test_every_host_kind_has_a_sample():
    registry = load_all()
    ours = {kind for kind, spec in registry.items() if spec.func.__module__ in HOST_MODULES}
    # every parser these modules register is fuzzed below, and nothing else
    assert ours == set(KINDS)


@pytest.mark.parametrize("kind", KINDS)
@EXAMPLES
@given(text=st.text(max_size=2000), data=st.data())
def test_any_text(kind, text, data):
    _check(kind, text, _kwargs(kind, data))


@pytest.mark.parametrize("kind", KINDS)
@EXAMPLES
@given(data=st.data())
def test_damaged_sample(kind, data):
    _check(kind, data.draw(damaged(kind)), _kwargs(kind, data))


@pytest.mark.parametrize("kind", KINDS)
def test_samples_parse(kind):
    fact = load_all()[kind].func(SAMPLES[kind])
    assert isinstance(fact, Parsed)


# Inputs that made earlier regexes backtrack quadratically (lazy groups before
# "\s*$", "^\s*(X)?\s*Y" patterns) or made the OCR pairing of lscpu quadratic.
_N = 100_000
PATHOLOGICAL = {
    "blank_run": "a.b=" + " " * _N + "x\n",
    "key_blank_run": "Key:" + " " * _N + "x",
    "node_blank_run": "node 0 cpus:" + " " * _N + "x\n",
    "os_release_blank_run": 'PRETTY_NAME="' + " " * _N + "x",
    "release_blank_run": " " * _N + "x release 7",
    "top_mem_blank_run": " " * _N + "x",
    "tsar_title": "Time -" + "a-" * _N,
    "distance_header": "node distances:\nnode" + " 1" * _N + " x\n",
    "load_average_commas": "load average: " + "1," * _N,
    "many_key_only_lines": "CPU(s):\nSocket(s):\n" * (_N // 20),
}


@pytest.mark.parametrize("kind", KINDS)
def test_pathological_inputs_stay_linear(kind):
    import contextlib
    import time

    func = load_all()[kind].func
    for name, text in PATHOLOGICAL.items():
        start = time.perf_counter()
        with contextlib.suppress(ParseError):
            func(text)
        elapsed = time.perf_counter() - start
        # each runs in well under 0.1 s here; quadratic behaviour took minutes
        assert elapsed < 2.0, (kind, name, elapsed)
