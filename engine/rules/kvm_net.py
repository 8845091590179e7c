"""KVM guest networking: virtio-net queues and backend (domain XMLs and QEMU command lines)."""

from __future__ import annotations

from collections.abc import Iterator

from collectors.facts import Domain, DomainInterface, HostFacts
from engine.rules import (
    Evidence,
    RuleContext,
    RuleFinding,
    domain_explanation,
    domain_is_partial,
    domain_label,
    domain_manager_name,
    domain_vcpus,
    evidence,
    finding,
    host_domains,
    kvm_host_needs_domains,
    rule,
)

# a guest this large sends and receives through one vCPU with one queue pair
SINGLE_QUEUE_MIN_VCPUS = 4


@rule(
    "kvm.virtio_net_single_queue",
    severity="info",
    title="A multi-vCPU guest has a single-queue virtio-net NIC",
    title_zh="多 vCPU 虚拟机的 virtio-net 网卡只有一个队列",
    condition=(
        f"a domain with >= {SINGLE_QUEUE_MIN_VCPUS} vCPUs has a virtio <interface> without <driver queues='"
        "N'> "
        "(or with queues='1'): all its packets are handled by one queue pair, one vCPU's softirq"
    ),
    condition_zh=(
        f"vCPU >= {SINGLE_QUEUE_MIN_VCPUS} 的虚拟机有未设置 <driver queues='N'>（或 queues='1'）的 virtio "
        "网卡："
        "所有报文由一个队列对、一个 vCPU 的软中断处理"
    ),
    requires=("domains",),
    # a KVM host decides from its domain XMLs
    relevant=kvm_host_needs_domains,
    measures=("virtio-net-multiqueue",),
    thresholds={"min_vcpus": SINGLE_QUEUE_MIN_VCPUS},
    rationale=(
        "One virtio-net queue pair is served by one vCPU: around 100k packets per second is its ceiling "
        "(ganeti's virtio_net_queues work; OVH VPS users saw one vCore at 100 % softirq while the others "
        "idled). From 4 vCPUs a guest has CPUs to spread packets over (RH virtualization guide 5.4.2: "
        "queues = vCPUs, up to the device's limit). Info, not a warning: the XML alone does not show the "
        "packet rate; net.softirq_hotspot in the guest says when it bites."
    ),
    rationale_zh=(
        "一个 virtio-net 队列对由一个 vCPU 处理：上限约每秒 10 万个报文（ganeti 的 virtio_net_queues 工作；"
        "OVH "
        "VPS 用户看到一个 vCore 软中断 100 %，其他空闲）。4 个 vCPU 起虚拟机就有可分担报文的 CPU（红帽虚拟化"
        "调优指南 5.4.2：队列数 = vCPU 数，不超过设备上限）。定为 info 而非 warning：仅凭 XML 看不出报文速"
        "率；"
        "虚拟机内的 net.softirq_hotspot 会说明何时成为瓶颈。"
    ),
    peer=(
        "RH Virtualization Tuning and Optimization Guide 5.4.2 (multi-queue virtio-net); none among the "
        "checkers"
    ),
    explanation=(
        "Guest {domain} has {vcpus} vCPUs but its virtio NIC {nic} has one queue pair: every packet is "
        "processed by one vCPU, whatever the other {others} do."
    ),
    explanation_zh=(
        "虚拟机 {domain} 有 {vcpus} 个 vCPU，但其 virtio 网卡 {nic} 只有一个队列对：所有报文都由一个 vCPU "
        "处理，"
        "其余 {others} 个 vCPU 帮不上忙。"
    ),
)
def virtio_net_single_queue(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        for d in host_domains(host):
            vcpus = domain_vcpus(d)
            if vcpus < SINGLE_QUEUE_MIN_VCPUS:
                continue
            for i, nic in _single_queue_nics(d):
                yield _single_queue_finding(host, d, vcpus, i, nic)


def _single_queue_nics(d: Domain) -> list[tuple[int, DomainInterface]]:
    """(index, NIC) of each virtio NIC without <driver queues='N'> above 1."""
    return [
        (i, nic)
        for i, nic in enumerate(d.interfaces)
        if nic.model == "virtio" and (nic.queues is None or nic.queues <= 1)
    ]


def _single_queue_finding(
    host: HostFacts, d: Domain, vcpus: int, i: int, nic: DomainInterface
) -> RuleFinding:
    label = domain_label(d)
    return finding(
        "kvm.virtio_net_single_queue",
        host,
        values={"domain": label, "vcpus": vcpus, "nic": nic.mac or f"#{i}", "others": vcpus - 1},
        evidence=[
            evidence(
                host, f"domains[{label}].interfaces[{i}].queues", nic.queues or 1, d, f"interfaces[{i}]"
            ),
            evidence(host, f"domains[{label}].vcpus", vcpus, d, "vcpu"),
        ],
    )


VHOST_RULE = "kvm.vhost_net_disabled"


@rule(
    VHOST_RULE,
    severity="warning",
    title="A guest's virtio NIC runs in QEMU user space (vhost-net disabled)",
    title_zh="虚拟机的 virtio 网卡在 QEMU 用户态处理（未使用 vhost-net）",
    condition=(
        "a KVM domain has a virtio <interface> with <driver name='qemu'>, or a KVM guest's QEMU command "
        "line (a libvirt qemu log, a ps row) backs a virtio NIC with a tap netdev without vhost=on (nor "
        "vhostfd or vhostforce, which turn it on): its packets are processed by the QEMU process instead of "
        "the vhost-net kernel driver; a domain of type 'qemu' (TCG) is not judged; a fragment or cut XML, or "
        "an XML or command line that does not show KVM: info"
    ),
    condition_zh=(
        "KVM 域有 <driver name='qemu'> 的 virtio <interface>，或 KVM 虚拟机的 QEMU 命令行（libvirt 的 "
        "qemu 日志、ps 的一行）中 virtio 网卡的 tap netdev 没有 vhost=on（也没有会开启它的 vhostfd 或 "
        "vhostforce）：其报文由 QEMU 进程处理，而不是 vhost-net 内核驱动；类型为 'qemu'（TCG）的域不判断；"
        "XML 是片段、被截断，或 XML、命令行看不出是 KVM 时：info"
    ),
    requires=("domains",),
    relevant=kvm_host_needs_domains,
    measures=("enable-vhost-net",),
    rationale=(
        "RH Virtualization Tuning and Optimization Guide 5.2/5.3: vhost_net moves part of the virtio driver "
        "into the host kernel, which reduces copies, latency and CPU use. libvirt uses it by default when "
        "/dev/vhost-net exists; <driver name='qemu'/> forces the user-space backend even then (libvirt "
        "commit 175077fd). A yes/no setting. The RHEL 6 host configuration guide (11.2) names the one case "
        "for it: UDP sent from the host to a slower guest on the same host, so the finding says so. TCG "
        "guests (domain type 'qemu', e.g. nova with virt_type=qemu writes driver name='qemu') are emulated "
        "as a whole and out of scope. On a QEMU command line the running state shows whatever the XML "
        "says: QEMU's tap netdev uses vhost-net only with vhost=on (or vhostfd/vhostforce), and libvirt "
        "passes it only when it could open /dev/vhost-net, so a tap without it is the user-space backend."
    ),
    rationale_zh=(
        "红帽虚拟化调优指南 5.2/5.3：vhost_net 把 virtio 驱动的一部分移入宿主机内核，减少拷贝、降低延迟"
        "和 CPU "
        "占用。/dev/vhost-net 存在时 libvirt 默认使用它；<driver name='qemu'/> 则强制使用用户态后端（libvirt "
        "提交 175077fd）。这是一个是/否设置。RHEL 6 主机配置指南 11.2 说明了唯一适用的情形：宿主机向同机"
        "上处理"
        "较慢的虚拟机发送 UDP，因此结论中会提到。TCG 虚拟机（域类型 'qemu'，例如 virt_type=qemu 的 nova 会写 "
        "driver name='qemu'）整体都是模拟的，不在范围内。QEMU 命令行显示的是运行时的实际状态，与 XML 怎么写无"
        "关：QEMU 的 tap netdev 只有 vhost=on（或 vhostfd/vhostforce）时才使用 vhost-net，而 libvirt 只在能"
        "打开 /dev/vhost-net 时才传入它，因此没有它的 tap 就是用户态后端。"
    ),
    peer=(
        "RH Virtualization Tuning and Optimization Guide 5.2/5.3 (virtio and vhost_net); none among the "
        "checkers"
    ),
    explanations={
        "": (
            "Guest {domain}: virtio NIC(s) {nics} have <driver name='qemu'>, so every packet is copied t"
            "hrough "
            "the QEMU process instead of the vhost-net kernel driver: more CPU and latency per packet. K"
            "eep it "
            "only if it was set for UDP from the host to this guest (RHEL 6 host guide 11.2).",
            "虚拟机 {domain}：virtio 网卡 {nics} 设置了 <driver name='qemu'>，每个报文都经 QEMU 进程拷贝"
            "，而不是由 "
            "vhost-net 内核驱动处理：每个报文的 CPU 开销和延迟更高。只有为宿主机向该虚拟机发送 UDP 而设"
            "置时才应保留"
            "（RHEL 6 主机配置指南 11.2）。",
        ),
        "managed": (
            "Guest {domain}: virtio NIC(s) {nics} have <driver name='qemu'>, so every packet is copied t"
            "hrough "
            "the QEMU process instead of the vhost-net kernel driver. {manager} writes this domain XML (nova "
            "writes driver name='qemu' when vhost-net is not usable or virt_type is qemu): check /dev/vh"
            "ost-net "
            "and the manager's settings, a virsh edit does not last.",
            "虚拟机 {domain}：virtio 网卡 {nics} 设置了 <driver name='qemu'>，每个报文都经 QEMU 进程拷贝"
            "，而不是由 "
            "vhost-net 内核驱动处理。该域 XML 由 {manager} 生成（vhost-net 不可用或 virt_type 为 qemu 时"
            " nova 会写 "
            "driver name='qemu'）：请检查 /dev/vhost-net 和管理平台的设置，virsh edit 的修改不会保留。",
        ),
        "cmdline": (
            "Guest {domain}: its QEMU command line backs virtio NIC(s) {nics} with a tap netdev without "
            "vhost=on ({netdevs}), so every packet is copied through the QEMU process instead of the "
            "vhost-net kernel driver: more CPU and latency per packet. libvirt passes vhost=on when it can "
            "open /dev/vhost-net: check that the vhost_net module is loaded and the interface has no <driver "
            "name='qemu'/>; a hand-written command line needs vhost=on.",
            "虚拟机 {domain}：其 QEMU 命令行中 virtio 网卡 {nics} 的 tap netdev 没有 vhost=on"
            "（{netdevs}），每个报文都经 QEMU 进程拷贝，而不是由 vhost-net 内核驱动处理：每个报文的 CPU "
            "开销和延迟更高。libvirt 能打开 /dev/vhost-net 时会传入 vhost=on：请检查 vhost_net 模块是否已"
            "加载、网卡是否设置了 <driver name='qemu'/>；手写的命令行需要加上 vhost=on。",
        ),
        "cmdline_partial": (
            "Guest {domain}: its QEMU command line backs virtio NIC(s) {nics} with a tap netdev without "
            "vhost=on ({netdevs}), the user-space backend. The command line does not show whether the guest "
            "runs under KVM (no -enable-kvm, accel=kvm or -accel kvm).",
            "虚拟机 {domain}：其 QEMU 命令行中 virtio 网卡 {nics} 的 tap netdev 没有 vhost=on"
            "（{netdevs}），即用户态后端。命令行中看不出该虚拟机是否运行在 KVM 下（没有 -enable-kvm、"
            "accel=kvm 或 -accel kvm）。",
        ),
        "partial": (
            "Guest {domain} (a partial domain XML, or one whose domain type is not shown): virtio NIC(s)"
            " {nics} "
            "show <driver name='qemu'>, the user-space backend. Whether the guest is a KVM guest, and th"
            "e rest "
            "of its devices, are not in the part shown.",
            "虚拟机 {domain}（不完整的域 XML，或看不到域类型）：virtio 网卡 {nics} 显示 <driver name='qe"
            "mu'>，即用户态"
            "后端。所示部分看不出它是否为 KVM 虚拟机，也看不到其余设备。",
        ),
    },
)
def vhost_net_disabled(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        for d in host_domains(host):
            nics = _user_space_nics(d)
            if nics:
                yield _user_space_finding(host, d, nics)


def _user_space_nics(d: Domain) -> list[tuple[int, DomainInterface]]:
    """(index, NIC) of each virtio NIC with <driver name='qemu'>; none on a TCG guest (type 'qemu')."""
    if d.domain_type not in (None, "kvm"):
        return []
    return [(i, nic) for i, nic in enumerate(d.interfaces) if nic.model == "virtio" and nic.driver == "qemu"]


def _kvm_not_shown(d: Domain) -> bool:
    """Part of a domain XML, or one without its type: whether it is a KVM guest is not shown."""
    return domain_is_partial(d) or d.domain_type is None


def _user_space_finding(host: HostFacts, d: Domain, nics: list[tuple[int, DomainInterface]]) -> RuleFinding:
    partial = _kvm_not_shown(d)
    label = domain_label(d)
    cmdline = d.origin == "qemu_cmdline"
    template = (
        ("cmdline_partial" if partial else "cmdline") if cmdline else domain_explanation(d, partial=partial)
    )
    return finding(
        VHOST_RULE,
        host,
        template,
        values={
            "domain": label,
            "nics": ", ".join(nic.mac or f"#{i}" for i, nic in nics),
            "netdevs": "; ".join(nic.netdev or "" for _, nic in nics),
            "manager": domain_manager_name(d),
        },
        severity="info" if partial else "warning",
        evidence=[_backend_evidence(host, d, label, i, nic) for i, nic in nics],
    )


def _backend_evidence(host: HostFacts, d: Domain, label: str, i: int, nic: DomainInterface) -> Evidence:
    """The NIC's <driver name='qemu'> in its XML, or its tap netdev on the QEMU command line."""
    if d.origin == "qemu_cmdline":
        fact = f"domains[{label}].qemu_cmdline.interfaces[{i}].netdev"
        return evidence(host, fact, f"{nic.netdev} (no vhost=on: user-space backend)", d, f"interfaces[{i}]")
    return evidence(host, f"domains[{label}].interfaces[{i}].driver", nic.driver, d, f"interfaces[{i}]")
