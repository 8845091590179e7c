"""NIC queue interrupts that all land on one CPU."""

from __future__ import annotations

from collections.abc import Iterator

from collectors.derived.host_tuning import NicQueueIrq, irqbalance_running, nic_queue_irqs
from collectors.facts import HostFacts, Interrupts
from engine.rules import Phrase, RuleContext, RuleFinding, evidence, finding, rule
from engine.rules._hostside import tuning_checks

MIN_QUEUES = 2
MIN_CPUS = 4
ONE_CPU_SHARE = 0.9
MIN_INTERRUPTS = 100_000
# whether irqbalance runs (None: not known) -> the rule's phrase
IRQBALANCE_PHRASES = {True: "irqbalance_running", False: "irqbalance_absent", None: "irqbalance_unknown"}


def _irq_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    return tuning_checks(host, "interrupts", host.interrupts is not None)


@rule(
    "net.irq_single_cpu",
    severity="warning",
    title="The NIC's queue interrupts all land on one CPU",
    title_zh="网卡各队列的中断都落在同一个 CPU 上",
    condition=(
        f"/proc/interrupts: a host with >= {MIN_CPUS} CPUs where >= {MIN_QUEUES} NIC queue interrupts "
        f"(eth0-TxRx-N, mlx5_compN, virtioN-input.N ...) counted >= {MIN_INTERRUPTS:,} interrupts and one "
        f"CPU took >= {ONE_CPU_SHARE:.0%} of them; the explanation says whether a process list shows "
        "irqbalance running"
    ),
    condition_zh=(
        f"/proc/interrupts：在 >= {MIN_CPUS} 个 CPU 的主机上，>= {MIN_QUEUES} 个网卡队列中断（eth0-TxRx-N、"
        f"mlx5_compN、virtioN-input.N 等）共计 >= {MIN_INTERRUPTS:,} 次，且一个 CPU 承担了其中 "
        f">= {ONE_CPU_SHARE:.0%}；说明中指出进程列表里是否有 irqbalance 在运行"
    ),
    requires=("interrupts",),
    relevant=_irq_relevant,
    measures=("irq-softirq-affinity", "rps-rfs"),
    thresholds={
        "min_queues": MIN_QUEUES,
        "min_cpus": MIN_CPUS,
        "one_cpu_share": ONE_CPU_SHARE,
        "min_interrupts": MIN_INTERRUPTS,
    },
    rationale=(
        "A multi-queue NIC exists to spread receive work: each queue's interrupt, and the softirq that "
        "follows it, runs on the CPU the interrupt is routed to. When 90 % of every queue's interrupts go to "
        "one CPU (irqbalance stopped, or never started, and the affinity left at its boot default of CPU 0), "
        "that core saturates while the others idle: irqbalance issue 122 (eth0 saturating CPU0 on Debian "
        "Stretch), the game gateway with 90 % softirq on CPU0 and packet loss. 100,000 interrupts keep an "
        "idle NIC out; net.softirq_hotspot judges the softirq time itself when top or mpstat show it. "
        "past = share / 90 %."
    ),
    rationale_zh=(
        "多队列网卡的意义在于分散收包工作：每个队列的中断以及"
        "随后的软中断都在中断被路由到的 CPU 上运行。当每个"
        "队列 90 % 的中断都送到同一个 CPU（irqbalance 停止或从未启动，亲和性停留在开机默认的 CPU 0）时，"
        "这个核心饱和而其他核心空闲：irqbalance issue 122（Debian Stretch 上 eth0 把 CPU0 打满）、游戏网关"
        "CPU0 软中断 90 % 并丢包。100,000 次中断把空闲网卡排除在外；top 或 mpstat 显示软中断时间时由 "
        "net.softirq_hotspot 判断软中断本身。past = 占比 / 90 %。"
    ),
    peer=(
        "SAP arp142 `1700_irqbalance_service`; tuned cpu-partitioning (irqbalance banned CPUs); RHEL network "
        "performance guide (IRQ affinity); insights-core parses interrupts without a rule"
    ),
    explanations={
        "": (
            "{host}: {share:.0f}% of the {total:,} interrupts of {queues} NIC queues ({names}) were handled "
            "by {cpu}, one of {cpus} CPUs{irqbalance}. That core runs all their receive softirq work and "
            "drops packets at its limit while the others idle.",
            "{host}：{queues} 个网卡队列（{names}）的 {total:,} 次中断中有 {share:.0f}% 由 {cpu} 处理，而主机"
            "共有 {cpus} 个 CPU{irqbalance}。这个核心承担全部收包软中断，到达上限就丢包，其他核心却空闲。",
        ),
        "irqbalance_absent": ("; the process list shows no irqbalance", "；进程列表中没有 irqbalance"),
        "irqbalance_running": (
            "; irqbalance is running but did not spread them",
            "；irqbalance 在运行，但没有把它们分散开",
        ),
        "irqbalance_unknown": (
            "; no process list shows whether irqbalance runs",
            "；没有进程列表可以说明 irqbalance 是否在运行",
        ),
    },
)
def irq_single_cpu(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        checked = _checked_queues(host)
        if checked is None:
            continue
        interrupts, queues = checked
        per_cpu = _per_cpu_counts(queues)
        total = sum(per_cpu)
        busiest = _one_cpu_takes_most(per_cpu, total)
        if busiest is None:
            continue
        share = per_cpu[busiest] / total
        yield finding(
            "net.irq_single_cpu",
            host,
            values={
                "share": share * 100,
                "total": total,
                "queues": len(queues),
                "names": _first_names([q.name for q in queues]),
                "cpu": interrupts.cpus[busiest] if busiest < len(interrupts.cpus) else f"CPU{busiest}",
                "cpus": len(interrupts.cpus),
                "irqbalance": Phrase(IRQBALANCE_PHRASES[irqbalance_running(host)]),
            },
            evidence=[
                evidence(
                    host, f"interrupts.{q.irq}", list(q.counts[: min(len(per_cpu), 8)]), interrupts, q.irq
                )
                for q in queues[:4]
            ],
            past=share / ONE_CPU_SHARE,
        )


def _one_cpu_takes_most(per_cpu: list[int], total: int) -> int | None:
    """The CPU (index) that takes ONE_CPU_SHARE or more of ``total`` queue
    interrupts (at least MIN_INTERRUPTS of them), else None."""
    if total < MIN_INTERRUPTS:
        return None
    busiest = max(range(len(per_cpu)), key=per_cpu.__getitem__)
    return busiest if per_cpu[busiest] / total >= ONE_CPU_SHARE else None


def _checked_queues(host: HostFacts) -> tuple[Interrupts, list[NicQueueIrq]] | None:
    """The interrupts table and its NIC queue rows, when there are enough
    queues over enough CPUs and each column is known to be one CPU; else None."""
    interrupts = host.interrupts
    queues = nic_queue_irqs(host)
    if interrupts is None or len(queues) < MIN_QUEUES or len(interrupts.cpus) < MIN_CPUS:
        return None
    if interrupts.cut is not None and interrupts.cut.wrapped:
        return None  # a terminal wrapped the rows: which column is which CPU is unknown (not checked)
    return interrupts, queues


def _per_cpu_counts(queues: list[NicQueueIrq]) -> list[int]:
    """The queues' interrupts summed per CPU, over the CPUs every queue's row shows."""
    width = min(len(q.counts) for q in queues)
    return [sum(q.counts[i] for q in queues) for i in range(width)]


def _first_names(names: list[str]) -> str:
    """The first four names, and how many more."""
    return ", ".join(names[:4]) + (f" +{len(names) - 4}" if len(names) > 4 else "")
