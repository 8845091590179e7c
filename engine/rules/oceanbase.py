"""OceanBase observer and ODP (obproxy) rules."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from collectors.derived.database import observer_cpus
from collectors.facts import HostFacts, OceanBaseFacts
from engine.rules import Evidence, RuleContext, RuleFinding, as_int, evidence, finding, rule

SMALL_OBSERVER_CPUS = 16
CPU_QUOTA_CONCURRENCY_MAX = 4  # fires at >= this on a small observer
NET_THREADS_SHARE = 0.5  # net_thread_count above this share of the observer's CPUs
REMOTE_PLAN_SHARE = 0.20  # plan_type 2 / (1 + 2 + 3)
DEFAULT_ROUTING_MODE = "oceanbase"
__all__ = ["observer_cpus"]  # derived, re-exported


_OB_FACTS: dict[str, Callable[[OceanBaseFacts], bool]] = {
    "oceanbase": lambda ob: bool(ob.parameters),
    "odp": lambda ob: bool(ob.proxy_config),
    "sql_audit": lambda ob: bool(ob.plan_type_counts),
}


def _ob_needs(ctx: RuleContext, host: HostFacts, fact: str) -> tuple[str, ...]:
    """A host that showed OceanBase needs ``fact`` unless another host of the
    deployment carries it (the parameters, the proxy's configuration and the
    SQL audit are the cluster's, pasted from wherever the client ran)."""
    if host.oceanbase is None:
        return ()
    have = _OB_FACTS[fact]
    if any(h is not host and h.oceanbase is not None and have(h.oceanbase) for h in ctx.hosts):
        return ()
    return (fact,)


def _int_parameter(ob: OceanBaseFacts | None, name: str) -> int | None:
    """An observer parameter read as a whole number (None: not shown, or not a number)."""
    return as_int(ob.parameters.get(name)) if ob else None


def _observer_cpus_evidence(host: HostFacts, cpus: int, fact: str) -> Evidence:
    """The observer's CPUs (``observer_cpus``), cited from the parameter or the host's CPUs."""
    parsed = host.oceanbase if "oceanbase" in fact else host.cpu
    return evidence(host, fact, cpus, parsed, "cpu_count", "cpus")


@rule(
    "oceanbase.cpu_quota_concurrency_high",
    severity="warning",
    title="cpu_quota_concurrency is too high for a small observer",
    title_zh="小规格 observer 的 cpu_quota_concurrency 过大",
    condition=(
        f"cpu_quota_concurrency >= {CPU_QUOTA_CONCURRENCY_MAX} on an observer with <= "
        f"{SMALL_OBSERVER_CPUS} CPUs "
        "(its cpu_count parameter when set, else the host's logical CPUs)"
    ),
    condition_zh=(
        f"CPU 数 <= {SMALL_OBSERVER_CPUS} 的 observer 上 cpu_quota_concurrency >= {CPU_QUOTA_CONCURRENCY_MAX}"
        "（CPU 数取其 cpu_count 参数，未设置时取主机的逻辑 CPU 数）"
    ),
    requires=("oceanbase",),
    relevant=lambda ctx, h: _ob_needs(ctx, h, "oceanbase"),
    measures=("tune-cpu-quota-concurrency",),
    seeds=("oceanbase-bmsql-tuning",),
    thresholds={"min_value": CPU_QUOTA_CONCURRENCY_MAX, "small_observer_cpus": SMALL_OBSERVER_CPUS},
    rationale=(
        "cpu_quota_concurrency multiplies worker threads per CPU; on observers of 16 CPUs or fewer, 4 "
        "threads per CPU make them wait and context-switch rather than work (seed 004: 4 -> 2)."
    ),
    rationale_zh=(
        "cpu_quota_concurrency 是每个 CPU 的工作线程倍数；在 16 个及以下 CPU 的 observer 上，每个 CPU 4 个线"
        "程会让它们忙于等待和上下文切换，而不是干活（奠基案例 004：4 -> 2）。"
    ),
    explanation=(
        "cpu_quota_concurrency = {value} lets each tenant run {value} worker threads per CPU on a {cpus}-CPU "
        "observer: under load the threads mostly wait and context-switch."
    ),
    explanation_zh=(
        "cpu_quota_concurrency = {value} 允许每个租户在 {cpus} 核的 observer 上每个 CPU 运行 {value} 个工作"
        "线程：压力下线程大多在等待和上下文切换。"
    ),
)
def cpu_quota_concurrency_high(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        ob = host.oceanbase
        value = _int_parameter(ob, "cpu_quota_concurrency")
        cpus, cpus_fact = observer_cpus(host)
        if value is None or cpus is None or value < CPU_QUOTA_CONCURRENCY_MAX or cpus > SMALL_OBSERVER_CPUS:
            continue
        yield finding(
            "oceanbase.cpu_quota_concurrency_high",
            host,
            values={"value": value, "cpus": cpus},
            evidence=[
                evidence(
                    host, "oceanbase.parameters.cpu_quota_concurrency", value, ob, "cpu_quota_concurrency"
                ),
                _observer_cpus_evidence(host, cpus, cpus_fact),
            ],
        )


@rule(
    "oceanbase.net_thread_count_high",
    severity="warning",
    title="Too many OceanBase network threads",
    title_zh="OceanBase 网络线程数过多",
    condition=f"net_thread_count > {NET_THREADS_SHARE} x the observer's CPUs",
    condition_zh=f"net_thread_count > observer CPU 数的 {NET_THREADS_SHARE} 倍",
    requires=("oceanbase",),
    relevant=lambda ctx, h: _ob_needs(ctx, h, "oceanbase"),
    measures=("tune-net-thread-count",),
    seeds=("oceanbase-bmsql-tuning",),
    thresholds={"max_share_of_cpus": NET_THREADS_SHARE},
    rationale=(
        "Network threads above half the observer's CPUs take CPUs away from SQL workers; on 16 CPUs, 32 net "
        "threads is twice the CPUs (seed 004: 32 -> 6)."
    ),
    rationale_zh=(
        "网络线程超过 observer CPU 数的一半时，会占用 SQL 工作线程的 CPU；在 16 个 CPU 上，32 个网络线程是 "
        "CPU 数的两倍（奠基案例 004：32 -> 6）。"
    ),
    explanation=(
        "net_thread_count = {value} on a {cpus}-CPU observer: the RPC I/O threads alone outnumber half the "
        "CPUs and compete with the tenant workers."
    ),
    explanation_zh=(
        "{cpus} 核 observer 上 net_thread_count = {value}：仅 RPC I/O 线程就超过 CPU 数的一半，与租户工作线程"
        "争抢 CPU。"
    ),
)
def net_thread_count_high(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        ob = host.oceanbase
        value = _int_parameter(ob, "net_thread_count")
        cpus, cpus_fact = observer_cpus(host)
        if not value or not cpus or value <= NET_THREADS_SHARE * cpus:
            continue
        yield finding(
            "oceanbase.net_thread_count_high",
            host,
            values={"value": value, "cpus": cpus},
            evidence=[
                evidence(host, "oceanbase.parameters.net_thread_count", value, ob, "net_thread_count"),
                _observer_cpus_evidence(host, cpus, cpus_fact),
            ],
        )


@rule(
    "oceanbase.proxy_routing_not_default",
    severity="warning",
    title="ODP does not route to partition leaders",
    title_zh="ODP 未按分区主副本路由",
    condition=f"ODP server_routing_mode is not '{DEFAULT_ROUTING_MODE}'",
    condition_zh=f"ODP 的 server_routing_mode 不是 '{DEFAULT_ROUTING_MODE}'",
    requires=("odp",),
    relevant=lambda ctx, h: _ob_needs(ctx, h, "odp"),
    measures=("odp-routing-mode-oceanbase",),
    seeds=("oceanbase-bmsql-tuning",),
    thresholds={"expected": DEFAULT_ROUTING_MODE},
    rationale=(
        "Any mode other than 'oceanbase' routes statements without regard to the leader, producing remote "
        "plans (seed 004: random -> ~47 % remote). A yes/no setting."
    ),
    rationale_zh=(
        "除 'oceanbase' 以外的任何模式都不按主副本位置路由语句，从而产生远程计划（奠基案例 004：random -> 约"
        " 47 % 远程）。这是一个是/否设置。"
    ),
    explanation=(
        "ODP server_routing_mode = {mode}: requests are not sent to the observer holding the partition "
        "leader, so statements run as remote or distributed plans."
    ),
    explanation_zh=(
        "ODP server_routing_mode = {mode}：请求不会发往持有分区主副本的 observer，语句变成远程或分布式计划执"
        "行。"
    ),
)
def proxy_routing_not_default(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        ob = host.oceanbase
        mode = ob.proxy_config.get("server_routing_mode") if ob else None
        if mode is None or mode.strip().lower() == DEFAULT_ROUTING_MODE:
            continue
        yield finding(
            "oceanbase.proxy_routing_not_default",
            host,
            values={"mode": mode},
            evidence=[
                evidence(host, "oceanbase.proxy_config.server_routing_mode", mode, ob, "server_routing_mode")
            ],
        )


@rule(
    "oceanbase.remote_plans_high",
    severity="warning",
    title="Many remote execution plans",
    title_zh="远程执行计划占比高",
    condition=f"gv$sql_audit: plan_type 2 (remote) >= {int(REMOTE_PLAN_SHARE * 100)}% of plan types 1+2+3",
    condition_zh=f"gv$sql_audit：plan_type 2（远程）占 plan_type 1+2+3 的 >= {int(REMOTE_PLAN_SHARE * 100)}%",
    requires=("sql_audit",),
    relevant=lambda ctx, h: _ob_needs(ctx, h, "sql_audit"),
    measures=("odp-routing-mode-oceanbase", "colocate-proxy-and-observers"),
    seeds=("oceanbase-bmsql-tuning",),
    thresholds={"remote_share": REMOTE_PLAN_SHARE},
    rationale=(
        "A remote plan adds a network round trip and a second observer's work; from 20 % of plans it is a "
        "routing problem rather than the occasional leader switch. past = share / 20 %."
    ),
    rationale_zh=(
        "远程计划会增加一次网络往返和第二个 observer 的工作；占计划的 20 % 起，它就是路由问题，而不是偶尔的"
        "主副本切换。past = 占比 / 20 %。"
    ),
    explanation=(
        "{share:.0%} of the audited statements on {host} ran as remote plans: each costs an extra network "
        "round trip between observers, usually because the proxy routes to the wrong server."
    ),
    explanation_zh=(
        "{host} 上 {share:.0%} 的审计语句以远程计划执行：每条都多一次 observer 之间的网络往返，通常是代理路由"
        "到了错误的服务器。"
    ),
)
def remote_plans_high(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        ob = host.oceanbase
        counts = ob.plan_type_counts if ob else {}
        total = sum(counts.get(t, 0) for t in (1, 2, 3))
        remote = counts.get(2, 0)
        if not total or remote / total < REMOTE_PLAN_SHARE:
            continue
        share = remote / total
        yield finding(
            "oceanbase.remote_plans_high",
            host,
            values={"share": share},
            evidence=[
                evidence(host, "oceanbase.plan_type_counts.2", remote, ob, "plan_type.2", "2"),
                evidence(host, "oceanbase.plan_type_counts.total", total, ob),
            ],
            past=share / REMOTE_PLAN_SHARE,
        )
