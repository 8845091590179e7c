"""Database remedies: mysqld under numactl, my.cnf lines, OceanBase parameters."""

from __future__ import annotations

import dataclasses
import re
import shlex

from django.utils.translation import gettext as _

from collectors.facts import HostFacts
from engine.remedies.base import NoRemedy, Remedy
from engine.remedies.servers import host_packaging

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_UNIT = re.compile(r"^[A-Za-z0-9_.@-]+\.service$")


def numactl_dropin(
    *, unit: str = "mariadb.service", binary: str = "/usr/sbin/mariadbd", args: str = "$MYSQLD_OPTS"
) -> Remedy:
    """A systemd drop-in starting mysqld under ``numactl --interleave=all``
    (for MariaDB before 10.5 / MySQL builds without innodb_numa_interleave).

    ``ExecStart=`` must be emptied first: a service may only have one.

    >>> print(numactl_dropin().text)
    [Service]
    ExecStart=
    ExecStart=/usr/bin/numactl --interleave=all /usr/sbin/mariadbd $MYSQLD_OPTS
    """
    if not _UNIT.match(unit):
        raise ValueError(f"not a systemd service name: {unit!r}")
    if not binary.startswith("/") or any(c.isspace() for c in binary):
        raise ValueError(f"the server binary must be an absolute path: {binary!r}")
    path = f"/etc/systemd/system/{unit}.d/numa-interleave.conf"
    text = f"[Service]\nExecStart=\nExecStart=/usr/bin/numactl --interleave=all {binary} {args}".rstrip()
    return Remedy(
        key=f"systemd:{unit}",
        title=_("Run %(unit)s with interleaved memory") % {"unit": unit},
        text=text,
        path=path,
        rollback=f"rm -f {path}\nsystemctl daemon-reload\nsystemctl restart {unit}",
        commands=(
            f"mkdir -p /etc/systemd/system/{unit}.d",
            f"cat > {path} <<'EOF'\n{text}\nEOF",
            "systemctl daemon-reload",
            f"systemctl restart {unit}",
            f"grep -c interleave /proc/$(systemctl show -p MainPID --value {unit})/numa_maps",
        ),
        disruption="service restart",
        data={"unit": unit, "binary": binary},
        measures=("mariadb-numactl-interleave",),
        rules=("mysql.numa_interleave_unavailable", "memory.db_exceeds_node"),
    )


def mycnf_lines(
    *,
    settings: dict[str, str | int | bool],
    previous: dict[str, str | None] | None = None,
    service: str = "mysqld",
) -> Remedy:
    """``[mysqld]`` lines for a my.cnf drop-in (innodb_numa_interleave,
    buffer pool dump/load, large_pages ...).

    >>> r = mycnf_lines(settings={"innodb_buffer_pool_dump_at_shutdown": True,
    ...                           "innodb_buffer_pool_load_at_startup": True})
    >>> print(r.text)
    [mysqld]
    innodb_buffer_pool_dump_at_shutdown = ON
    innodb_buffer_pool_load_at_startup = ON
    """
    lines = ["[mysqld]"]
    for name, value in settings.items():
        if not _IDENT.match(name):
            raise ValueError(f"not a server variable: {name!r}")
        shown = ("ON" if value else "OFF") if isinstance(value, bool) else str(value)
        lines.append(f"{name} = {shown}")
    path = "/etc/my.cnf.d/casebook-numa.cnf"
    measures = []
    if "innodb_numa_interleave" in settings:
        measures.append("disable-numa-interleave")
    if any(
        k.startswith("innodb_buffer_pool_dump") or k.startswith("innodb_buffer_pool_load") for k in settings
    ):
        measures.append("buffer-pool-dump-load")
    if "large_pages" in settings:
        measures.append("mysql-large-pages")
    restore = [f"{k} = {v}" for k, v in (previous or {}).items() if v is not None]
    service = service.removesuffix(".service")
    if not _IDENT.match(service.replace("-", "_").replace("@", "_")):
        raise ValueError(f"not a service name: {service!r}")
    rollback = f"rm -f {path}\nsystemctl restart {service}"
    if restore:
        rollback += "\n# previous values: " + ", ".join(restore)
    notes = []
    if settings.get("large_pages"):
        notes.append(_("large_pages needs vm.nr_hugepages sized for the buffer pool and memlock for mysqld"))
    return Remedy(
        key="mycnf",
        title=_("MySQL/MariaDB settings"),
        text="\n".join(lines),
        path=path,
        rollback=rollback,
        disruption="service restart",
        measures=tuple(measures),
        rules=(
            "mysql.numa_interleave_populate_startup",
            "mysql.buffer_pool_not_persisted",
            "mysql.large_pages_off",
        ),
        notes=tuple(notes),
        data={"service": service},
    )


