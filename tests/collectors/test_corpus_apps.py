"""Every libvirt and MySQL artifact of the shared corpus parses and yields the facts
recorded in ``corpus/expected.json`` (key conventions in ``corpus/README.md``)."""

from __future__ import annotations

import json

import pytest

from collectors.cpulist import format_cpulist
from collectors.facts import DatabaseFacts, Domain
from collectors.parsers.libvirt import parse_domain
from collectors.parsers.mysql import parse_mysql_error_log, parse_mysql_variables
from tests.collectors.parsers.lookup import detect
from tests.conftest import CORPUS

EXPECTED = json.loads((CORPUS / "expected.json").read_text()) if (CORPUS / "expected.json").exists() else {}
APP_KINDS = {
    "libvirt_domain",
    "virsh_version",
    "virsh_list",
    "virsh_capabilities",
    "mysql_variables",
    "mysql_version",
    "mysql_error_log",
    "oceanbase_parameters",
    "odp_proxyconfig",
    "sql_audit_plan_types",
    "tc_qdisc",
    "ping",
    "stream",
    "jtpcc",
    "sql_timing",
}


def corpus_files(folder: str) -> list[str]:
    root = CORPUS / folder
    return sorted(str(p.relative_to(CORPUS)) for p in root.rglob("*") if p.is_file()) if root.is_dir() else []


def domain_facts(d: Domain) -> dict:
    """Our Domain mapped onto the corpus's libvirt keys."""
    out = {
        "xml_root": d.xml_root,
        "vcpus": d.vcpus,
        "vcpu_current": d.vcpu_current,
        "vcpu_placement": d.vcpu_placement,
        "numa_cells": len(d.numa_cells),
        "vcpupin_count": len(d.vcpupin),
        "has_emulatorpin": d.emulatorpin is not None,
        "iothreads": d.iothreads,
        "iothreadpin_count": len(d.iothreadpin),
        "memnode_count": len(d.memnodes),
        "has_hugepages": d.hugepages,
        "has_maxMemory": d.max_memory_kb is not None,
    }
    if d.cpu_mode is not None:
        out["cpu_mode"] = d.cpu_mode
    if d.topology:
        out["topology"] = d.topology
    if d.numatune_memory_mode is not None:
        out["numatune_memory_mode"] = d.numatune_memory_mode
    if d.numatune_memory_nodeset is not None:
        out["numatune_memory_nodeset"] = format_cpulist(d.numatune_memory_nodeset)
    if d.numatune_memory_placement is not None:
        out["numatune_memory_placement"] = d.numatune_memory_placement
    return out


def variables_facts(f: DatabaseFacts, expected: dict) -> dict:
    out = {"version": f.version, "innodb_numa_interleave": f.variables.get("innodb_numa_interleave")}
    if "innodb_buffer_pool_size" in expected:
        out["innodb_buffer_pool_size"] = int(f.variables["innodb_buffer_pool_size"])
    return out


def log_facts(f: DatabaseFacts) -> dict:
    out = {
        "warning_lines": f.log_counts["Warning"],
        "note_lines": f.log_counts["Note"],
        "error_lines": f.log_counts["ERROR"],
    }
    if f.version is not None:
        out["version"] = f.version
    return out


@pytest.mark.parametrize("name", corpus_files("libvirt"))
def test_libvirt_corpus(name):
    entry = EXPECTED[name]
    assert entry["type"] == "libvirt_domain_xml"
    text = (CORPUS / name).read_text(encoding="utf-8")
    d = parse_domain(text)
    assert domain_facts(d) == entry["facts"]
    assert d.recovered is False, f"{name} is a complete document and must parse without recovery"
    assert detect(text).kind == "libvirt_domain"


@pytest.mark.parametrize("name", corpus_files("mysql"))
def test_mysql_corpus(name):
    entry = EXPECTED[name]
    text = (CORPUS / name).read_text(encoding="utf-8")
    if entry["type"] == "mysql_variables":
        f = parse_mysql_variables(text)
        assert variables_facts(f, entry["facts"]) == entry["facts"]
        assert f.kind in {"mysql", "mariadb", "percona"}
        assert detect(text).kind == "mysql_variables"
    else:
        assert entry["type"] == "mysql_log"
        f = parse_mysql_error_log(text)
        assert log_facts(f) == entry["facts"]
        assert detect(text).kind == "mysql_error_log"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("mysql/percona-toolkit_pt-mysql-summary_percona-server-5.5-variables.txt", "percona"),
        ("mysql/percona-toolkit_pt-mysql-summary_temp_enc008_mysql-variables.txt", "percona"),
        ("mysql/insights-core_test_mysqladmin_INPUT_NORMAL.txt", "mariadb"),
        ("mysql/percona-toolkit_pt-mysql-summary_mysql-variables-with-semisync.txt", "mysql"),
        ("mysql/insights-core_test_mysql_log_MYSQL_LOG.txt", "mysql"),
    ],
)
def test_database_kind(name, kind):
    text = (CORPUS / name).read_text(encoding="utf-8")
    parse = parse_mysql_error_log if "_log_" in name else parse_mysql_variables
    assert parse(text).kind == kind


def test_old_style_log_buffer_pool_event():
    text = (CORPUS / "mysql/insights-core_test_mariadb_log_MARIADB_LOG.txt").read_text()
    f = parse_mysql_error_log(text)
    init = next(e for e in f.events if e.kind == "buffer_pool_init")
    assert (init.data["size_text"], init.data["size_bytes"], init.line) == ("128.0M", 128 * 1024**2, 4)
    assert [e.kind for e in f.events if e.kind == "buffer_pool_ready"] == ["buffer_pool_ready"]


def other_corpus_files() -> list[str]:
    if not CORPUS.is_dir():
        return []
    return sorted(
        str(p.relative_to(CORPUS))
        for p in CORPUS.rglob("*")
        if p.is_file() and p.relative_to(CORPUS).parts[0] not in ("libvirt", "mysql")
    )


@pytest.mark.parametrize("name", other_corpus_files())
def test_host_artifacts_are_not_claimed_by_app_parsers(name):
    # Host artifacts (lscpu, sysctl, pt-summary 007 ...) and the corpus README must not
    # be detected as an application kind; pt-summary's netstat lists mysqld sockets,
    # which does not make it a MySQL artifact.
    text = (CORPUS / name).read_text(encoding="utf-8", errors="replace")
    spec = detect(text)
    assert spec is None or spec.kind not in APP_KINDS, f"{name} misdetected as {spec.kind}"
