"""Cloud managers that own a guest's domain XML.

OpenStack nova and ZStack write the domain XML themselves and write it again
(start, migration, resize, a change in their UI): a ``virsh define`` of a
patched XML is undone the next time they do. The patch still shows what the
guest needs; the notes say where to set it so that it lasts.
"""

from __future__ import annotations

from django.utils.translation import gettext as _

from collectors.facts import Domain


def manager_notes(domain: Domain) -> list[str]:
    """Warnings for a patch of ``domain`` when a cloud manager writes its XML."""
    if domain.manager == "openstack":
        return [
            _(
                "OpenStack nova generates this domain XML: a virsh define is overwritten at the next "
                "hard reboot, resize or migration. Set the same placement with flavor extra specs "
                "(hw:cpu_policy=dedicated, hw:numa_nodes, hw:cpu_sockets/cores/threads, "
                "hw:mem_page_size, hw:emulator_threads_policy) or image properties, then rebuild or resize."
            )
        ]
    if domain.manager == "zstack":
        return [
            _(
                "ZStack generates this domain XML: a virsh define is overwritten when ZStack starts or "
                "migrates the VM. Set the pinning and NUMA options in ZStack's VM settings and global "
                "configuration (or its XML hook), then restart the VM from ZStack."
            )
        ]
    return []
