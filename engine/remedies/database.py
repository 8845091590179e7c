"""Database remedies: mysqld under numactl, my.cnf lines, OceanBase parameters."""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Mapping

from django.utils.translation import gettext as _

from collectors.facts import HostFacts
from engine.remedies.base import NoRemedy, Remedy, require_names
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
    require_names(_UNIT, (unit,), "not a systemd service name")
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
    lines = ["[mysqld]", *(f"{name} = {_mycnf_value(name, value)}" for name, value in settings.items())]
    path = "/etc/my.cnf.d/casebook-numa.cnf"
    service = service.removesuffix(".service")
    if not _IDENT.match(service.replace("-", "_").replace("@", "_")):
        raise ValueError(f"not a service name: {service!r}")
    rollback = _mycnf_rollback(path, service, previous or {})
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
        measures=_mycnf_measures(settings),
        rules=(
            "mysql.numa_interleave_populate_startup",
            "mysql.buffer_pool_not_persisted",
            "mysql.large_pages_off",
        ),
        notes=tuple(notes),
        data={"service": service},
    )


def _mycnf_value(name: str, value: str | int | bool) -> str:
    """A server variable's value as my.cnf writes it (a bool as ON/OFF)."""
    require_names(_IDENT, (name,), "not a server variable")
    return ("ON" if value else "OFF") if isinstance(value, bool) else str(value)


def _mycnf_measures(settings: dict[str, str | int | bool]) -> tuple[str, ...]:
    """The catalogue's measures a my.cnf with ``settings`` carries out."""
    carried_out = {
        "disable-numa-interleave": "innodb_numa_interleave" in settings,
        "buffer-pool-dump-load": any(
            k.startswith(("innodb_buffer_pool_dump", "innodb_buffer_pool_load")) for k in settings
        ),
        "mysql-large-pages": "large_pages" in settings,
    }
    return tuple(slug for slug, done in carried_out.items() if done)


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


def _mycnf_rollback(path: str, service: str, previous: dict[str, str | None]) -> str:
    """Removing the drop-in at ``path`` and restarting ``service``, with the
    ``previous`` values the snapshot showed as a comment."""
    restore = [f"{k} = {v}" for k, v in previous.items() if v is not None]
    rollback = f"rm -f {path}\nsystemctl restart {service}"
    if restore:
        rollback += "\n# previous values: " + ", ".join(restore)
    return rollback


def _sql_value(value: str | int) -> str:
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("\\", "\\\\").replace("'", "''") + "'"


def _restore_sql(verb: str, previous: list[tuple[str, str | None]]) -> str:
    """The statements that set each parameter back to its previous value (a
    comment for a value the snapshot did not show)."""
    return "\n".join(
        f"{verb} {k} = {_sql_value(v)};" if v is not None else f"-- {k}: previous value unknown"
        for k, v in previous
    )


@dataclasses.dataclass(frozen=True)
class _SqlEndpoint:
    """Where OceanBase parameters are set: the observer, or ODP (its proxy)."""

    key: str
    verb: str
    port: int  # its SQL port


_OBSERVER = _SqlEndpoint(key="oceanbase", verb="ALTER SYSTEM SET", port=2881)
_ODP = _SqlEndpoint(key="odp", verb="ALTER PROXYCONFIG SET", port=2883)

# parameter -> (the measure that changes it, the rule that asks for it)
OB_PARAMETERS = {
    "cpu_quota_concurrency": ("tune-cpu-quota-concurrency", "oceanbase.cpu_quota_concurrency_high"),
    "net_thread_count": ("tune-net-thread-count", "oceanbase.net_thread_count_high"),
    "server_routing_mode": ("odp-routing-mode-oceanbase", "oceanbase.proxy_routing_not_default"),
}


def _ob_measures_and_rules(parameters: Mapping[str, object]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The measures that change the known ``parameters`` and the rules that ask for them (OB_PARAMETERS)."""
    known = [OB_PARAMETERS[k] for k in parameters if k in OB_PARAMETERS]
    return tuple(measure for measure, _rule in known), tuple(rule for _measure, rule in known)


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
    target = _ODP if proxy else _OBSERVER
    if not parameters:
        return NoRemedy(key=target.key, reason=_("no parameter to change"))
    require_names(_IDENT, parameters, "not a parameter name")
    text = "\n".join(f"{target.verb} {k} = {_sql_value(v)};" for k, v in parameters.items())
    rollback = _restore_sql(target.verb, [(k, (previous or {}).get(k)) for k in parameters])
    restart = "net_thread_count" in parameters
    measures, rules = _ob_measures_and_rules(parameters)
    return Remedy(
        key=target.key,
        title=_("OceanBase proxy configuration") if proxy else _("OceanBase system parameters"),
        text=text,
        rollback=rollback,
        disruption="service restart" if restart else "online",
        measures=measures,
        rules=rules,
        notes=(_("net_thread_count takes effect after the observer restarts"),) if restart else (),
        commands=(f"obclient -h <host> -P {target.port} -uroot@sys -p -e {shlex.quote(text)}",),
        data={"port": target.port, "sql": text, "rollback_sql": rollback},
    )
