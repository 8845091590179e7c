"""Remedies as an Ansible playbook: one play that applies them, one that rolls
them back.

A playbook is another rendering of the same :class:`Remedy` objects the
report page shows (their ``path``/``text``/``rollback`` and the plan values
in ``data``): nothing here decides *what* to change. The YAML is written by
PyYAML, never by string formatting, and every value that came from a
snapshot (file contents, device and domain names, the previous values, SQL)
is tagged ``!unsafe``, so Ansible never evaluates a ``{{ ... }}`` an upload
smuggled in. Commands run as ``argv`` lists (no shell), except the writes to
``/proc``/``/sys`` whose paths and masks are Casebook's own.

    ansible-playbook -i db01, casebook.yml             # apply
    ansible-playbook -i db01, casebook.yml --check     # dry run
    ansible-playbook -i db01, casebook.yml --tags rollback

The rollback play is tagged ``rollback`` and ``never``: it runs only when asked
for, and ``--tags rollback`` runs nothing else. ``docs/remedies.md`` lists
what each remedy becomes.

A playbook is written in English whatever the reader's language
(:func:`in_playbook_language`): it is a file for operators' repositories, CI
logs and ``ansible-lint``, and its header, task names and "not generated"
reasons must agree with one another and with ``docs/remedies.md``. The report
page shows the same remedies in the reader's language.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

import yaml
from django.utils import translation

from engine.remedies.base import NoRemedy, Remedy, RemedyResult

MEDIA_TYPE = "application/yaml"
BACKUP_DIR = "/var/backups/casebook"
# Connection settings the operator may pass with -e (defaults suit a run on
# the database host itself); a play declares only those its tasks use.
OB_VARS = {"ob_host": "127.0.0.1", "ob_user": "root@sys", "ob_password": ""}
# Cluster-wide changes (SQL, OpenStack API) run on the first host of the play
# only (run_once, without ansible-lint's warning about the free strategy).
ONCE = "inventory_hostname == ansible_play_hosts_all[0]"
P = ParamSpec("P")
R = TypeVar("R")
# The language of every playbook and inventory (see the module docstring).
LANGUAGE = "en"


def in_playbook_language(view: Callable[P, R]) -> Callable[P, R]:
    """``view`` (which builds the remedies and renders a playbook) run in
    :data:`LANGUAGE`, so the remedies' titles and reasons, translated when they
    are built, are English like the rest of the file."""

    @functools.wraps(view)
    def in_english(*args: P.args, **kwargs: P.kwargs) -> R:
        with translation.override(LANGUAGE):
            return view(*args, **kwargs)

    return in_english


# a word Casebook writes into a playbook's comments (its own words and ids, never snapshot text)
PLAIN_WORDS = re.compile(r"[\w .#-]{1,80}")


class Unsafe(str):
    """A string Ansible must take literally (YAML tag ``!unsafe``)."""


class _Dumper(yaml.SafeDumper):
    """Block style for multi-line text; no line folding (a folded shell or SQL
    line would change meaning); ``!unsafe`` for snapshot values."""

    def ignore_aliases(self, data):
        return True

    def increase_indent(self, flow=False, indentless=False):
        # lists indented under their key, as yamllint (ansible-lint) wants
        return super().increase_indent(flow, False)


def _represent_unsafe(dumper: yaml.SafeDumper, value: Unsafe):
    return dumper.represent_scalar("!unsafe", str(value), style="|" if "\n" in value else None)


def _represent_str(dumper: yaml.SafeDumper, value: str):
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


_Dumper.add_representer(Unsafe, _represent_unsafe)
_Dumper.add_representer(str, _represent_str)


def u(value: Any) -> Unsafe:
    return Unsafe(str(value))


def label(text: str) -> str:
    """A task or play name. Names are templated too, but ``!unsafe`` on them
    confuses ansible-lint; they are labels only, so braces (the Jinja
    delimiters) become parentheses and the name is one line."""
    text = " ".join(str(text).translate({ord("{"): "(", ord("}"): ")"}).split())[:200]
    return text[:1].upper() + text[1:]  # ansible-lint: names start with a capital


@dataclass
class Steps:
    """What one remedy adds to the playbook."""

    apply: list[dict] = field(default_factory=list)
    rollback: list[dict] = field(default_factory=list)
    handlers: list[dict] = field(default_factory=list)
    vars: dict[str, str] = field(default_factory=dict)


def _command(name: str, argv: list, **extra) -> dict:
    # always reports a change: these commands are not idempotent checks
    return {"name": label(name), "ansible.builtin.command": {"argv": argv}, "changed_when": True, **extra}


def _write_file(r: Remedy, *, handler: str | None = None) -> list[dict]:
    assert r.path is not None, f"{r.key}: a file remedy without a path"
    directory = r.path.rsplit("/", 1)[0]
    tasks: list[dict] = [
        {
            "name": label(f"Directory {directory}"),
            "ansible.builtin.file": {"path": u(directory), "state": "directory", "mode": "0755"},
        },
        {
            "name": label(f"Write {r.path}"),
            "ansible.builtin.copy": {
                "dest": u(r.path),
                "content": u(r.text if r.text.endswith("\n") else r.text + "\n"),
                "owner": "root",
                "group": "root",
                "mode": "0644",
            },
        },
    ]
    if handler:
        tasks[1]["notify"] = label(handler)
    return tasks


def _remove_file(r: Remedy) -> dict:
    return {"name": label(f"Remove {r.path}"), "ansible.builtin.file": {"path": u(r.path), "state": "absent"}}


def _restart(name: str, service: str, *, daemon_reload: bool = False) -> dict:
    # service picks the host's service manager (systemd, or the init scripts
    # of a container); a unit drop-in needs systemd's daemon-reload
    if daemon_reload:
        args = {"name": service, "state": "restarted", "daemon_reload": True}
        return {"name": label(name), "ansible.builtin.systemd": args}
    return {"name": label(name), "ansible.builtin.service": {"name": service, "state": "restarted"}}


def _sysctl(r: Remedy) -> Steps:
    load = f"Load {r.path}"
    return Steps(
        apply=_write_file(r, handler=load),
        handlers=[_command(load, ["sysctl", "-p", u(r.path)])],
        rollback=[
            _remove_file(r),
            *(
                _command(f"Restore {key}", ["sysctl", "-w", u(f"{key}={value}")])
                for key, value in r.data.get("previous", {}).items()
            ),
        ],
    )


def _mycnf(r: Remedy) -> Steps:
    restart = "Restart the database server"
    return Steps(
        vars={"mysql_service": u(r.data["service"])},
        apply=_write_file(r, handler=restart),
        handlers=[_restart(restart, "{{ mysql_service }}")],
        rollback=[
            _remove_file(r),
            _restart("Restart the database server without the drop-in", "{{ mysql_service }}"),
        ],
    )


def _binary_check(binary: str) -> list[dict]:
    """Stop before the drop-in when the server binary it starts is missing: a
    unit whose ExecStart names no file leaves the database down."""
    return [
        {
            "name": label(f"Look for {binary}"),
            "ansible.builtin.stat": {"path": u(binary)},
            "register": "casebook_server_binary",
        },
        {
            "name": label(f"Stop unless {binary} exists"),
            "ansible.builtin.assert": {
                "that": ["casebook_server_binary.stat.exists"],
                "fail_msg": u(f"{binary} is not on this host: the drop-in would leave the database down"),
            },
        },
    ]


def _systemd_dropin(r: Remedy) -> Steps:
    unit = u(r.data["unit"])
    restart = f"Restart {unit}"
    binary = r.data.get("binary")
    return Steps(
        apply=[*(_binary_check(binary) if binary else []), *_write_file(r, handler=restart)],
        handlers=[_restart(restart, unit, daemon_reload=True)],
        rollback=[_remove_file(r), _restart(f"Restart {unit} without the drop-in", unit, daemon_reload=True)],
    )


def _sql(name: str, port: int, sql: str) -> dict:
    argv = ["obclient", "-h", "{{ ob_host }}", "-P", str(port), "-u", "{{ ob_user }}", "-e", u(sql)]
    # the password goes through the environment, not the process list
    return _command(name, argv, when=ONCE, environment={"MYSQL_PWD": "{{ ob_password }}"})


def _oceanbase(r: Remedy) -> Steps:
    port = r.data["port"]
    return Steps(
        vars=dict(OB_VARS),
        apply=[_sql(r.title, port, r.data["sql"])],
        rollback=[_sql(f"Previous values: {r.title}", port, r.data["rollback_sql"])],
    )


def _netem(r: Remedy) -> Steps:
    device = u(r.data["device"])
    params = [u(p) for p in r.data.get("netem", [])]
    rollback = (
        _command(
            f"Add the netem qdisc on {device} again",
            ["tc", "qdisc", "add", "dev", device, "root", "netem", *params],
        )
        if params
        else {
            "name": label(f"Netem parameters of {device} unknown"),
            "ansible.builtin.fail": {
                "msg": "The snapshot did not show the netem parameters: re-enter them by hand."
            },
        }
    )
    return Steps(
        apply=[_command(r.title, ["tc", "qdisc", "del", "dev", device, "root"])], rollback=[rollback]
    )


def _proc_writes(writes: dict[str, str], verb: str) -> list[dict]:
    # /proc and /sys files take a write, not copy's rename; paths and masks
    # are Casebook's own (validated device name, integers, hex masks).
    return [
        {
            "name": label(f"{verb} {path}"),
            "ansible.builtin.shell": {"cmd": u(f"echo {mask} > {path}")},
            "changed_when": True,
        }
        for path, mask in writes.items()
    ]


def _irq(r: Remedy) -> Steps:
    service = u(r.data["service"])
    writes = r.data["writes"]
    restore = {
        path: "$(cat /proc/irq/default_smp_affinity)" if path.startswith("/proc/") else "0" for path in writes
    }
    return Steps(
        apply=[
            {
                "name": label(f"Stop {service}"),
                "ansible.builtin.service": {"name": service, "state": "stopped"},
            },
            *_proc_writes(writes, "Set"),
        ],
        rollback=[
            *_proc_writes(restore, "Reset"),
            {
                "name": label(f"Start {service}"),
                "ansible.builtin.service": {"name": service, "state": "started"},
            },
        ],
    )


def _nova(r: Remedy) -> Steps:
    d = r.data
    restart = f"Restart {d['service']}"

    def ini(value: str) -> dict:
        return {
            "path": u(r.path),
            "section": u(d["section"]),
            "option": u(d["option"]),
            "value": u(value),
            "mode": "0640",
        }

    return Steps(
        apply=[
            {"name": label(r.title), "community.general.ini_file": ini(d["value"]), "notify": label(restart)}
        ],
        handlers=[_restart(restart, u(d["service"]))],
        rollback=[
            {"name": label(f"Previous {d['option']}"), "community.general.ini_file": ini(d["previous"])},
            _restart(f"Restart {d['service']} with the previous mode", u(d["service"])),
        ],
    )


def _flavor(r: Remedy) -> Steps:
    d = r.data
    # "<flavor>" is the generator's placeholder when the snapshot does not name it
    flavor = "{{ flavor_name }}" if d["flavor"].startswith("<") else u(d["flavor"])
    props = d["properties"]
    set_argv = ["openstack", "flavor", "set", flavor]
    unset_argv = ["openstack", "flavor", "unset", flavor]
    for key, value in props.items():
        set_argv += ["--property", u(f"{key}={value}")]
        unset_argv += ["--property", u(key)]
    check = {
        "name": "A flavor name is given (-e flavor_name=...)",
        "ansible.builtin.assert": {"that": ["flavor_name | length > 0"]},
        "when": ONCE,
    }
    need = [check] if flavor == "{{ flavor_name }}" else []
    return Steps(
        vars={"flavor_name": ""} if need else {},
        apply=[*need, _command(r.title, set_argv, when=ONCE)],
        rollback=[*need, _command(f"Unset: {r.title}", unset_argv, when=ONCE)],
    )


def _domain(r: Remedy) -> Steps:
    name = r.data["domain"]
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", name).lstrip(".") or "domain"
    original = f"{BACKUP_DIR}/{stem}.original.xml"
    patched = f"{BACKUP_DIR}/{stem}.patched.xml"
    dom = u(name)
    return Steps(
        apply=[
            {
                "name": label(f"Directory {BACKUP_DIR}"),
                "ansible.builtin.file": {"path": BACKUP_DIR, "state": "directory", "mode": "0700"},
            },
            {
                "name": label(f"Back up the definition of {name}"),
                "ansible.builtin.shell": {
                    # argv-quoted name; the file is kept if a backup exists already
                    "cmd": u(f'virsh dumpxml --inactive --security-info "$DOMAIN" > {original}'),
                    "creates": u(original),
                },
                "environment": {"DOMAIN": dom},
            },
            {
                "name": label(f"Write the patched definition of {name}"),
                "ansible.builtin.copy": {"dest": u(patched), "content": u(r.patched), "mode": "0600"},
            },
            _command(f"Define {name} from the patched XML", ["virsh", "define", u(patched)]),
            {
                "name": label(f"{name} takes the new definition at its next cold start"),
                "ansible.builtin.debug": {
                    "msg": u(f"Shut {name} down and start it again: virsh shutdown, virsh start")
                },
            },
        ],
        rollback=[
            _command(f"Define {name} from the backup", ["virsh", "define", u(original)]),
            {
                "name": label(f"{name} takes the old definition at its next cold start"),
                "ansible.builtin.debug": {
                    "msg": u(f"Shut {name} down and start it again: virsh shutdown, virsh start")
                },
            },
        ],
    )


RENDERERS: dict[str, Callable[[Remedy], Steps]] = {
    "sysctl": _sysctl,
    "mycnf": _mycnf,
    "systemd": _systemd_dropin,
    "oceanbase": _oceanbase,
    "odp": _oceanbase,
    "tc": _netem,
    "irq": _irq,
    "nova": _nova,
    "flavor": _flavor,
    "libvirt": _domain,
}


def renderer(result: RemedyResult) -> Callable[[Remedy], Steps] | None:
    if not isinstance(result, Remedy):
        return None
    return RENDERERS.get(result.key.split(":", 1)[0])


def plays(results: Iterable[RemedyResult], *, title: str, hosts: str = "all") -> list[dict]:
    """The apply play and the rollback play for ``results`` (NoRemedy and
    remedies without a rendering are listed in a first ``debug`` task), for
    the inventory pattern ``hosts``."""
    steps, skipped = _rendered(results)
    common: dict[str, Any] = {"hosts": hosts, "become": True, "gather_facts": False}
    variables = {k: v for s in steps for k, v in s.vars.items()}
    if variables:
        common["vars"] = variables
    apply = _apply_play(steps, skipped, title=title, common=common)
    rollback = _rollback_play(steps, title=title, common=common)
    return [apply, rollback] if rollback else [apply]


def _rendered(results: Iterable[RemedyResult]) -> tuple[list[Steps], list[str]]:
    """The steps of each remedy with a rendering, and "key: why not" for the others."""
    steps: list[Steps] = []
    skipped: list[str] = []
    for result in results:
        render = renderer(result)
        if render is None or not isinstance(result, Remedy):
            reason = result.reason if isinstance(result, NoRemedy) else "no playbook rendering"
            skipped.append(f"{result.key}: {reason}")
            continue
        steps.append(render(result))
    return steps, skipped


def _rollback_play(steps: list[Steps], *, title: str, common: dict[str, Any]) -> dict | None:
    """The rollback play: each remedy's rollback tasks, the last applied undone
    first (only run when asked for: tag ``never``); None without any."""
    rollback_tasks = [t for s in reversed(steps) for t in s.rollback]
    if not rollback_tasks:
        return None
    return {
        "name": label(f"Casebook rollback: {title}"),
        **common,
        "tags": ["rollback", "never"],
        "tasks": rollback_tasks,
    }


def _not_generated_tasks(skipped: list[str]) -> list[dict[str, Any]]:
    """The ``debug`` task listing what was not generated (``skipped``); none when all was."""
    if not skipped:
        return []
    return [{"name": "Not generated", "ansible.builtin.debug": {"msg": [u(line) for line in skipped]}}]


def _apply_play(steps: list[Steps], skipped: list[str], *, title: str, common: dict[str, Any]) -> dict:
    """The apply play: what was not generated first (a ``debug`` task), then each remedy's tasks."""
    apply_tasks = [*_not_generated_tasks(skipped), *(t for s in steps for t in s.apply)]
    apply = {
        "name": label(f"Casebook remediation: {title}"),
        **common,
        "tags": ["apply"],
        "tasks": apply_tasks,
    }
    handlers = [h for s in steps for h in s.handlers]
    if handlers:
        apply["handlers"] = handlers
    return apply


