"""Redis: how long its forks stop it (background saves and replica syncs)."""

from __future__ import annotations

from collections.abc import Iterator

from collectors.facts import HostFacts, ServiceLog
from engine.rules import Phrase, RuleContext, RuleFinding, evidence, finding, rule
from engine.rules._hostside import stores_of

FORK_WARN_MS = 500.0  # a fork stops Redis this long: every client waits
FORK_INFO_MS = 100.0
# Redis's latency guide: 13 ms/GB on bare metal and VMware, 239 ms/GB on Xen PV (EC2)
FORK_SLOW_MS_PER_GB = 100.0


def _fork_ms(host: HostFacts) -> tuple[float, ServiceLog, int | None, str] | None:
    """The longest fork seen (the first of equal ones): (ms, the log or INFO, line, fact)."""
    return max(_forks(host), key=lambda fork: fork[0], default=None)


def _forks(host: HostFacts) -> Iterator[tuple[float, ServiceLog, int | None, str]]:
    """Every fork Redis's INFO (latest_fork_usec) or its log shows."""
    for log in host.services:
        if log.kind != "redis":
            continue
        usec = log.settings.get("latest_fork_usec", "")
        if usec.isdigit():
            yield int(usec) / 1000, log, log.lines.get("latest_fork_usec"), "services[redis].latest_fork_usec"
        for ms, line in log.forks:
            yield ms, log, line, "services[redis].fork_ms"


def redis_fork_ms(host: HostFacts) -> float | None:
    """How long Redis's longest fork seen took, in ms (None: no INFO
    latest_fork_usec and no background save in its log)."""
    worst = _fork_ms(host)
    return worst[0] if worst is not None else None


def _used_gb(host: HostFacts) -> float | None:
    for log in host.services:
        used = log.settings.get("used_memory", "")
        if log.kind == "redis" and used.isdigit() and int(used) > 0:
            return int(used) / 1024**3
    return None


@rule(
    "redis.fork_latency",
    severity="warning",
    title="Redis stops for a long fork at every background save",
    title_zh="Redis 每次后台保存都因 fork 过慢而停顿",
    condition=(
        f"the latest fork of Redis (INFO latest_fork_usec, or the gap between 'Saving...' and 'Background "
        f"saving started' in its log) took >= {FORK_WARN_MS:.0f} ms (warning) or >= {FORK_INFO_MS:.0f} ms "
        "(info)"
    ),
    condition_zh=(
        "Redis 最近一次 fork（INFO latest_fork_usec，或日志中 “Saving...” 到 “Background saving started” "
        "的间隔）"
        f"耗时 >= {FORK_WARN_MS:.0f} ms（warning）或 >= {FORK_INFO_MS:.0f} ms（info）"
    ),
    requires=("datastore",),
    measures=("redis-fork-latency",),
    thresholds={
        "fork_warn_ms": FORK_WARN_MS,
        "fork_info_ms": FORK_INFO_MS,
        "slow_fork_ms_per_gb": FORK_SLOW_MS_PER_GB,
    },
    rationale=(
        "Redis serves no command while fork() copies its page tables, so the fork time is a latency spike "
        "every client sees at each BGSAVE, AOF rewrite or full resync. Redis's latency guide measures about "
        "13 ms per GB on bare metal and VMware and 239 ms per GB on Xen PV (EC2), the case of antirez's "
        "write-up. 100 ms is past any interactive latency budget; 500 ms approaches client and cluster "
        "timeouts. When used_memory is known the rate is reported too (>= 100 ms/GB: a platform with slow "
        "fork). past = fork / 500 ms."
    ),
    rationale_zh=(
        "fork() 复制页表期间 Redis 不处理任何命令，因此 fork 耗时就是每次 BGSAVE、AOF 重写或全量同步时所有"
        "客户端"
        "看到的延迟尖刺。Redis 的延迟指南实测：物理机和 VMware 约 13 ms/GB，Xen PV（EC2）239 ms/GB，正是 "
        "antirez 那篇文章的场景。100 ms 已超出交互延迟预算；500 ms 接近客户端和集群的超时。已知 used_memory"
        " 时"
        "同时给出速率（>= 100 ms/GB：fork 慢的平台）。past = fork / 500 ms。"
    ),
    # a Redis seen (its log, INFO, a process): the fork time decides
    relevant=lambda ctx, host: ("redis_fork",) if stores_of(host, {"redis"}) else (),
    peer=(
        "Redis LATENCY DOCTOR (fork quality from stat_fork_rate; 'better VM' advice); none among the host "
        "checkers"
    ),
    explanations={
        "": (
            "{host}: the latest Redis fork took {ms:.0f} ms{rate}; Redis answers nothing while it forks, so "
            "every background save or replica sync is a stall of that length for all clients.",
            "{host}：Redis 最近一次 fork 耗时 {ms:.0f} ms{rate}；fork 期间 Redis 不响应任何请求，每次后台保"
            "存或"
            "副本同步都会让所有客户端停顿这么久。",
        ),
        "rate": (" ({per_gb:.0f} ms per GB of {gb:.1f} GB)", "（{gb:.1f} GB，每 GB {per_gb:.0f} ms）"),
    },
)
def fork_latency(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        worst = _fork_ms(host)
        if worst is None or worst[0] < FORK_INFO_MS:
            continue
        ms, log, line, fact = worst
        gb = _used_gb(host)
        rate = Phrase("rate", {"per_gb": ms / gb, "gb": gb}) if gb else ""
        yield finding(
            "redis.fork_latency",
            host,
            values={"ms": ms, "rate": rate},
            evidence=[evidence(host, fact, ms, log, line=line)],
            severity="warning" if ms >= FORK_WARN_MS else "info",
            past=ms / FORK_WARN_MS,
        )
