"""KVM guest disks: the host page cache between the guest and its storage.

Decided on the domain XML alone (``<disk><driver cache= io=>``). What
"default" means: libvirt passes no cache option when the attribute is absent
or ``default`` (formatdomain: "the hypervisor's default"), and QEMU's manual
gives ``cache=writeback`` as its default mode, so such a disk goes through the
host page cache too; the XML does not say which QEMU runs it, so that case is
reported at info. A pasted fragment or a cut document is never a confident
finding: what it shows is reported at info, and a disk whose ``<driver>`` the
paste does not show is not judged.
"""

from __future__ import annotations

from collections.abc import Iterator

from collectors.facts import Domain, DomainDisk, HostFacts
from engine.partial import cut_hides
from engine.rules import (
    RuleContext,
    RuleFinding,
    domain_explanation,
    domain_is_partial,
    domain_label,
    domain_manager_name,
    evidence,
    finding,
    guest_disks,
    host_domains,
    kvm_host_needs_domains,
    rule,
)

RULE_ID = "kvm.disk_cache_mode"
# modes that keep the guest's I/O in the host page cache (RH guide 7.2/7.3)
HOST_CACHED_MODES = ("writeback", "writethrough", "unsafe")
# modes that bypass it (O_DIRECT): what the guide advises for I/O-heavy guests
DIRECT_MODES = ("none", "directsync")
DEFAULT_MODE = "default"


def _io_heavy(d: Domain) -> bool:
    """What the XML shows of an I/O-heavy guest: a data disk besides the
    system disk, or I/O threads (configured for disk I/O)."""
    disks = guest_disks(d)
    return len(disks) >= 2 or d.iothreads > 0 or any(disk.iothread is not None for disk in disks)


def _mode(disk: DomainDisk) -> str:
    return disk.cache or DEFAULT_MODE


def _judged(d: Domain, disk: DomainDisk) -> bool:
    """A disk whose cache mode the rule judges on this guest."""
    if not disk.driver_shown or disk.device != "disk":
        return False
    mode = _mode(disk)
    if mode in DIRECT_MODES:
        return False
    # unsafe drops the guest's flushes: on any guest; the others on I/O-heavy ones
    return mode == "unsafe" or (mode in (*HOST_CACHED_MODES, DEFAULT_MODE) and _io_heavy(d))


def _severity(d: Domain, disks: list[DomainDisk]) -> str:
    if domain_is_partial(d) or all(_mode(disk) == DEFAULT_MODE for disk in disks):
        return "info"
    return "warning"


_EXPLANATIONS = {
    "": (
        "Guest {guest}: disk(s) {disks} use the host page cache (cache {modes}) instead of cache='none' or "
        "'directsync'. Its I/O is cached twice (guest and host), the host's memory and dirty-page writeback "
        "take part in every write, and 'unsafe' drops the guest's flushes.",
        "虚拟机 {guest}：磁盘 {disks} 使用宿主机页缓存（cache {modes}），而不是 cache='none' 或 'directs"
        "ync'。"
        "其 I/O 被缓存两次（虚拟机内和宿主机上），每次写入都牵涉宿主机内存和脏页回写；'unsafe' 还会丢弃虚拟机"
        "的刷盘请求。",
    ),
    "managed": (
        "Guest {guest}: disk(s) {disks} use the host page cache (cache {modes}) instead of cache='none' or "
        "'directsync'. {manager} writes this domain XML: set the cache mode where it does (nova.conf "
        "[libvirt] disk_cachemodes, ZStack's volume/VM options), a virsh edit does not last.",
        "虚拟机 {guest}：磁盘 {disks} 使用宿主机页缓存（cache {modes}），而不是 cache='none' 或 'directs"
        "ync'。"
        "该域 XML 由 {manager} 生成：应在它生成 XML 的地方设置缓存模式（nova.conf 的 [libvirt] disk_cach"
        "emodes、"
        "ZStack 的云盘/云主机选项），virsh edit 的修改不会保留。",
    ),
    "partial": (
        "Guest {guest} (a partial domain XML: a pasted fragment or a cut document): disk(s) {disks} show "
        "cache {modes}, i.e. the host page cache. Whether this guest is I/O-heavy cannot be told from the "
        "part shown; the whole `virsh dumpxml` says.",
        "虚拟机 {guest}（不完整的域 XML：粘贴的片段或被截断的文档）：磁盘 {disks} 显示 cache {modes}，即"
        "使用宿主机"
        "页缓存。仅凭所示部分无法判断该虚拟机是否 I/O 密集；完整的 `virsh dumpxml` 才能说明。",
    ),
}


