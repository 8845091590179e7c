"""KVM guest networking: virtio-net queues."""

from __future__ import annotations

from collections.abc import Iterator

from engine.rules import (
    RuleContext,
    RuleFinding,
    domain_label,
    domain_vcpus,
    evidence,
    finding,
    host_domains,
    looks_like_kvm_host,
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
    relevant=lambda ctx, h: ("domains",) if looks_like_kvm_host(h) else (),
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
            if not vcpus or vcpus < SINGLE_QUEUE_MIN_VCPUS:
                continue
            for i, nic in enumerate(d.interfaces):
                if nic.model != "virtio" or (nic.queues is not None and nic.queues > 1):
                    continue
                label = nic.mac or f"#{i}"
                yield finding(
                    "kvm.virtio_net_single_queue",
                    host,
                    values={"domain": domain_label(d), "vcpus": vcpus, "nic": label, "others": vcpus - 1},
                    evidence=[
                        evidence(
                            host,
                            f"domains[{domain_label(d)}].interfaces[{i}].queues",
                            nic.queues or 1,
                            d,
                            f"interfaces[{i}]",
                        ),
                        evidence(host, f"domains[{domain_label(d)}].vcpus", vcpus, d, "vcpu"),
                    ],
                )
