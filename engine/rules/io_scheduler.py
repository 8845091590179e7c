"""The block I/O scheduler of a database's (or a hypervisor's) disks."""

from __future__ import annotations

from collections.abc import Iterator

from collectors.derived.host_tuning import latency_sensitive
from collectors.facts import HostFacts, IoSchedulers
from engine.rules import RuleContext, RuleFinding, evidence, finding, rule
from engine.rules._hostside import latency_why, tuning_checks
from engine.rules.disk import NON_DATA_DEVICE

# the proportional-share schedulers: per-process queues, idling between requests
FAIR_SCHEDULERS = ("cfq", "bfq")


def _scheduler_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    return tuning_checks(host, "io_schedulers", host.io_schedulers is not None)


@rule(
    "disk.io_scheduler",
    severity="warning",
    title="Fair-queueing I/O scheduler (cfq/bfq) on a data disk",
    title_zh="数据盘使用公平队列 I/O 调度器（cfq/bfq）",
    condition=(
        "a block device (not loop/ram/sr/zram) whose selected scheduler in "
        f"/sys/block/<dev>/queue/scheduler (or pt-summary) is {' or '.join(FAIR_SCHEDULERS)}: warning "
        "where the host runs a data store or guests, info otherwise; none, mq-deadline, noop, deadline "
        "and kyber are quiet"
    ),
    condition_zh=(
        "块设备（不含 loop/ram/sr/zram）在 /sys/block/<dev>/queue/scheduler（或 pt-summary）"
        f"中选中的调度器为 {' 或 '.join(FAIR_SCHEDULERS)}：运行数据库或云主机的主机为 warning，"
        "其他为 info；none、mq-deadline、noop、deadline 和 kyber 不报"
    ),
    requires=("io_schedulers",),
    relevant=_scheduler_relevant,
    measures=("io-scheduler-deadline",),
    thresholds={"fair_schedulers": list(FAIR_SCHEDULERS)},
    rationale=(
        "A yes/no condition, set by the vendors' guidance: the MySQL manual (InnoDB disk I/O: 'use a noop or "
        "deadline I/O scheduler with native AIO on Linux'), Oracle's Linux installation guide (deadline for "
        "ASM disks), ScyllaDB's benchmarking guide ('make sure you are not using the cfq'), PingCAP's TiDB "
        "check (noop for SSD/NVMe data disks) and Elastic (deadline or noop on SSD). cfq and its blk-mq "
        "successor bfq keep per-process queues and idle between requests to share a spinning disk fairly; "
        "behind a RAID cache, on SSD/NVMe or in a guest that only delays a database's many concurrent "
        "requests (Percona's tpcc-like test: cfq 2793.5 tpm, noop 6586.4, deadline 6513.7). none and "
        "mq-deadline (the blk-mq defaults), noop, deadline and kyber are accepted."
    ),
    rationale_zh=(
        "是/否条件，依据厂商指南：MySQL 手册（InnoDB 磁盘 I/O：“在 Linux 上配合原生 AIO "
        "使用 noop 或 deadline I/O 调度器”）、Oracle 的 Linux 安装指南（ASM 磁盘使用 "
        "deadline）、ScyllaDB 的基准测试指南（“确保不要使用 cfq”）、PingCAP 的 TiDB 检查"
        "（SSD/NVMe 数据盘使用 noop）以及 Elastic（SSD 上使用 deadline 或 noop）。cfq "
        "及其 blk-mq 继任者 bfq 为每个进程维护队列，并在请求之间空等，以便公平地分享机械盘；"
        "在 RAID 缓存之后、SSD/NVMe 上或虚拟机里，这只会拖慢数据库大量的并发请求（Percona "
        "的类 tpcc 测试：cfq 2793.5 tpm，noop 6586.4，deadline 6513.7）。none 和 "
        "mq-deadline（blk-mq 的默认值）、noop、deadline、kyber 都可接受。"
    ),
    peer=(
        "SAP arp142 `5010`; postgresqltuner (scheduler check); pt-summary (prints 'Disk Schedulers'); MySQL "
        "manual 'Optimizing InnoDB Disk I/O'; PingCAP TiDB environment check; ScyllaDB scylla_io_setup"
    ),
    explanations={
        "": (
            "{host}: {device} uses the '{scheduler}' I/O scheduler{why}. It queues each process's "
            "requests separately and idles between them; the database's concurrent reads and writes wait "
            "behind that instead of going to the device.",
            "{host}：{device} 使用 '{scheduler}' I/O 调度器{why}。它为每个进程分别排队并在请求之间空等，"
            "数据库的并发读写要在其后等待，而不是直接下发到设备。",
        ),
        "several": (
            "{host}: {count} devices ({device} first) use the '{scheduler}' I/O scheduler{why}. It queues "
            "each process's requests separately and idles between them; the database's concurrent reads and "
            "writes wait behind that instead of going to the devices.",
            "{host}：{count} 个设备（首个为 {device}）使用 '{scheduler}' I/O 调度器{why}。"
            "它为每个进程分别排队并在请求之间空等，数据库的并发读写要在其后等待，而不是直接下发到设备。",
        ),
        "runs": ("; the host runs {what}", "；该主机运行 {what}"),
        "nothing": (
            "; the snapshot shows no data store or guest on it",
            "；快照中看不到该主机上的数据库或云主机",
        ),
    },
)
def io_scheduler(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        schedulers = host.io_schedulers
        fair = _fair_queued(schedulers) if schedulers is not None else []
        if fair:
            yield _fair_queueing_finding(host, schedulers, fair)


def _fair_queueing_finding(
    host: HostFacts, schedulers: IoSchedulers | None, fair: list[tuple[str, str]]
) -> RuleFinding:
    """disk.io_scheduler for the data devices with a fair-queueing scheduler
    (``fair``: device, scheduler), named after the first; a warning on a host
    whose latency matters, else info."""
    device, scheduler = fair[0]
    what = latency_sensitive(host)
    return finding(
        "disk.io_scheduler",
        host,
        "several" if len(fair) > 1 else "",
        values={
            "device": device,
            "scheduler": scheduler,
            "devices": [dev for dev, _name in fair],
            "count": len(fair),
            "why": latency_why(what),
        },
        evidence=[
            evidence(host, f"io_schedulers.active.{dev}", name, schedulers, f"scheduler.{dev}")
            for dev, name in fair
        ],
        severity="warning" if what else "info",
    )


def _fair_queued(schedulers: IoSchedulers) -> list[tuple[str, str]]:
    """(device, scheduler) of the data devices whose active scheduler is a fair-queueing one."""
    return [
        (dev, name)
        for dev, name in schedulers.active.items()
        if name in FAIR_SCHEDULERS and not NON_DATA_DEVICE.match(dev)
    ]
