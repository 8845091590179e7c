"""OpenStack remedies: flavor NUMA/CPU properties and nova's CPU mode."""

from __future__ import annotations

import shlex

from django.utils.translation import gettext as _

from engine.remedies.base import NoRemedy, Remedy


def flavor_properties(
    *, flavor: str, vcpus: int, numa_nodes: int, threads: int = 1, dedicated: bool = True
) -> Remedy | NoRemedy:
    """``openstack flavor set`` giving instances a guest NUMA topology that
    mirrors the host: ``numa_nodes`` sockets of ``vcpus/numa_nodes`` vCPUs.

    >>> print(flavor_properties(flavor="crm.8x32", vcpus=32, numa_nodes=4).text)
    openstack flavor set crm.8x32 --property hw:numa_nodes=4 --property hw:cpu_sockets=4 \\
      --property hw:cpu_cores=8 --property hw:cpu_threads=1 --property hw:cpu_policy=dedicated
    """
    key = f"flavor:{flavor}"
    if numa_nodes < 1 or threads < 1 or vcpus % (numa_nodes * threads):
        return NoRemedy(
            key=key,
            reason=_(
                "%(vcpus)s vCPUs cannot be split into %(nodes)s node(s) of whole %(threads)s-thread cores"
            )
            % {"vcpus": vcpus, "nodes": numa_nodes, "threads": threads},
        )
    cores = vcpus // numa_nodes // threads
    props: dict[str, int | str] = {
        "hw:numa_nodes": numa_nodes,
        "hw:cpu_sockets": numa_nodes,
        "hw:cpu_cores": cores,
        "hw:cpu_threads": threads,
    }
    if dedicated:
        props["hw:cpu_policy"] = "dedicated"
    args = " ".join(f"--property {k}={v}" for k, v in props.items())
    f = shlex.quote(flavor)
    text = _wrapped_before_cores(f"openstack flavor set {f} {args}")
    return Remedy(
        key=key,
        title=_("Guest NUMA topology for flavor %(flavor)s") % {"flavor": flavor},
        text=text,
        rollback=f"openstack flavor unset {f} " + " ".join(f"--property {k}" for k in props),
        disruption="guest reboot",
        measures=("flavor-numa-topology",),
        rules=("kvm.guest_numa_missing", "kvm.flat_socket_topology"),
        data={"flavor": flavor, "properties": {k: str(v) for k, v in props.items()}},
        notes=(_("existing instances pick the properties up on resize/rebuild, not on reboot"),),
    )


def _wrapped_before_cores(text: str) -> str:
    """``text`` wrapped before ``--property hw:cpu_cores`` like a shell line
    continuation, so the page stays readable."""
    head, _sep, tail = text.partition(" --property hw:cpu_cores")
    return f"{head} \\\n  --property hw:cpu_cores{tail}" if tail else text


def nova_cpu_mode(*, previous_mode: str | None = "host-model") -> Remedy:
    """``[libvirt] cpu_mode=host-passthrough`` for nova-compute (nova.conf).

    >>> r = nova_cpu_mode()
    >>> print(r.text)
    [libvirt]
    cpu_mode = host-passthrough
    >>> r.rollback.splitlines()[0]
    'crudini --set /etc/nova/nova.conf libvirt cpu_mode host-model'
    """
    path = "/etc/nova/nova.conf"
    previous = previous_mode or "host-model"
    service = "openstack-nova-compute"
    return Remedy(
        key="nova:cpu_mode",
        title=_("Pass the host CPU (and its L3 cache) through to instances"),
        text="[libvirt]\ncpu_mode = host-passthrough",
        path=path,
        rollback=(
            f"crudini --set {path} libvirt cpu_mode {shlex.quote(previous)}\n"
            "systemctl restart openstack-nova-compute"
        ),
        commands=(
            f"crudini --set {path} libvirt cpu_mode host-passthrough",
            "systemctl restart openstack-nova-compute",
        ),
        data={
            "section": "libvirt",
            "option": "cpu_mode",
            "value": "host-passthrough",
            "previous": previous,
            "service": service,
        },
        disruption="guest reboot",
        measures=("cpu-mode-host-passthrough",),
        rules=("kvm.cpu_model_hides_cache",),
        notes=(
            _(
                "instances get the new CPU at their next hard reboot; live migration needs identical "
                "host CPUs"
            ),
        ),
    )
