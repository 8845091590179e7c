"""Which server binary and systemd unit a MySQL-family server has, per flavour,
version and distribution family: one table, so a remedy never starts a binary
the pasted version does not have (``/usr/sbin/mariadbd`` on MariaDB 10.4 left
the database down) nor restarts a unit the host does not know.

Sources (docs/remedies.md, "Database servers"):

* MariaDB: the server was ``mysqld`` before 10.5, ``mariadbd`` from 10.5 on
  (``mysqld`` stays as a symlink; 10.4.6+ packages add a ``mariadbd`` symlink
  to ``mysqld`` but builds without it exist, so the real binary is used);
  the unit is ``mariadb.service`` in MariaDB's own RPM and DEB packages, with
  ``mysql.service``/``mysqld.service`` aliases in the Debian packages.
* MySQL 5.7/8.0 (Oracle's packages): ``/usr/sbin/mysqld``; RPM platforms use
  ``mysqld.service``, Debian/Ubuntu ``mysql.service``; 5.7's RPM unit forks
  (``--daemonize --pid-file=...``).
* Percona Server 8.0: ``/usr/sbin/mysqld``; ``mysqld.service`` on RHEL,
  ``mysql.service`` on Debian/Ubuntu.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.utils.translation import gettext as _

from collectors.facts import HostFacts

RHEL, DEBIAN = "rhel", "debian"

_RHEL_HINT = re.compile(
    r"\b(el\d+|centos|red ?hat|rhel|rocky|alma|oracle linux|fedora|anolis|openeuler|kylin)", re.I
)
_DEBIAN_HINT = re.compile(r"\b(debian|ubuntu|deb\d+u\d+|\d+ubuntu)", re.I)


@dataclass(frozen=True)
class ServerPackaging:
    """How the packaged server starts: the binary, its unit, the arguments of
    the unit's own ``ExecStart`` after the binary, and what is assumed."""

    binary: str
    unit: str
    args: str
    note: str = ""


def _version(text: str | None) -> tuple[int, int] | None:
    m = re.match(r"\s*(\d+)\.(\d+)", text or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def distro_family(host: HostFacts) -> str | None:
    """``"rhel"``, ``"debian"`` or None, from what the snapshot shows: the
    server's version string (``10.11.6-MariaDB-0+deb12u1``), the kernel release
    (``3.10.0-1160.el7.x86_64``) or the OS release."""
    db, kernel = host.database, host.kernel
    texts = [db.version, db.variables.get("version")] if db else []
    texts += [kernel.release, kernel.os_release] if kernel else []
    for text in filter(None, texts):
        if _DEBIAN_HINT.search(text):
            return DEBIAN
        if _RHEL_HINT.search(text):
            return RHEL
    return None


def packaging(kind: str | None, version: str | None, family: str | None) -> ServerPackaging:
    """The row of the table for a server flavour (``mariadb``, ``mysql``,
    ``percona``), its version and the distribution family (None: RHEL, whose
    names the notes then say were assumed).

    >>> packaging("mariadb", "10.4.14-MariaDB-log", "rhel").binary
    '/usr/sbin/mysqld'
    >>> packaging("mariadb", "10.11.6-MariaDB-0+deb12u1", "debian").binary
    '/usr/sbin/mariadbd'
    >>> packaging("mysql", "5.7.44", "debian").unit
    'mysql.service'
    """
    assumed = "" if family else " " + _("(the distribution was not in the snapshot: RHEL names assumed)")
    if kind in ("mysql", "percona"):
        return _mysql_packaging(kind, version, family or RHEL, assumed)
    # MariaDB, or a server whose flavour the snapshot did not show: the
    # flavour that lacks innodb_numa_interleave (MDEV-18860); /usr/sbin/mysqld
    # exists in MariaDB, MySQL and Percona alike
    if kind != "mariadb":
        assumed += " " + _("(the server's flavour was not shown: MariaDB assumed)")
    return _mariadb_packaging(_version(version), family or RHEL, assumed)


def _mariadb_packaging(v: tuple[int, int] | None, family: str, assumed: str) -> ServerPackaging:
    """MariaDB's row: mariadbd from 10.5 on, mysqld before."""
    if v is not None and v >= (10, 5):
        return ServerPackaging(
            "/usr/sbin/mariadbd", "mariadb.service", _MARIADB_ARGS, "MariaDB >= 10.5" + assumed
        )
    note = _("MariaDB < 10.5 runs /usr/sbin/mysqld")
    if v is None:
        note = _("MariaDB version unknown: /usr/sbin/mysqld exists in every version")
    if family == RHEL:
        note = _(
            "%(note)s; a distribution-built mariadb-server (RHEL/CentOS) has it at /usr/libexec/mysqld"
        ) % {"note": note}
    return ServerPackaging("/usr/sbin/mysqld", "mariadb.service", _MARIADB_ARGS, note + assumed)


def _mysql_packaging(kind: str, version: str | None, family: str, assumed: str) -> ServerPackaging:
    """MySQL's or Percona Server's row: the RPM unit of MySQL 5.7 forks."""
    unit = "mysqld.service" if family == RHEL else "mysql.service"
    flavour = "Percona Server" if kind == "percona" else "MySQL"
    v = _version(version)
    if family == RHEL and kind != "percona" and v is not None and v < (8, 0):
        return ServerPackaging(
            "/usr/sbin/mysqld",
            unit,
            "--daemonize --pid-file=/var/run/mysqld/mysqld.pid $MYSQLD_OPTS",
            _("%(flavour)s 5.7 RPM unit (Type=forking)") % {"flavour": flavour} + assumed,
        )
    return ServerPackaging(
        "/usr/sbin/mysqld", unit, "$MYSQLD_OPTS", f"{flavour} {version or ''}".strip() + assumed
    )


_MARIADB_ARGS = "$MYSQLD_OPTS $_WSREP_NEW_CLUSTER $_WSREP_START_POSITION"


def host_packaging(host: HostFacts) -> ServerPackaging:
    """The table's row for the database ``host`` runs."""
    db = host.database
    return packaging(db.kind if db else None, db.version if db else None, distro_family(host))
