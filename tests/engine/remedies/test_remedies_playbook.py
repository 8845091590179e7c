"""Remedies as Ansible playbooks, checked by Ansible itself.

Every founding seed's remedies (the rules that fire on its ``before``
snapshot, host-level and guest patches), every host of the evaluation set
(real outputs) that gets remedies, and the patch of every corpus domain XML
(as ``type='kvm'`` on the ZStack seed hypervisor) are rendered; the playbooks
must pass ``ansible-playbook --syntax-check`` and ``ansible-lint``, and the
sysctl.d and my.cnf plays run with ``--check`` against localhost (apply and
rollback), changing nothing. Values from uploads must reach Ansible as
literals: a ``{{ lookup('pipe', ...) }}`` in a domain name, a netem line or a
previous sysctl value never runs. Without ansible the tests skip locally and
FAIL under ``CI=true`` (``.ci/run`` installs ``ansible`` and ``ansible-lint``).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from collectors.archive import load_snapshot
from engine.remedies import remedies_for_host
from engine.remedies.database import mycnf_lines
from engine.remedies.host import remove_netem, sysctl_file
from engine.remedies.libvirt import domain_remedy
from engine.remedies.playbook import plays, render_playbook
from engine.rules import host_name
from engine.run import analyze
from tests.conftest import CORPUS, FIXTURES, ROOT, service_unavailable
from triage.evaluation import snapshot_dirs, snapshot_inputs

SEEDS = FIXTURES / "seeds"
ZSTACK_HOST = SEEDS / "zstack-mariadb-v2v" / "before" / "zstack-9.txt"
ANSIBLE_ENV = {
    # no ~/.ansible writes outside the test's directory, no cowsay, no colour
    "ANSIBLE_LOCAL_TEMP": "",
    "ANSIBLE_NOCOWS": "1",
    "ANSIBLE_FORCE_COLOR": "0",
    "ANSIBLE_RETRY_FILES_ENABLED": "0",
}


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        service_unavailable(f"{name} is not installed (Debian packages ansible, ansible-lint)")
    return path


def _run(argv: list[str], cwd: Path, timeout: int = 600) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, **ANSIBLE_ENV, "ANSIBLE_LOCAL_TEMP": str(cwd / ".ansible-tmp")}
    env["HOME"] = str(cwd)  # ansible-lint and ansible keep caches under ~
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def _host_playbooks(paths: list[Path], prefix: str) -> dict[str, str]:
    """One playbook per host of the snapshot made of ``paths`` that gets a
    remedy: the remedies of the rules that fire on it, as the report has them."""
    snapshot = load_snapshot(paths)
    findings = analyze(snapshot).findings
    out = {}
    for i, host in enumerate(snapshot.hosts):
        rules = {f.rule for f in findings if f.host == host_name(host)}
        results = remedies_for_host(host=host, rules=rules)
        if any(r.ok for r in results):
            slug = re.sub(r"[^A-Za-z0-9_.-]", "_", host_name(host) or f"host{i}")
            out[f"{prefix}-{slug}.yml"] = render_playbook(results, title=host_name(host) or "host")
    return out


@pytest.fixture(scope="module")
def playbooks(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("playbooks")
    texts: dict[str, str] = {}
    for seed in sorted(SEEDS.iterdir()):
        texts.update(_host_playbooks(sorted((seed / "before").iterdir()), f"seed-{seed.name}"))
    for directory in snapshot_dirs(ROOT / "tests" / "evaluation"):
        texts.update(_host_playbooks(snapshot_inputs(directory), f"eval-{directory.name}"))
    # every corpus domain the patcher accepts, as one playbook (one guest each)
    host = load_snapshot([ZSTACK_HOST]).hosts[0]
    patches = []
    for path in sorted((CORPUS / "libvirt").iterdir()):
        text = path.read_text(encoding="utf-8", errors="replace")
        text = re.sub(r"<domain type=(['\"])qemu\1", "<domain type='kvm'", text, count=1)
        result = domain_remedy(domain_xml=text, host=host)
        if result.ok:
            patches.append(result)
    texts["corpus-libvirt-domains.yml"] = render_playbook(patches, title="corpus domains")
    out = {}
    for name, text in texts.items():
        (root / name).write_text(text, encoding="utf-8")
        out[name] = root / name
    return out


def test_every_founding_seed_with_remedies_has_its_playbook(playbooks):
    # every seed's before-snapshot calls for a host-level or guest change
    for seed in sorted(SEEDS.iterdir()):
        assert any(n.startswith(f"seed-{seed.name}-") for n in playbooks), seed.name
    text = "\n".join(p.read_text() for p in playbooks.values())
    for module in (
        "ansible.builtin.copy",  # sysctl.d, my.cnf, systemd drop-in, patched domain XML
        "ansible.builtin.service",
        "ansible.builtin.systemd",
        "community.general.ini_file",  # nova.conf
        "virsh",
        "obclient",
        "tc",
    ):
        assert module in text, module
    corpus = yaml.load(playbooks["corpus-libvirt-domains.yml"].read_text(), Loader=_Loader)  # noqa: S506 (a SafeLoader subclass)
    defines = [t for t in corpus[0]["tasks"] if t["name"].startswith("Define ")]
    assert len(defines) >= 20  # the corpus domains the patcher accepts


@pytest.mark.slow
def test_playbooks_pass_syntax_check(playbooks):
    ansible_playbook = _tool("ansible-playbook")
    root = next(iter(playbooks.values())).parent
    # one run for all of them (ansible's start-up dominates); a failure names its file
    result = _run([ansible_playbook, "-i", "localhost,", "--syntax-check", *sorted(playbooks)], root)
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    assert len(playbooks) >= 8


@pytest.mark.slow
def test_playbooks_pass_ansible_lint(playbooks):
    lint = _tool("ansible-lint")
    root = next(iter(playbooks.values())).parent
    result = _run([lint, "-p", "--nocolor", "--offline", *sorted(playbooks)], root, timeout=900)
    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    assert "0 failure(s), 0 warning(s)" in result.stdout + result.stderr


def _check_run(path: Path, *extra: str) -> subprocess.CompletedProcess:
    ansible_playbook = _tool("ansible-playbook")
    return _run(
        [ansible_playbook, "-i", "localhost,", "-c", "local", "--check", "--diff", path.name, *extra],
        path.parent,
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    ["seed-kunpeng-stream-zone-reclaim-gp-sdw03.yml", "seed-percona-numa-interleave-startup-db-3301.yml"],
    ids=["sysctl.d", "my.cnf"],
)
def test_sysctl_and_mycnf_plays_run_in_check_mode(playbooks, name):
    path = playbooks[name]
    target = (
        "/etc/sysctl.d/90-numa.conf" if "sysctl" in path.read_text() else "/etc/my.cnf.d/casebook-numa.cnf"
    )
    existed = Path(target).exists()
    # this machine's MariaDB (mariadb-server, .ci/run) is the service the my.cnf play restarts
    for tags in ((), ("--tags", "rollback")):
        result = _check_run(path, "-e", "mysql_service=mariadb", *tags)
        assert result.returncode == 0, f"{tags}:\n{result.stdout}\n{result.stderr}"
        assert "failed=0" in result.stdout and "unreachable=0" in result.stdout
        # the rollback play runs only when asked for, and then alone
        assert (f"TASK [Remove {target}]" in result.stdout) == bool(tags)
        assert (f"TASK [Write {target}]" in result.stdout) != bool(tags)
        if not tags:  # the apply play would write the file
            assert "changed: [localhost]" in result.stdout
    assert Path(target).exists() == existed  # --check changed nothing


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_constructor("!unsafe", lambda loader, node: ("UNSAFE", loader.construct_scalar(node)))


def _strings(node):
    if isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)
    elif isinstance(node, str):
        yield node


@pytest.fixture
def hostile(tmp_path):
    """Remedies carrying Jinja that would create ``mark`` if Ansible evaluated it."""
    mark = tmp_path / "pwned"
    jinja = "{{lookup('pipe','touch${IFS}" + str(mark) + "')}}"
    host = load_snapshot([ZSTACK_HOST]).hosts[0]
    guest = host.domains[0]
    domain_xml = guest.raw_xml.replace(f"<name>{guest.name}</name>", f"<name>{jinja}</name>", 1)
    assert jinja in domain_xml
    results = [
        sysctl_file(settings={"vm.zone_reclaim_mode": 1}, previous={"vm.zone_reclaim_mode": jinja}),
        mycnf_lines(settings={"large_pages": True}, previous={"large_pages": jinja}),
        remove_netem(device="lo", qdisc_line=f"qdisc netem 8001: root refcnt 2 delay {jinja}"),
        domain_remedy(domain_xml=domain_xml, host=host),
    ]
    assert all(r.ok for r in results)
    return results, jinja, mark


def test_upload_values_are_tagged_unsafe(hostile):
    results, jinja, _ = hostile
    doc = yaml.load(render_playbook(results, title=jinja), Loader=_Loader)  # noqa: S506 (a SafeLoader subclass)
    text = yaml.safe_dump(doc)
    assert jinja in text
    # an upload value reaches the YAML untagged only inside a name, defused (no braces)
    assert not [s for s in _strings(doc) if "lookup" in s and "{" in s]
    assert [s for s in _strings(doc) if "lookup" in s]  # the names do carry it, as a label
    names = [t["name"] for p in doc for t in p["tasks"]] + [p["name"] for p in doc]
    assert all("{" not in n and "}" not in n for n in names)  # labels: braces become parentheses
    with pytest.raises(ValueError):
        render_playbook(results, title="x", source="snapshot\n- hosts: all")


@pytest.mark.slow
def test_upload_values_never_run_in_ansible(hostile, tmp_path):
    results, jinja, mark = hostile
    path = tmp_path / "hostile.yml"
    path.write_text(render_playbook(results, title=jinja), encoding="utf-8")
    # The apply run is verbose (one run fewer: -v changes only what is printed),
    # so its output shows the lookup reached the tasks as a literal.
    for tags in (("-v",), ("--tags", "rollback")):
        result = _check_run(path, "-e", "mysql_service=mariadb", *tags)
        # arguments are templated before check mode skips a command: a lookup would have run
        assert not mark.exists(), result.stdout
        if tags == ("-v",):
            assert "lookup('pipe'" in result.stdout


def test_rollback_is_a_separate_play_undoing_in_reverse_order():
    results = [
        sysctl_file(settings={"vm.zone_reclaim_mode": 1}, previous={"vm.zone_reclaim_mode": "0"}),
        mycnf_lines(settings={"large_pages": True}),
    ]
    apply, rollback = plays(results, title="db01")
    assert apply["tags"] == ["apply"] and rollback["tags"] == ["rollback", "never"]
    assert [t["name"] for t in apply["tasks"]] == [
        "Directory /etc/sysctl.d",
        "Write /etc/sysctl.d/90-numa.conf",
        "Directory /etc/my.cnf.d",
        "Write /etc/my.cnf.d/casebook-numa.cnf",
    ]
    assert [h["name"] for h in apply["handlers"]] == [
        "Load /etc/sysctl.d/90-numa.conf",
        "Restart the database server",
    ]
    assert [t["name"] for t in rollback["tasks"]] == [
        "Remove /etc/my.cnf.d/casebook-numa.cnf",
        "Restart the database server without the drop-in",
        "Remove /etc/sysctl.d/90-numa.conf",
        "Restore vm.zone_reclaim_mode",
    ]
    assert rollback["tasks"][-1]["ansible.builtin.command"]["argv"] == [
        "sysctl",
        "-w",
        "vm.zone_reclaim_mode=0",
    ]
    assert apply["vars"] == {"mysql_service": "mysqld"}
