"""MongoDB: the kernel limits its own start-up warnings name (beyond THP,
NUMA, zone reclaim and overcommit, which the host-side rules read)."""

from __future__ import annotations

from collections.abc import Iterator

from collectors.derived.workload import Datastore, service_warning, sysctl_setting
from collectors.facts import HostFacts
from engine.rules import Phrase, RuleContext, RuleFinding, evidence, finding, rule
from engine.rules._hostside import setting_evidence, store_evidence, stores_of

# MongoDB warns when vm.max_map_count < 2 x its connection limit; with the
# packaged service's 64000 open files that limit is 51200, so 102400
MONGODB_MIN_MAP_COUNT = 102400


def _mongodb(host: HostFacts) -> list[Datastore]:
    return stores_of(host, {"mongodb"})


def _max_map_count_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    return ("max_map_count",) if _mongodb(host) else ()


@rule(
    "mongodb.max_map_count_low",
    severity="warning",
    title="vm.max_map_count is too low for MongoDB",
    title_zh="vm.max_map_count 对 MongoDB 来说过低",
    condition=(
        "MongoDB warns 'vm.max_map_count is too low' at start-up (5.0+: below twice its connection limit), "
        f"or sysctl vm.max_map_count < {MONGODB_MIN_MAP_COUNT} on a host running MongoDB"
    ),
    condition_zh=(
        "MongoDB 启动时警告 “vm.max_map_count is too"
        " low”（5.0 起：低于其连接上限的两倍），或运行 MongoDB 的主机"
        f"上 sysctl vm.max_map_count < {MONGODB_MIN_MAP_COUNT}"
    ),
    requires=("max_map_count",),
    measures=("raise-max-map-count",),
    thresholds={"min_map_count": MONGODB_MIN_MAP_COUNT},
    rationale=(
        "Each connection thread's stack and every WiredTiger mapping is a memory map; the kernel refuses a "
        "new one past vm.max_map_count (65530 by default), and mongod then fails allocations and aborts "
        "under load. MongoDB checks it against twice its connection limit (maxConns); 102400 is that for "
        "the 51200 connections of its packaged service's 64000 open files. A yes/no condition (past = 1)."
    ),
    rationale_zh=(
        "每个连接线程的栈和 WiredTiger 的每个映射都是一个内存映射"
        "；超过 vm.max_map_count（默认 65530）后内核拒绝"
        "新的映射，mongod 会在高负载下分配失败并中止。MongoDB"
        " 按连接上限（maxConns）的两倍检查；102400 对应其官方"
        "服务 64000 个打开文件时的 51200 个连接。是/否条件（past = 1）。"
    ),
    relevant=_max_map_count_relevant,
    peer="MongoDB startup warning (id 5123300); obdiag `system/parameter.py` (vm.max_map_count)",
    explanations={
        "warned": (
            "{host}: MongoDB warned at start-up that vm.max_map_count is too low{current}: past that many "
            "memory maps the kernel refuses new ones and mongod aborts under load (many connections).",
            "{host}：MongoDB 启动时警告 vm.max_map_co"
            "unt 过低{current}：内存映射数超过该值后内核拒绝新的映射，"
            "mongod 会在高负载（大量连接）下中止。",
        ),
        "setting": (
            "{host} runs MongoDB with vm.max_map_count = {current_value}, below {minimum}: past that many "
            "memory maps the kernel refuses new ones and mongod aborts under load (many connections).",
            "{host} 运行 MongoDB，vm.max_map_count = {current_value}"
            "，低于 {minimum}：内存映射数超过该值后内核"
            "拒绝新的映射，mongod 会在高负载（大量连接）下中止。",
        ),
        "current": (" ({current_value})", "（{current_value}）"),
    },
)
def max_map_count_low(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        stores = _mongodb(host)
        if not stores:
            continue
        # MongoDB's own start-up warning first, else the setting read
        found = _warned(host, stores[0]) or _set_low(host, stores[0])
        if found is not None:
            yield found


def _warned(host: HostFacts, store: Datastore) -> RuleFinding | None:
    warned = service_warning(host, "max_map_count")
    if warned is None:
        return None
    log, w = warned
    setting = sysctl_setting(host, "vm.max_map_count")
    current = w.value or (setting.value if setting is not None else None)
    return finding(
        "mongodb.max_map_count_low",
        host,
        "warned",
        values={"current": _current(current)},
        evidence=[
            evidence(host, "services[mongodb].max_map_count", w.value or w.message, log, line=w.line),
            store_evidence(host, store),
        ],
    )


def _set_low(host: HostFacts, store: Datastore) -> RuleFinding | None:
    setting = sysctl_setting(host, "vm.max_map_count")
    if setting is None or not setting.value.isdigit() or int(setting.value) >= MONGODB_MIN_MAP_COUNT:
        return None
    return finding(
        "mongodb.max_map_count_low",
        host,
        "setting",
        values={"current_value": setting.value, "minimum": MONGODB_MIN_MAP_COUNT},
        evidence=[setting_evidence(host, setting), store_evidence(host, store)],
    )


def _current(value: str | None) -> Phrase | str:
    return Phrase("current", {"current_value": value}) if value else ""
