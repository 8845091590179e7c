"""Disk rules."""

from __future__ import annotations

import re
from collections.abc import Iterator

from collectors.facts import DiskStat, HostFacts
from engine.rules import Evidence, RuleContext, RuleFinding, evidence, finding, rule

AWAIT_MS = 10.0
UTIL_PCT = 80.0
# not data devices: loop, ram disks, optical drives, zram
NON_DATA_DEVICE = re.compile(r"^(loop|ram|sr|zram|fd)\d*")


@rule(
    "disk.latency_high",
    severity="warning",
    title="Slow or saturated data disk",
    title_zh="数据盘延迟高或已饱和",
    condition=(
        f"iostat/tsar: await >= {AWAIT_MS} ms or %util >= {UTIL_PCT} on a data device (not loop/ram/sr/zram)"
    ),
    condition_zh=(
        f"iostat/tsar：数据设备（不含 loop/ram/sr/zram）的 await >= {AWAIT_MS} ms 或 %util >= {UTIL_PCT}"
    ),
    requires=("disks",),
    # where disk latency is the question: a database or observer, or disk statistics shown
    relevant=lambda ctx, h: (
        ("disks",) if h.disks is not None or h.database is not None or h.oceanbase else ()
    ),
    measures=("disk-io-review",),
    seeds=("oceanbase-bmsql-tuning",),
    thresholds={"await_ms": AWAIT_MS, "util_pct": UTIL_PCT},
    rationale=(
        "10 ms await is the latency of a seek on spinning disks and 50-100x an SSD's; 80 % utilisation is "
        "where queueing delay grows quickly. Either on a data device stalls commits and reads. past = await "
        "/ 10 ms or util / 80 %."
    ),
    rationale_zh=(
        "10 ms 的 await 相当于机械盘一次寻道的延迟，是 SSD 的 50-100 倍；利用率达到 80 % 时排队延迟开始迅速"
        "增长。数据设备出现其中任一情况都会拖慢提交和读取。past = await / 10 ms 或 util / 80 %。"
    ),
    explanation=(
        "Device {device}: await {await_ms} ms, utilisation {util_pct}%. Commits and reads that reach this "
        "device wait on it."
    ),
    explanation_zh=(
        "设备 {device}：await {await_ms} ms，利用率 {util_pct}%。落到该设备上的提交和读取都要等待它。"
    ),
)
def latency_high(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        devices = host.disks.devices if host.disks else []
        for d in devices:
            if NON_DATA_DEVICE.match(d.device):
                continue
            found = _slow_or_busy(host, d)
            if found is not None:
                yield found


def _worst_await(d: DiskStat) -> float | None:
    """The longest of the device's waits (await, r_await, w_await)."""
    return max((w for w in (d.await_ms, d.r_await_ms, d.w_await_ms) if w is not None), default=None)


def _disk_evidence(
    host: HostFacts, d: DiskStat, worst: float | None, *, slow: bool, busy: bool
) -> list[Evidence]:
    """The evidence of the device's ``worst`` wait when it is ``slow``, then of
    its utilisation when it is ``busy``."""
    ev = []
    if slow:
        ev.append(evidence(host, f"disks[{d.device}].await_ms", worst, host.disks, line=d.line))
    if busy:
        ev.append(evidence(host, f"disks[{d.device}].util_pct", d.util_pct, host.disks, line=d.line))
    return ev


def _slow_or_busy(host: HostFacts, d: DiskStat) -> RuleFinding | None:
    worst = _worst_await(d)
    slow = worst is not None and worst >= AWAIT_MS
    busy = d.util_pct is not None and d.util_pct >= UTIL_PCT
    if not (slow or busy):
        return None
    return finding(
        "disk.latency_high",
        host,
        values={"device": d.device, "await_ms": worst, "util_pct": d.util_pct},
        evidence=_disk_evidence(host, d, worst, slow=slow, busy=busy),
        past=max((worst or 0) / AWAIT_MS, (d.util_pct or 0) / UTIL_PCT),
    )
