"""CPU idle states (C-states) deeper than C1 on a physical host."""

from __future__ import annotations

from collections.abc import Iterator

from collectors.derived.host_tuning import latency_sensitive
from collectors.facts import CpuPower, HostFacts, IdleState
from engine.rules import RuleContext, RuleFinding, evidence, finding, rule
from engine.rules._hostside import latency_why, tuning_checks

# tuned's latency-performance and network-latency profiles: force_latency=cstate.id:1|<fallback>,
# the exit latency of idle state 1 (C1), or 2 us where the host has no state 1 (Red Hat, "Disabling
# C-states by using a custom TuneD profile")
C1_INDEX = 1
FALLBACK_LATENCY_US = 2


def _idle_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    if host.is_guest:
        return ()  # a guest's idle states are the hypervisor's to set
    idle = host.cpu_power is not None and bool(host.cpu_power.idle_states)
    return tuning_checks(host, "cpu_idle", idle)


def allowed_latency_us(states: list[IdleState]) -> int:
    """The exit latency tuned's latency profiles allow: that of state 1 (C1),
    else the 2 us fallback.

    >>> allowed_latency_us([IdleState("POLL", 0), IdleState("C1", 1), IdleState("C6", 170)])
    1
    >>> allowed_latency_us([IdleState("POLL", 0)])
    2
    """
    c1 = states[C1_INDEX].latency_us if len(states) > C1_INDEX else None
    return c1 if c1 is not None else FALLBACK_LATENCY_US


def deep_states(states: list[IdleState]) -> list[IdleState]:
    """The enabled idle states past C1 whose exit latency is above C1's."""
    limit = allowed_latency_us(states)
    return [
        s
        for s in states[C1_INDEX + 1 :]
        if not s.disabled and s.latency_us is not None and s.latency_us > limit
    ]


@rule(
    "cpu.deep_cstates",
    severity="info",
    title="CPU idle states deeper than C1 are enabled",
    title_zh="启用了比 C1 更深的 CPU 空闲状态（C-state）",
    condition=(
        "a physical host whose cpupower idle-info lists an enabled idle state after C1 with an exit latency "
        f"above C1's (or above {FALLBACK_LATENCY_US} us without a C1); info, naming the data store or guests "
        "the host runs"
    ),
    condition_zh=(
        "物理主机的 cpupower idle-info 列出 C1 之后仍启用、且退出延迟高于 C1（无 C1 时高于 "
        f"{FALLBACK_LATENCY_US} us）的空闲状态；info，并写明主机运行的数据库或云主机"
    ),
    requires=("cpu_idle",),
    relevant=_idle_relevant,
    measures=("limit-cstates-c1",),
    thresholds={"allowed_state": "C1 (cstate.id:1)", "fallback_latency_us": FALLBACK_LATENCY_US},
    rationale=(
        "The calibration is Red Hat's: its latency-oriented tuned profiles (latency-performance, "
        "network-latency) set force_latency=cstate.id:1, the exit latency of C1 (2 us when the host has no "
        "state 1), so the idle driver never picks a deeper state, and its kernel-option alternative is "
        "processor.max_cstate=1 / intel_idle.max_cstate=1 (no C-state below C1). Red Hat explains the cost: "
        "leaving a deep state takes time, and many cores woken at once stall on inter-processor interrupts, "
        "so a host that is idle answers slower than a loaded one. Deep states are every server's default and "
        "save much power, hence info: it is a tuning choice for latency-sensitive databases and hypervisors, "
        "not a fault. A guest is not judged."
    ),
    rationale_zh=(
        "校准依据 Red Hat：其面向延迟的 tuned 配置（latency-performance、network-latency）设置 "
        "force_latency=cstate.id:1，即 C1 的退出延迟（主机没有 state 1 时为 2 us），使空闲驱动不会选择更深"
        "的状态；对应的内核参数是 processor.max_cstate=1 / intel_idle.max_cstate=1（不进入比 C1 更深的 "
        "C-state）。Red Hat 说明了代价：退出深度状态需要时间，许多核心同时被唤醒时会因核间中断而停顿，于是"
        "空闲的主机反而比繁忙时响应更慢。深度状态是所有服务器的默认设置，且节能明显，因此为 info：这是对延迟"
        "敏感的数据库和宿主机的调优选择，而不是故障。虚拟机不做判断。"
    ),
    peer=(
        "tuned latency-performance / network-latency (force_latency=cstate.id:1); risu `disablecstates`; "
        "Red Hat 'Improving the network latency' (C-states)"
    ),
    explanations={
        "": (
            "{host}: idle states {states} are enabled past C1 (deepest {deepest}, exit latency {latency} us; "
            "C1 allows {allowed} us){why}. A core that sleeps there takes that long to take the next "
            "request or interrupt.",
            "{host}：C1 之后仍启用空闲状态 {states}（最深为 {deepest}，退出延迟 {latency} us；C1 为 "
            "{allowed} us）{why}。在这些状态中休眠的核心，要过这么久才能处理下一个请求或中断。",
        ),
        "runs": ("; the host runs {what}", "；该主机运行 {what}"),
        "nothing": (
            "; the snapshot shows no data store or guest on it",
            "；快照中看不到该主机上的数据库或云主机",
        ),
    },
)
def deep_cstates(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        power = host.cpu_power
        if host.is_guest or power is None:
            continue
        deep = deep_states(power.idle_states)
        if deep:
            yield _deep_cstates_finding(host, power, deep)


def _deep_cstates_finding(host: HostFacts, power: CpuPower, deep: list[IdleState]) -> RuleFinding:
    """cpu.deep_cstates for the ``deep`` idle states of the host's CPUs, naming the deepest."""
    deepest = max(deep, key=lambda s: s.latency_us or 0)
    return finding(
        "cpu.deep_cstates",
        host,
        values={
            "states": ", ".join(s.name for s in deep),
            "deepest": deepest.name,
            "latency": deepest.latency_us,
            "allowed": allowed_latency_us(power.idle_states),
            "why": latency_why(latency_sensitive(host)),
        },
        evidence=[
            evidence(host, f"cpu_power.idle_states[{s.name}].latency_us", s.latency_us, power, line=s.line)
            for s in deep
        ],
    )
