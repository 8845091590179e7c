"""Network rules: artificial delay, LAN latency, soft-interrupt placement."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from collectors.facts import CpuUsage, CpuUtil, HostFacts, PingResult
from engine.rules import RuleContext, RuleFinding, evidence, finding, rule

LAN_RTT_MS = 0.5
SOFTIRQ_HOT_PCT = 20.0  # a CPU spending this much time in softirq is hot
SOFTIRQ_QUIET_PCT = 1.0  # "the rest near 0"
SOFTIRQ_MAX_HOT_SHARE = 0.25  # hot CPUs are at most this share of the CPUs
NET_RX_CONCENTRATION = 0.9  # /proc/softirqs: share of NET_RX on the hot CPUs
SOFTIRQS_MIN_CPUS = 8  # below this, concentration on "few" CPUs is normal
SOFTIRQS_MIN_NET_RX = 1_000_000


@rule(
    "net.netem_delay",
    severity="critical",
    title="A tc netem qdisc delays traffic",
    title_zh="tc netem 队列人为增加了网络延迟",
    condition="tc qdisc shows a netem qdisc with a delay on any device",
    condition_zh="tc qdisc 显示任一设备上有带延迟的 netem qdisc",
    requires=("tc",),
    measures=("remove-netem",),
    seeds=("oceanbase-bmsql-tuning",),
    thresholds={"delay_ms": 0},
    rationale=(
        "Any netem delay on a production device is a left-over test setting; 1 ms added to a 0.1-0.2 ms LAN "
        "round trip is 5-10x the latency every statement pays (seed 004). Critical because it is pure loss "
        "with a one-line fix. past = delay / 0.5 ms (a slow LAN round trip)."
    ),
    rationale_zh=(
        "生产设备上的任何 netem 延迟都是遗留的测试设置；在 0.1-0.2 ms 的局域网往返上增加 1 ms，就是每条语句"
        "都要承受的 5-10 倍延迟（奠基案例 004）。定为严重，因为它纯属损失且一行命令即可修复。past = 延迟 / "
        "0.5 ms（较慢的局域网往返）。"
    ),
    # a host with slow round trips, or one that showed its qdiscs
    relevant=lambda ctx, h: (
        ("tc",) if h.tc is not None or any((p.rtt_avg_ms or 0) >= LAN_RTT_MS for p in h.pings) else ()
    ),
    explanation=(
        "Device {device} on {host} has a netem qdisc adding {delay_ms} ms to every packet, a test setting "
        "that was left behind: every round trip through it is slower by that much."
    ),
    explanation_zh=(
        "{host} 的网卡 {device} 上有 netem 队列，每个包增加 {delay_ms} ms 延迟，这是遗留的测试配置：经过它的"
        "每次往返都会变慢。"
    ),
)
def netem_delay(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        if not host.tc:
            continue
        for q in host.tc.qdiscs:
            if q.kind != "netem" or not q.delay_ms:
                continue
            yield finding(
                "net.netem_delay",
                host,
                # a line of "tc qdisc show dev X" pasted without its command names no device
                values={"device": q.device or "?", "delay_ms": q.delay_ms},
                evidence=[
                    evidence(host, f"tc.qdiscs[{q.device}].delay_ms", q.delay_ms, host.tc, line=q.line)
                ],
                past=q.delay_ms / LAN_RTT_MS,
            )


def _not_a_lan_peer(p: PingResult) -> bool:
    """A ping to a public address measures the internet path, and one to the machine
    itself (127.0.0.0/8, ::1, ``localhost``) no path at all; names and masked addresses
    ("xx.xx.xx.196") count as LAN peers. The numeric address the replies came from
    decides when the output shows one (``PING name (100.42.212.8)``)."""
    if (p.target or "").strip("()").lower() in ("localhost", "localhost.localdomain", "ip6-localhost"):
        return True
    for text in (p.address, p.target):
        try:
            address = ipaddress.ip_address((text or "").strip("()"))
        except ValueError:
            continue
        return address.is_global or address.is_loopback
    return False


def rtt_decided(p: PingResult) -> bool:
    """Whether ``p``'s average round trip is on one side of LAN_RTT_MS whatever
    its replies below the tool's resolution ("time<1ms") measured: from the tool's
    statistics, from measured replies only, or with those bounded replies read
    as 0 and as their bound alike (5 replies at 100 ms and 5 below 1 ms: at least 50 ms)."""
    avg = _avg_rtt(p)
    if avg is None or not p.replies_below_ms or not p.replies_ms:
        return True
    least = (sum(p.replies_ms) - sum(p.replies_below_ms)) / len(p.replies_ms)
    return least >= LAN_RTT_MS or avg < LAN_RTT_MS


def ping_rtt_known(host: HostFacts) -> bool:
    """A ping of ``host`` whose round trip decides net.lan_rtt_high (:func:`rtt_decided`)."""
    return any(rtt_decided(p) for p in host.pings)


def _avg_rtt(p: PingResult) -> float | None:
    if p.rtt_avg_ms is not None:
        return p.rtt_avg_ms
    if p.replies_ms:
        return sum(p.replies_ms) / len(p.replies_ms)
    return None


@rule(
    "net.lan_rtt_high",
    severity="warning",
    title="High round-trip time between hosts of one deployment",
    title_zh="同一部署内主机间往返延迟偏高",
    condition=(
        f"ping RTT average >= {LAN_RTT_MS} ms (mean of the replies when there is no summary) to a peer "
        "that is neither a public internet address nor the machine itself (loopback). Windows' replies "
        "'time<1ms' bound the RTT without measuring it: without the statistics line the rule decides only "
        "when the mean is on one side of the threshold with them read as 0 and as 1 ms alike, else it is "
        "not checked"
    ),
    condition_zh=(
        f"到既非公网地址、也非本机（环回地址）的对端的 ping RTT 平均值 >= {LAN_RTT_MS} ms"
        "（没有汇总行时取各次回复的平均值）。Windows 回复中的 “time<1ms” 只给出上限、不是测量值："
        "没有统计行时，只有把这些回复按 0 和按 1 ms 计算的平均值都在阈值同一侧才判定，否则本规则不检查"
    ),
    requires=("pings",),
    # the hosts of a deployment: an observer or proxy, or one of several physical hosts
    relevant=lambda ctx, h: (
        ("pings", "ping_rtt")
        if h.pings
        else ("pings",)
        if h.oceanbase or len(ctx.physical_hosts()) >= 2
        else ()
    ),
    measures=("remove-netem", "colocate-proxy-and-observers"),
    seeds=("oceanbase-bmsql-tuning",),
    thresholds={"rtt_avg_ms": LAN_RTT_MS},
    rationale=(
        "Inside one data centre a round trip is 0.1-0.2 ms; from 0.5 ms an OLTP statement that makes "
        "several trips (client, proxy, observer, replica) loses milliseconds. past = RTT / 0.5 ms."
    ),
    rationale_zh=(
        "同一数据中心内一次往返为 0.1-0.2 ms；从 0.5 ms 起，需要多次往返（客户端、代理、observer、副本）的 "
        "OLTP 语句会损失数毫秒。past = RTT / 0.5 ms。"
    ),
    explanation=(
        "Ping from {host} to {target} averages {avg_ms:.2f} ms; inside one data centre a round trip is "
        "normally 0.1-0.2 ms, and OLTP statements pay it several times each."
    ),
    explanation_zh=(
        "{host} 到 {target} 的 ping 平均 {avg_ms:.2f} ms；同一机房内往返通常为 0.1-0.2 ms，OLTP 语句每条都要"
        "付出多次这样的延迟。"
    ),
)
def lan_rtt_high(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        for p in host.pings:
            avg = _avg_rtt(p)
            if avg is not None and avg >= LAN_RTT_MS and rtt_decided(p) and not _not_a_lan_peer(p):
                yield _slow_ping_finding(host, p, avg)


def _slow_ping_finding(host: HostFacts, p: PingResult, avg: float) -> RuleFinding:
    """net.lan_rtt_high for ping ``p`` (average ``avg`` ms), naming the host it
    ran on when a mesh script's output says so ("crdb1a to 1d")."""
    values = {"target": p.target, "avg_ms": avg} | ({"host": p.from_host} if p.from_host else {})
    path = f"pings[{p.from_host} to {p.target}]" if p.from_host else f"pings[{p.target}]"
    return finding(
        "net.lan_rtt_high",
        host,
        values=values,
        evidence=[evidence(host, f"{path}.rtt_avg_ms", round(avg, 3), p, "rtt_avg_ms", "rtt")],
        past=avg / LAN_RTT_MS,
    )