@rule(
    RULE_ID,
    severity="warning",
    title="A guest disk goes through the host page cache",
    title_zh="虚拟机磁盘经过宿主机页缓存",
    condition=(
        "a KVM domain disk (device='disk') whose <driver> has cache='unsafe', or, on a guest with a data"
        " disk "
        "or I/O threads, cache='writeback'/'writethrough' or no cache / cache='default' (the hypervisor's "
        "default, writeback for QEMU: info), instead of 'none' or 'directsync'; a fragment or cut XML: info"
    ),
    condition_zh=(
        "KVM 域的磁盘（device='disk'）的 <driver> 为 cache='unsafe'；或在有数据盘或 I/O 线程的虚拟机上为 "
        "cache='writeback'/'writethrough'，或未设置 cache / cache='default'（使用虚拟化层默认值，QEMU 为 "
        "writeback：info），而不是 'none' 或 'directsync'；XML 是片段或被截断时：info"
    ),
    requires=("domains",),
    relevant=kvm_host_needs_domains,
    measures=("disk-cache-none",),
    thresholds={"host_cached_modes": list(HOST_CACHED_MODES), "direct_modes": list(DIRECT_MODES)},
    rationale=(
        "RH Virtualization Tuning and Optimization Guide 7.2 (RHEL 7) / 7.3 (RHEL 6): cache='none' is for "
        "guests with large I/O requirements and generally the best choice (the only one that supports "
        "migration); writethrough is slower and prone to scaling problems, for few guests with small I/O; "
        "unsafe ignores the guest's sync requests. directsync bypasses the host cache too (KubeVirt added it "
        "for database guests). A guest with a data disk or I/O threads is taken as I/O-heavy; a single-disk "
        "guest is judged only for unsafe. An absent cache attribute is libvirt's 'default' (no option "
        "passed, QEMU's documented default is writeback): info, since the XML does not show the QEMU. The "
        "io mode is not judged: the guide describes native and threads without advising one, and io='native' "
        "requires cache none or directsync anyway."
    ),
    rationale_zh=(
        "红帽虚拟化调优指南 7.2（RHEL 7）/ 7.3（RHEL 6）：cache='none' 适用于 I/O 需求大的虚拟机，通常是最佳"
        "选择（也是唯一支持迁移的模式）；writethrough 较慢且易有扩展问题，只适合少量 I/O 小的虚拟机；unsafe "
        "忽略虚拟机的同步请求。directsync 同样绕过宿主机缓存（KubeVirt 为数据库虚拟机加入了它）。有数据"
        "盘或 I/O "
        "线程的虚拟机视为 I/O 密集；单盘虚拟机只判断 unsafe。未设置 cache 即 libvirt 的 'default'（不传参数，"
        "QEMU 文档中的默认值为 writeback）：定为 info，因为 XML 不显示 QEMU 版本。不判断 io 模式：指南只描述 "
        "native 与 threads 而未推荐其一，且 io='native' 本就要求 cache 为 none 或 directsync。"
    ),
    peer=(
        "RH Virtualization Tuning and Optimization Guide 7.2/7.3 (caching), 7.4 (I/O mode); none among the "
        "checkers"
    ),
    explanations=_EXPLANATIONS,
)
def disk_cache_mode(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        for d in host_domains(host):
            disks = _judged_disks(d)
            if disks:
                yield _host_cached_disks(host, d, disks)


def _judged_disks(d: Domain) -> list[DomainDisk]:
    """The disks whose cache mode the rule judges: none on a TCG guest (type 'qemu')
    or when the paste cut the XML before its disks."""
    if d.domain_type not in (None, "kvm") or cut_hides(d, RULE_ID):
        return []
    return [disk for disk in d.disks if _judged(d, disk)]


def _host_cached_disks(host: HostFacts, d: Domain, disks: list[DomainDisk]) -> RuleFinding:
    label = domain_label(d)
    names = [disk.target or disk.source or f"#{i}" for i, disk in enumerate(disks)]
    return finding(
        RULE_ID,
        host,
        domain_explanation(d, partial=domain_is_partial(d)),
        values={
            "guest": label,
            "disks": ", ".join(names),
            "modes": "/".join(sorted({_mode(disk) for disk in disks})),
            "manager": domain_manager_name(d),
        },
        severity=_severity(d, disks),
        evidence=[
            evidence(host, f"domains[{label}].disks[{name}].cache", _mode(disk), d, f"disks[{disk.target}]")
            for name, disk in zip(names, disks, strict=True)
        ],
    )