HEADER = """\
# Generated by Casebook from {source}. Review before use: Casebook never runs it.
# Apply:     ansible-playbook -i HOST, {filename}
# Dry run:   ansible-playbook -i HOST, {filename} --check --diff
# Roll back: ansible-playbook -i HOST, {filename} --tags rollback
"""


def _dump(document: list[dict]) -> str:
    return yaml.dump(
        document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=1 << 20, explicit_start=True
    )


def render_playbook(
    results: Iterable[RemedyResult], *, title: str, source: str = "a snapshot", filename: str = "casebook.yml"
) -> str:
    """The playbook as YAML text. ``source`` and ``filename`` go into comments:
    callers pass Casebook's own words and ids, never snapshot text."""
    if not PLAIN_WORDS.fullmatch(source) or not re.fullmatch(r"[\w.-]{1,80}", filename):
        raise ValueError("source and filename must be plain words")
    document = plays(results, title=title)
    header = HEADER.format(source=source, filename=filename) + _variables_comment(document[:1])
    return header + _dump(document)


FLEET_HEADER = """\
# Generated by Casebook from {source}: one group per host, each with its own changes.
# Review before use: Casebook never runs it. The inventory names the hosts.
# Apply:     ansible-playbook -i {inventory} {filename}
# Dry run:   ansible-playbook -i {inventory} {filename} --check --diff
# Roll back: ansible-playbook -i {inventory} {filename} --tags rollback
"""
# A host name that may stand in an inventory: anything else (spaces, '=', quotes
# from an upload) could set connection variables there, so such a host is left out.
INVENTORY_HOST = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,252}")


