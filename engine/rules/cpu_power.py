"""CPU frequency scaling on servers."""

from __future__ import annotations

from collections.abc import Iterator

from collectors.derived.host_tuning import latency_sensitive
from collectors.facts import CpuPower, HostFacts
from engine.rules import RuleContext, RuleFinding, evidence, finding, rule
from engine.rules._hostside import latency_why, tuning_checks

SLOW_GOVERNORS = ("powersave", "ondemand", "conservative", "schedutil")


def _governor_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    if host.is_guest:
        return ()  # a guest's governor (if any) is not the host's frequency
    return tuning_checks(host, "cpu_governor", host.cpu_power is not None)


@rule(
    "cpu.governor_not_performance",
    severity="warning",
    title="CPU frequency governor is not 'performance'",
    title_zh="CPU 调频策略不是 performance",
    condition=(
        f"a physical host whose CPUs use the {', '.join(SLOW_GOVERNORS)} governor (scaling_governor, or "
        "cpupower's current policy): warning where the host runs a data store or guests, info otherwise"
    ),
    condition_zh=(
        f"物理主机的 CPU 使用 {', '.join(SLOW_GOVERNORS)} 调频策略（scaling_governor 或 cpupower 的 current "
        "policy）：运行数据库或云主机的主机为 warning，其他为 info"
    ),
    requires=("cpu_governor",),
    relevant=_governor_relevant,
    measures=("cpu-governor-performance",),
    thresholds={"slow_governors": list(SLOW_GOVERNORS)},
    rationale=(
        "A yes/no condition. The governor decides how fast a CPU climbs back to full clock after idling: "
        "powersave (acpi-cpufreq: the lowest frequency; intel_pstate/amd-pstate: an energy-biased choice), "
        "ondemand, conservative and schedutil all lag behind the short bursts of a query or an interrupt. "
        "ScyllaDB's issue 1895 calls powersave 'a huge impact on latency', PingCAP's TiDB deployment guide "
        "tells to change powersave to performance, tuned's throughput-performance, latency-performance and "
        "virtual-host profiles set performance, and SAP's checks 1300-1600 require it. A guest is not judged "
        "(its host sets the clock)."
    ),
    rationale_zh=(
        "是/否条件。调频策略决定 CPU 空闲后多快回到全频：powersave（acpi-cpufreq：最低频率；intel_pstate/"
        "amd-pstate：偏向节能的选择）、ondemand、conservative 和 schedutil 都跟不上查询或中断的短时突发。"
        "ScyllaDB 的 issue 1895 说 powersave 对延迟“影响巨大”，PingCAP 的 TiDB 部署指南要求把 powersave 改为 "
        "performance，tuned 的 throughput-performance、latency-performance 和 virtual-host 配置都设置 "
        "performance，SAP 的 1300-1600 检查也要求它。虚拟机不做判断（频率由宿主机决定）。"
    ),
    peer=(
        "tuned throughput-performance/latency-performance/virtual-host (governor performance); SAP arp142 "
        "`1300`-`1600`; PingCAP TiDB environment check (cpufreq powersave); ScyllaDB scylla_cpuscaling_setup"
    ),
    explanations={
        "": (
            "{host}: {cpus} CPU(s) use the '{governor}' frequency governor (driver {driver}){why}. Between "
            "bursts the cores drop their clock and each query or interrupt first waits for them to speed up "
            "again.",
            "{host}：{cpus} 个 CPU 使用 '{governor}' "
            "调频策略（驱动 {driver}）{why}。突发之间核心降频，每条查询"
            "或每个中断都要先等它们重新升频。",
        ),
        "runs": ("; the host runs {what}", "；该主机运行 {what}"),
        "nothing": (
            "; the snapshot shows no data store or guest on it",
            "；快照中看不到该主机上的数据库或云主机",
        ),
    },
)
def governor_not_performance(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        power = host.cpu_power
        if host.is_guest or power is None:
            continue
        slow = _slow_governors(power)
        if not slow:
            continue
        governor, first = _most_common(slow)
        what = latency_sensitive(host)
        yield finding(
            "cpu.governor_not_performance",
            host,
            values={
                "cpus": len(slow),
                "governor": governor,
                "driver": power.driver or "?",
                "why": latency_why(what),
            },
            evidence=[evidence(host, f"cpu_power.governors.{first}", governor, power, f"governor.{first}")],
            severity="warning" if what else "info",
        )


def _slow_governors(power: CpuPower) -> dict[str, str]:
    """CPU -> its governor, for the CPUs whose governor lets the clock drop (SLOW_GOVERNORS)."""
    return {cpu: g for cpu, g in power.governors.items() if g in SLOW_GOVERNORS}


def _most_common(governors: dict[str, str]) -> tuple[str, str]:
    """The governor most CPUs run, and the first CPU that runs it."""
    governor = max(set(governors.values()), key=list(governors.values()).count)
    return governor, next(cpu for cpu, g in governors.items() if g == governor)