def _softirq_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    """Soft interrupts show in the all-CPU figure (top's "si", mpstat's "all" line)
    but no per-CPU line says where: one CPU at 100 % is 25 % of a 4-CPU box's total."""
    usage = host.cpu_usage
    if host.softirqs:
        return ("softirqs",)
    if not usage:
        return ()
    if any(c.cpu != "all" for c in usage.per_cpu):
        return ("per_cpu_usage",)
    return () if _no_softirq_time(usage) else ("per_cpu_usage",)


def _no_softirq_time(usage: CpuUsage) -> bool:
    """The all-CPU figures report soft interrupt time, and all of it is 0 (any
    time at all matters: one CPU at 100 % is 1.6 % of a 64-CPU total; none
    reported: cannot tell)."""
    overall = [u.si for u in [usage.overall, *usage.samples] if u is not None and u.si is not None]
    return bool(overall) and not any(si > 0 for si in overall)


@rule(
    "net.softirq_hotspot",
    severity="warning",
    title="Soft interrupts are concentrated on a few CPUs",
    title_zh="软中断集中在少数 CPU 上",
    condition=(
        f"top/mpstat: CPUs with si >= {SOFTIRQ_HOT_PCT}% are at most {int(SOFTIRQ_MAX_HOT_SHARE * 100)}% "
        "of the "
        f"CPUs while the others are <= {SOFTIRQ_QUIET_PCT}%; or /proc/softirqs on >= {SOFTIRQS_MIN_CPUS} "
        "CPUs: "
        f"{int(NET_RX_CONCENTRATION * 100)}% of NET_RX on at most {int(SOFTIRQ_MAX_HOT_SHARE * 100)}% of them"
    ),
    condition_zh=(
        f"top/mpstat：si >= {SOFTIRQ_HOT_PCT}% 的 CPU 至多占全部 CPU 的 {int(SOFTIRQ_MAX_HOT_SHARE * 100)}%，"
        f"而其他 CPU <= {SOFTIRQ_QUIET_PCT}%；或在 >= {SOFTIRQS_MIN_CPUS} 个 CPU 上的 /proc/softirqs："
        f"{int(NET_RX_CONCENTRATION * 100)}% 的 NET_RX 集中在至多 {int(SOFTIRQ_MAX_HOT_SHARE * 100)}% 的 CPU "
        "上"
    ),
    requires=("per_cpu_usage", "softirqs"),
    requires_mode="any",
    relevant=_softirq_relevant,
    measures=("irq-softirq-affinity",),
    seeds=("oceanbase-bmsql-tuning",),
    thresholds={
        "hot_si_pct": SOFTIRQ_HOT_PCT,
        "quiet_si_pct": SOFTIRQ_QUIET_PCT,
        "max_hot_share": SOFTIRQ_MAX_HOT_SHARE,
        "net_rx_concentration": NET_RX_CONCENTRATION,
    },
    rationale=(
        "A CPU spending 20 % in softirq is a fifth of a core taken from the database threads it also runs; "
        "concentrated on a quarter of the CPUs or fewer while the rest are idle, it is placement (RPS/RSS, "
        "IRQ affinity), not load. Below 8 CPUs concentration on few CPUs is normal."
    ),
    rationale_zh=(
        "一个 CPU 在软中断中花费 20 % 的时间，就是从同样运行在它上面的数据库线程那里拿走了五分之一个核；当软"
        "中断集中在四分之一或更少的 CPU 上而其余 CPU 空闲时，这是放置问题（RPS/RSS、中断亲和性），而不是负载"
        "问题。少于 8 个 CPU 时集中在少数 CPU 上是正常的。"
    ),
    explanations={
        "per_cpu": (
            "{hot} of {cpus} CPUs spend >= {hot_pct:.0f}% in soft interrupts (CPU {hot_cpus}) while the "
            "rest spend almost none: the NIC queues are served by those few CPUs, which also run the "
            "database threads.",
            "{cpus} 个 CPU 中有 {hot} 个在软中断上花费 >= {hot_pct:.0f}% 的时间（CPU {hot_cpus}），"
            "其余几乎为 0：网卡队列只由这几个 CPU 处理，而它们同时还在运行数据库线程。",
        ),
        "net_rx": (
            "{share:.0%} of NET_RX soft interrupts ran on {hot_cpus}: receive processing is not spread over "
            "the CPUs.",
            "{share:.0%} 的 NET_RX 软中断发生在 {hot_cpus} 上：收包处理没有分散到各 CPU。",
        ),
    },
)
def softirq_hotspot(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        # the per-CPU %si of top/mpstat says it directly; else /proc/softirqs' NET_RX counts
        hotspot = _si_hotspot(host) or _net_rx_hotspot(host)
        if hotspot is not None:
            yield hotspot


def _si_hotspot(host: HostFacts) -> RuleFinding | None:
    """A few CPUs at or above SOFTIRQ_HOT_PCT of %si while the rest are quiet."""
    usage = host.cpu_usage
    cpus = _per_cpu_softirq(usage)
    hot = _hot_among_quiet(cpus)
    if not hot:
        return None
    return finding(
        "net.softirq_hotspot",
        host,
        "per_cpu",
        values={
            "hot": len(hot),
            "cpus": len(cpus),
            "hot_pct": SOFTIRQ_HOT_PCT,
            "hot_cpus": ", ".join(c.cpu for c in hot),
        },
        evidence=[evidence(host, f"cpu_usage.per_cpu[{c.cpu}].si", c.si, usage, line=c.line) for c in hot],
    )


def _per_cpu_softirq(usage: CpuUsage | None) -> list[CpuUtil]:
    """The per-CPU lines (not the all-CPU one) that report soft interrupt time (%si)."""
    return [c for c in (usage.per_cpu if usage else []) if c.cpu != "all" and c.si is not None]


def _hot_among_quiet(cpus: list[CpuUtil]) -> list[CpuUtil]:
    """The CPUs at or above SOFTIRQ_HOT_PCT of %si, when they are at most
    SOFTIRQ_MAX_HOT_SHARE of ``cpus`` and every other one is near 0; else none."""
    hot = [c for c in cpus if (c.si or 0.0) >= SOFTIRQ_HOT_PCT]
    warm = any(SOFTIRQ_QUIET_PCT < (c.si or 0.0) < SOFTIRQ_HOT_PCT for c in cpus)  # neither hot nor near 0
    few = len(hot) <= SOFTIRQ_MAX_HOT_SHARE * len(cpus)
    return hot if few and not warm else []


def _net_rx_hotspot(host: HostFacts) -> RuleFinding | None:
    """NET_RX softirqs concentrated (NET_RX_CONCENTRATION) on a few CPUs."""
    sirq = host.softirqs
    if sirq is None:
        return None
    rx = sirq.rows.get("NET_RX", [])
    concentrated = _concentrated(rx)
    if concentrated is None:
        return None
    ranked, share = concentrated
    names = [sirq.cpus[i] if i < len(sirq.cpus) else str(i) for i in ranked]
    return finding(
        "net.softirq_hotspot",
        host,
        "net_rx",
        values={"share": share, "hot_cpus": ", ".join(names)},
        evidence=[
            evidence(
                host,
                "softirqs.NET_RX",
                dict(zip(names, [rx[i] for i in ranked], strict=True)),
                sirq,
                "NET_RX",
            )
        ],
    )


def _concentrated(rx: list[int]) -> tuple[list[int], float] | None:
    """The busiest CPUs (columns) of the NET_RX counts ``rx`` and their share,
    when enough CPUs and softirqs are counted and that share reaches
    NET_RX_CONCENTRATION; else None."""
    if len(rx) < SOFTIRQS_MIN_CPUS or sum(rx) < SOFTIRQS_MIN_NET_RX:
        return None
    ranked, share = _busiest(rx)
    return (ranked, share) if share >= NET_RX_CONCENTRATION else None


def _busiest(counts: list[int]) -> tuple[list[int], float]:
    """The columns of the busiest SOFTIRQ_MAX_HOT_SHARE of the CPUs (at least
    one), busiest first, and their share of all the counts."""
    top_n = max(1, int(SOFTIRQ_MAX_HOT_SHARE * len(counts)))
    ranked = sorted(range(len(counts)), key=lambda i: counts[i], reverse=True)[:top_n]
    return ranked, sum(counts[i] for i in ranked) / sum(counts)