def fleet_group(index: int) -> str:
    """The inventory group of the ``index``-th host of a fleet playbook."""
    return f"casebook_host_{index + 1}"


def render_fleet_playbook(
    per_host: list[tuple[str, list[RemedyResult]]],
    *,
    title: str,
    source: str,
    filename: str,
    inventory: str,
) -> str:
    """One playbook for several hosts: for each ``(host name, remedies)`` an
    apply play (and a rollback play) on its own inventory group
    (:func:`fleet_group`), since the same rule needs other values on each host
    (its nodes, CPUs, memory). Hosts whose name cannot stand in an inventory
    and hosts with nothing to apply are left out (:func:`fleet_inventory` says so)."""
    for word in (source, filename, inventory):
        if not PLAIN_WORDS.fullmatch(word):
            raise ValueError("source and file names must be plain words")
    apply, rollback = _fleet_plays(per_host, title=title)
    if not apply:
        raise ValueError("nothing to apply on any of the hosts")
    header = FLEET_HEADER.format(source=source, filename=filename, inventory=inventory)
    return header + _variables_comment(apply) + _dump(apply + rollback)


def _fleet_plays(
    per_host: list[tuple[str, list[RemedyResult]]], *, title: str
) -> tuple[list[dict], list[dict]]:
    """The apply plays and the rollback plays of the hosts that can be named
    in an inventory and have something to apply."""
    apply: list[dict] = []
    rollback: list[dict] = []
    for index, (host, results) in enumerate(per_host):
        if _left_out(index, host, results) is not None:
            continue
        for play in plays(results, title=f"{title} on {host}", hosts=fleet_group(index)):
            (rollback if "rollback" in play["tags"] else apply).append(play)
    return apply, rollback


