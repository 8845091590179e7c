"""Kernel releases with a documented regression that matters to a database or
hypervisor host: a small table, each entry with its public source."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from collectors.facts import HostFacts
from engine.rules import RuleContext, RuleFinding, evidence, finding, rule
from engine.rules._hostside import stores_of, tuning_checks
from engine.rules.vm_policy import kernel_numbers


def _ksm_running(host: HostFacts) -> bool:
    return bool(host.ksm and host.ksm.values.get("run") == 1)


def _runs_postgresql(host: HostFacts) -> bool:
    return bool(stores_of(host, {"postgresql"}))


def _always(host: HostFacts) -> bool:
    return True


def _rc_4_11_before_6(release: str) -> bool:
    return re.match(r"^4\.11\.0-rc[1-5](?!\d)", release) is not None


def _el7_before_1062(release: str) -> bool:
    m = re.match(r"^3\.10\.0-(\d{1,5})(?:\.[\d.]+)?\.el7", release)
    return m is not None and int(m.group(1)) < 1062


def _linux_7_or_later(release: str) -> bool:
    numbers = kernel_numbers(release)
    return numbers is not None and numbers[:1] >= (7,)


@dataclass(frozen=True)
class KnownRegression:
    key: str
    affected: Callable[[str], bool]  # the release (uname -r)
    applies: Callable[[HostFacts], bool]  # what else the host must show
    source: str


# Only entries a public source documents (the source names the range).
REGRESSIONS: tuple[KnownRegression, ...] = (
    KnownRegression(
        "ksm_lockup_4_11_rc",
        _rc_4_11_before_6,
        _ksm_running,
        "commits 4b0ece6fa016 (mm: migrate: fix remove_migration_pte() for ksm pages) and d75450ff40df "
        "(mm: fix page_vma_mapped_walk() for ksm pages), in 4.11-rc6; Ubuntu Forums 'Kernel 4.11RC' thread "
        "(ksmd soft lockups with VM guests on 4.11-rc2)",
    ),
    KnownRegression(
        "el7_xfs_kmem_deadlock",
        _el7_before_1062,
        _always,
        "obdiag check xfs_kernel_deadlock (issue oceanbase/obdiag#238): RHEL/CentOS 7 kernels before "
        "3.10.0-1062 with XFS log 'possible memory allocation deadlock'",
    ),
    KnownRegression(
        "postgresql_linux_7_preempt",
        _linux_7_or_later,
        _runs_postgresql,
        "thebuild.com 'PREEMPT_NONE is dead' (2026-04-23); Ubuntu 26.04 release notes known issue "
        "(ubuntu/ubuntu-release-notes#140)",
    ),
)


def _kernel_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    return tuning_checks(host, "kernel", host.kernel is not None or host.ksm is not None)


@rule(
    "kernel.known_regression",
    severity="warning",
    title="The kernel release has a known regression for this host",
    title_zh="内核版本存在与本主机相关的已知回归",
    condition=(
        "uname -r falls in a range of the table of documented regressions, and the host shows what the "
        "regression needs: 4.11.0-rc1..rc5 with KSM running (ksmd soft lockups, fixed in rc6); a RHEL/CentOS "
        "7 kernel before 3.10.0-1062 (XFS memory allocation deadlock, obdiag); Linux 7.0 or later on a "
        "PostgreSQL host (PREEMPT_NONE removed: spinlock contention)"
    ),
    condition_zh=(
        "uname -r 落在已记录回归的版本范围内，且主机显示出该回归所需的条件：4.11.0-rc1..rc5 且 KSM 在运行"
        "（ksmd 软锁死，rc6 修复）；RHEL/CentOS 7 内核早于 3."
        "10.0-1062（XFS 内存分配死锁，obdiag）；Linux 7.0 "
        "及以后的 PostgreSQL 主机（PREEMPT_NONE 被移除：自旋锁争用）"
    ),
    requires=("kernel",),
    relevant=_kernel_relevant,
    measures=("kernel-update-known-regression",),
    thresholds={"entries": [r.key for r in REGRESSIONS]},
    rationale=(
        "A yes/no condition per entry; an entry is only added with a public source that names the affected "
        "releases (the commit that fixed it, a vendor's check, a distribution's release notes). A release "
        "outside every range says nothing: most regressions are not in this table."
    ),
    rationale_zh=(
        "每个条目都是是/否条件；只有在公开来源给出受影响版本（修复它的提交、厂商的检查、发行版的发布说明）时才"
        "加入条目。不在任何范围内的版本不说明任何问题：大多数回归并不在此表中。"
    ),
    peer="obdiag `kernel_bad_version`, `xfs_kernel_deadlock`; Ubuntu release notes; upstream commits",
    explanations={
        "ksm_lockup_4_11_rc": (
            "{host} runs kernel {release} with KSM on: 4.11-rc1 to rc5 had a bug in KSM's page walk that "
            "locks a CPU in ksmd (soft lockups, a frozen host with guests running), fixed in 4.11-rc6. "
            "Source: {source}.",
            "{host} 运行内核 {release} 且开启了 KSM：4.11-"
            "rc1 到 rc5 的 KSM 页遍历有缺陷，会把一个 CPU 卡死在 "
            "ksmd 中（软锁死，运行云主机时整机冻结），4.11-rc6 修复。来源：{source}。",
        ),
        "el7_xfs_kmem_deadlock": (
            "{host} runs kernel {release}: RHEL/CentOS 7 kernels before 3.10.0-1062 can loop in XFS "
            "'possible memory allocation deadlock' when memory is fragmented, stalling the I/O of whatever "
            "sits on XFS. Source: {source}.",
            "{host} 运行内核 {release}：早于 3.10.0-1062 的 RHEL/CentOS 7 内核在内存碎片化时可能在 XFS 的 "
            "“possible memory allocation deadlock”中循环，使 XFS 上的 I/O 停顿。来源：{source}。",
        ),
        "postgresql_linux_7_preempt": (
            "{host} runs PostgreSQL on kernel {release}: Linux 7.0 removed PREEMPT_NONE, and PostgreSQL's "
            "spinlocks are preempted while held (throughput about halved in the reported benchmark) unless "
            "shared_buffers sit on huge pages. Source: {source}.",
            "{host} 在内核 {release} 上运行 PostgreSQL：Linu"
            "x 7.0 移除了 PREEMPT_NONE，PostgreSQL 的自旋锁在持有"
            "期间会被抢占（报告的基准中吞吐量约减半），除非 shared_buffers 使用大页。来源：{source}。",
        ),
    },
)
def known_regression(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        kernel = host.kernel
        release = (kernel.release or "").strip() if kernel else ""
        for entry in _regressions_hitting(host, release):
            yield finding(
                "kernel.known_regression",
                host,
                entry.key,
                values={"release": release, "source": entry.source},
                evidence=[evidence(host, "kernel.release", release, kernel, "release")],
            )


def _regressions_hitting(host: HostFacts, release: str) -> list[KnownRegression]:
    """The known regressions of kernel ``release`` that apply to the host (none without a release)."""
    if not release:
        return []
    return [entry for entry in REGRESSIONS if entry.affected(release) and entry.applies(host)]
