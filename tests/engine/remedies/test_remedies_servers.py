"""Remedies fit the machine they change (issue 25, point 6): the server binary
and unit per MySQL-family version and distribution, the guest a database runs
in, and the cloud manager that rewrites a guest's XML."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from collectors.archive import load, load_snapshot
from collectors.facts import DatabaseFacts, HostFacts, KernelVersion, SnapshotFacts
from engine.remedies import domain_remedy, remedies_for_host
from engine.remedies.playbook import render_playbook
from engine.remedies.servers import distro_family, packaging
from engine.run import analyze
from tests.collectors.test_machines import host_and_guest_paste
from tests.conftest import CORPUS, FIXTURES
from tests.engine.remedies.test_remedies_playbook import _check_run

# (flavour, version string as the server reports it, distribution) -> binary, unit
TABLE = [
    ("mariadb", "10.3.39-MariaDB-0+deb10u2", "debian", "/usr/sbin/mysqld", "mariadb.service"),
    ("mariadb", "10.3.28-MariaDB", "rhel", "/usr/sbin/mysqld", "mariadb.service"),
    ("mariadb", "10.4.14-MariaDB-log", "rhel", "/usr/sbin/mysqld", "mariadb.service"),
    ("mariadb", "10.5.23-MariaDB", "rhel", "/usr/sbin/mariadbd", "mariadb.service"),
    ("mariadb", "10.11.6-MariaDB-0+deb12u1", "debian", "/usr/sbin/mariadbd", "mariadb.service"),
    ("mysql", "5.7.44-log", "rhel", "/usr/sbin/mysqld", "mysqld.service"),
    ("mysql", "5.7.42-0ubuntu0.18.04.1", "debian", "/usr/sbin/mysqld", "mysql.service"),
    ("mysql", "8.0.36", "rhel", "/usr/sbin/mysqld", "mysqld.service"),
    ("mysql", "8.0.36-0ubuntu0.22.04.1", "debian", "/usr/sbin/mysqld", "mysql.service"),
    ("percona", "8.0.35-27", "rhel", "/usr/sbin/mysqld", "mysqld.service"),
    ("percona", "8.0.35-27-1.jammy", "debian", "/usr/sbin/mysqld", "mysql.service"),
]


@pytest.mark.parametrize(("kind", "version", "family", "binary", "unit"), TABLE)
def test_table(kind: str, version: str, family: str, binary: str, unit: str) -> None:
    row = packaging(kind, version, family)
    assert (row.binary, row.unit) == (binary, unit)


def test_mysql57_rpm_unit_forks() -> None:
    assert "--daemonize" in packaging("mysql", "5.7.44", "rhel").args
    assert "--daemonize" not in packaging("mysql", "8.0.36", "rhel").args


def test_unknown_distribution_says_so() -> None:
    assert "RHEL names assumed" in packaging("mysql", "8.0.36", None).note


def _host(kind: str, version: str, release: str | None = None) -> HostFacts:
    host = HostFacts(label="db", hostname="db", role="physical")
    host.database = DatabaseFacts(kind=kind, version=version, variables={"version": version})
    if release:
        host.kernel = KernelVersion(release=release)
    return host


def test_distribution_from_the_kernel_release() -> None:
    assert distro_family(_host("mysql", "8.0.36", "3.10.0-1160.el7.x86_64")) == "rhel"
    assert distro_family(_host("mariadb", "10.11.6-MariaDB-0+deb12u1")) == "debian"
    assert distro_family(_host("mysql", "8.0.36")) is None


def _dropin(host: HostFacts) -> str:
    (r,) = [x for x in remedies_for_host(host=host, rules={"mysql.numa_interleave_unavailable"}) if x.ok]
    return r.text


def test_seed_mariadb_104_dropin_runs_mysqld() -> None:
    # the ZStack seed's guest: MariaDB 10.4.14, where the old drop-in started
    # /usr/sbin/mariadbd and restarted mariadb.service
    path = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before" / "infoplus-db.txt"
    (guest,) = load_snapshot([path]).hosts
    text = _dropin(guest)
    assert "ExecStart=/usr/bin/numactl --interleave=all /usr/sbin/mysqld " in text
    (r,) = [x for x in remedies_for_host(host=guest, rules={"mysql.numa_interleave_unavailable"}) if x.ok]
    assert any("inside the guest infoplus-db" in n for n in r.notes)


def test_guest_database_remedy_is_aimed_at_the_guest() -> None:
    hosts = load(host_and_guest_paste(), name="ticket.txt").hosts
    findings = analyze(SnapshotFacts(hosts=hosts)).findings
    for host in hosts:
        rules = {f.rule for f in findings if f.host == host.label}
        mycnf = [r for r in remedies_for_host(host=host, rules=rules) if r.ok and r.key == "mycnf"]
        assert bool(mycnf) == (host.label == "vm")
    (r,) = [
        x
        for x in remedies_for_host(host=hosts[1], rules={"mysql.large_pages_off"})
        if x.ok and x.key == "mycnf"
    ]
    assert r.data["service"] == "mariadb"  # MariaDB 10.11 on Debian 12 (deb12u1)


def test_cloud_managers_are_named() -> None:
    zstack = FIXTURES / "seeds" / "zstack-mariadb-v2v" / "before" / "zstack-9.txt"
    (host,) = load_snapshot([zstack]).hosts
    (domain,) = host.domains
    assert domain.manager == "zstack"
    patch = domain_remedy(domain_xml=domain.raw_xml, host=host)
    assert patch.ok and any("ZStack generates this domain XML" in n for n in patch.notes)
    rhosp = (CORPUS / "libvirt" / "insights-core_test_qemu_xml_XML_RHOSP.txt").read_text()
    rhosp = re.sub(r"<domain type=(['\"])qemu\1", "<domain type='kvm'", rhosp, count=1)
    nova = domain_remedy(domain_xml=rhosp, host=host)
    if nova.ok:
        assert any("flavor extra specs" in n for n in nova.notes)


def _local_mariadb_host() -> HostFacts:
    """This machine's MariaDB 10.11, read live (mariadb-server, as .ci/run starts it)."""
    try:
        out = subprocess.run(
            ["mariadb", "-h127.0.0.1", "-P3306", "-uroot", "-e", "SHOW GLOBAL VARIABLES"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        pytest.skip("the local MariaDB is not running (start it as .ci/run does)")
    paste = "# mariadb -e 'SHOW GLOBAL VARIABLES'\n" + out
    (host,) = load(paste.encode(), name="local.txt").hosts
    return host


# one row per version the issue names (the table test covers both families)
CHECKED = [("local", ""), *[(k, v) for k, v, family, *_ in TABLE if family == "rhel"]]


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "version"), CHECKED)
def test_playbooks_run_in_check_mode_against_local_mariadb(kind: str, version: str, tmp_path: Path) -> None:
    """The playbooks of this machine's live MariaDB 10.11, and of the same
    server read as each version of the table, in ``--check`` against it."""
    host = _local_mariadb_host()
    assert host.database is not None and host.database.version
    if kind != "local":
        host.database.kind, host.database.version = kind, version
    rules = {"mysql.numa_interleave_unavailable", "mysql.large_pages_off", "mysql.buffer_pool_not_persisted"}
    results = [r for r in remedies_for_host(host=host, rules=rules) if r.ok]
    dropin = next(r for r in results if r.key.startswith("systemd:"))
    mycnf = next(r for r in results if r.key == "mycnf")
    family = distro_family(host)  # Debian: this machine's version string says deb12u1
    expected = packaging(kind if kind != "local" else "mariadb", version or host.database.version, family)
    if kind == "local":  # 10.11.x-MariaDB-0+deb12u1: MariaDB >= 10.5 on Debian
        assert expected.binary == "/usr/sbin/mariadbd"
    assert f"--interleave=all {expected.binary} " in dropin.text
    assert dropin.data["unit"] == expected.unit and mycnf.data["service"] == expected.unit.removesuffix(
        ".service"
    )

    # my.cnf: written and the server restarted through this machine's init
    # script (``-e mysql_service=mariadb``: the unit the table names for the
    # other versions does not exist here), apply and rollback
    play = tmp_path / "mycnf.yml"
    play.write_text(render_playbook([mycnf], title="db"), encoding="utf-8")
    assert f"mysql_service: !unsafe '{mycnf.data['service']}'" in play.read_text()
    for tags in ((), ("--tags", "rollback")) if kind == "local" else ((),):
        result = _check_run(play, "-e", "mysql_service=mariadb", *tags)
        assert result.returncode == 0 and "failed=0" in result.stdout, result.stdout + result.stderr

    # the drop-in: the binary is looked for first; a binary this host lacks
    # stops the play before anything is written
    play = tmp_path / "dropin.yml"
    play.write_text(render_playbook([dropin], title="db"), encoding="utf-8")
    out = _check_run(play).stdout
    assert f"TASK [Look for {expected.binary}]" in out
    if not Path(expected.binary).exists():
        assert "would leave the database down" in out and "TASK [Write" not in out, out
        return
    assert "All assertions passed" in out and "changed: [localhost]" in out
    # this machine (and CI's container) runs no systemd: the one task that
    # cannot run is the daemon-reload + restart handler of the unit
    failed = [line for line in out.splitlines() if line.startswith("fatal:")]
    assert len(failed) <= 1 and "RUNNING HANDLER [Restart " in out, out