def _variables_comment(apply: list[dict]) -> str:
    """The header line naming the variables the apply plays ask for (none: no line)."""
    names = sorted({k for play in apply for k in play.get("vars", {})})
    return f"# Variables (-e name=value): {', '.join(names)}\n" if names else ""


def fleet_inventory(per_host: list[tuple[str, list[RemedyResult]]], *, source: str) -> str:
    """The INI inventory of :func:`render_fleet_playbook`: each host in its group."""
    if not PLAIN_WORDS.fullmatch(source):
        raise ValueError("source must be plain words")
    lines = [f"# Casebook inventory for {source}: check each name resolves to the host it means."]
    for index, (host, results) in enumerate(per_host):
        why = _left_out(index, host, results)
        lines += [why] if why is not None else ["", f"[{fleet_group(index)}]", host]
    return "\n".join(lines) + "\n"


def _left_out(index: int, host: str, results: list[RemedyResult]) -> str | None:
    """Why the ``index``-th host of a fleet is left out of its playbook (the
    inventory's comment line), or None: its name can stand in an inventory
    and Casebook can apply something there."""
    if not INVENTORY_HOST.fullmatch(host):
        return f"# host {index + 1} left out: its name is not a plain host name"
    if not any(r.ok for r in results):
        return f"# {host} left out: nothing Casebook can apply there"
    return None