def _where_notes(host: HostFacts) -> tuple[str, ...]:
    """Where the change goes: the machine the database runs on (a guest's
    database is changed in the guest, never on its hypervisor)."""
    name = host.hostname or host.label or "?"
    if host.is_guest:
        return (
            _("Apply inside the guest %(name)s, where the database runs (not on its hypervisor)")
            % {"name": name},
        )
    return (_("Apply on %(name)s, the machine the database runs on") % {"name": name},)


def numactl_dropin_for(host: HostFacts) -> Remedy:
    """:func:`numactl_dropin` with the binary and unit of the server ``host``
    runs (``engine.remedies.servers``)."""
    pkg = host_packaging(host)
    r = numactl_dropin(unit=pkg.unit, binary=pkg.binary, args=pkg.args)
    return dataclasses.replace(
        r,
        notes=(
            *r.notes,
            *_where_notes(host),
            _("Server binary and unit: %(note)s") % {"note": pkg.note},
        ),
    )


def mycnf_for(
    host: HostFacts, *, settings: dict[str, str | int | bool], previous: dict[str, str | None]
) -> Remedy:
    """:func:`mycnf_lines` restarting the unit of the server ``host`` runs."""
    pkg = host_packaging(host)
    r = mycnf_lines(settings=settings, previous=previous, service=pkg.unit)
    return dataclasses.replace(r, notes=(*r.notes, *_where_notes(host)))


def _sql_value(value: str | int) -> str:
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("\\", "\\\\").replace("'", "''") + "'"


def oceanbase_parameters(
    *, parameters: dict[str, str | int], previous: dict[str, str | None] | None = None, proxy: bool = False
) -> Remedy | NoRemedy:
    """``ALTER SYSTEM SET`` (observer) or ``ALTER PROXYCONFIG SET`` (ODP) statements.

    >>> r = oceanbase_parameters(parameters={"cpu_quota_concurrency": 2, "net_thread_count": 6},
    ...                          previous={"cpu_quota_concurrency": "4", "net_thread_count": "32"})
    >>> print(r.text)
    ALTER SYSTEM SET cpu_quota_concurrency = 2;
    ALTER SYSTEM SET net_thread_count = 6;
    >>> print(r.rollback)
    ALTER SYSTEM SET cpu_quota_concurrency = '4';
    ALTER SYSTEM SET net_thread_count = '32';
    """
    verb = "ALTER PROXYCONFIG SET" if proxy else "ALTER SYSTEM SET"
    port = 2883 if proxy else 2881  # ODP / observer SQL port
    key = "odp" if proxy else "oceanbase"
    if not parameters:
        return NoRemedy(key=key, reason=_("no parameter to change"))
    for name in parameters:
        if not _IDENT.match(name):
            raise ValueError(f"not a parameter name: {name!r}")
    text = "\n".join(f"{verb} {k} = {_sql_value(v)};" for k, v in parameters.items())
    old = [(k, (previous or {}).get(k)) for k in parameters]
    rollback = "\n".join(
        f"{verb} {k} = {_sql_value(v)};" if v is not None else f"-- {k}: previous value unknown"
        for k, v in old
    )
    slugs = {
        "cpu_quota_concurrency": "tune-cpu-quota-concurrency",
        "net_thread_count": "tune-net-thread-count",
        "server_routing_mode": "odp-routing-mode-oceanbase",
    }
    rules = {
        "cpu_quota_concurrency": "oceanbase.cpu_quota_concurrency_high",
        "net_thread_count": "oceanbase.net_thread_count_high",
        "server_routing_mode": "oceanbase.proxy_routing_not_default",
    }
    notes = (
        (_("net_thread_count takes effect after the observer restarts"),)
        if "net_thread_count" in parameters
        else ()
    )
    return Remedy(
        key=key,
        title=_("OceanBase proxy configuration") if proxy else _("OceanBase system parameters"),
        text=text,
        rollback=rollback,
        disruption="service restart" if "net_thread_count" in parameters else "online",
        measures=tuple(slugs[k] for k in parameters if k in slugs),
        rules=tuple(rules[k] for k in parameters if k in rules),
        notes=notes,
        commands=(f"obclient -h <host> -P {port} -uroot@sys -p -e {shlex.quote(text)}",),
        data={"port": port, "sql": text, "rollback_sql": rollback},
    )
