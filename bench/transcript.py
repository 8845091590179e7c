"""The transcript section of ``bench/parse.py``: a large mixed paste.

:func:`build` writes, deterministically for a given machine (fixed seed; this
machine's own outputs are captured once), a transcript of many hosts made only
of real outputs:

* ``../shared/corpus`` (lscpu of 25 architectures, numactl, meminfo, numastat,
  node meminfo, sysctl, interrupts, softirqs, MySQL variables and error logs,
  libvirt domain XMLs, pt-summary files), each after a shell prompt with the
  command that prints it, or without a prompt (recognised by content);
* this machine's lscpu, ``numactl -H``, numastat, /proc/meminfo, the local
  MariaDB's SHOW GLOBAL VARIABLES and ``virsh -c test:///default dumpxml test``;
* the founding incidents' rebuilt transcripts (tests/fixtures/seeds) and the
  prose of their write-ups (../shared/seeds) between the outputs;

and mangles each host's part as pastes are mangled (``tests.collectors.mangling``:
e-mail quoting, indentation, CRLF, ANSI + logger timestamps, Jira / Markdown /
HTML wrapping, tabs to spaces, non-breaking spaces). Each host has its own
prompt hostname, so the loader splits it into one host per name.
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus"
SEED = 20261123

# corpus folder -> the command an engineer would type to print such a file
COMMANDS = {
    "lscpu": "lscpu",
    "numactl": "numactl -H",
    "meminfo": "cat /proc/meminfo",
    "numastat": "cat /sys/devices/system/node/node0/numastat",
    "node_meminfo": "cat /sys/devices/system/node/node0/meminfo",
    "sysctl": "sysctl -a",
    "interrupts": "cat /proc/interrupts",
    "softirqs": "cat /proc/softirqs",
    "libvirt": "virsh dumpxml guest",
}
LOCAL = {
    "lscpu": ["lscpu"],
    "numactl -H": ["numactl", "-H"],
    "numastat": ["numastat"],
    "cat /proc/meminfo": ["cat", "/proc/meminfo"],
    "mysql -e 'SHOW GLOBAL VARIABLES'": ["mariadb", "-h127.0.0.1", "-uroot", "-e", "SHOW GLOBAL VARIABLES"],
    "virsh dumpxml test": ["virsh", "-c", "test:///default", "dumpxml", "test"],
}
MANGLINGS = [
    (),
    ("quote",),
    ("indent_spaces",),
    ("crlf",),
    ("ansi_timestamps",),
    ("markdown",),
    ("jira",),
    ("html_pre",),
    ("tabs_to_spaces",),
    ("nbsp",),
    ("quote", "crlf"),
    ("indent_tab", "markdown"),
]


def _outputs() -> list[tuple[str | None, str]]:
    """(command or None, output) of every real output used."""
    out: list[tuple[str | None, str]] = []
    for folder, command in COMMANDS.items():
        for path in sorted((CORPUS / folder).glob("*")):
            if path.is_file():
                out.append((command, path.read_text(errors="replace").rstrip("\n")))
    for path in sorted((CORPUS / "mysql").glob("*")):
        name = path.name
        command = "mysql -e 'SHOW GLOBAL VARIABLES'" if "variables" in name else None
        out.append((command, path.read_text(errors="replace").rstrip("\n")))
    for command, argv in LOCAL.items():
        if shutil.which(argv[0]) is None:
            continue
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
        if proc.returncode == 0 and proc.stdout.strip():
            out.append((command, proc.stdout.rstrip("\n")))
    return out


def _seed_transcripts() -> list[str]:
    return [p.read_text().rstrip("\n") for p in sorted((ROOT / "tests/fixtures/seeds").glob("*/*/*.txt"))]


def _prose() -> list[str]:
    """Paragraphs of the founding write-ups without command output."""
    from collectors.transcript import line_class

    paragraphs = []
    for path in sorted(SHARED.joinpath("seeds").glob("*.txt")):
        for para in path.read_text().split("\n\n"):
            lines = [line for line in para.split("\n") if line.strip()]
            if lines and all(line_class(line) == "prose" for line in lines):
                paragraphs.append("\n".join(lines))
    return paragraphs


def build(size: int, seed: int = SEED) -> tuple[str, dict]:
    """A mixed transcript of about ``size`` characters and what it holds."""
    from tests.collectors import mangling

    rng = random.Random(seed)
    outputs = _outputs()
    seeds = _seed_transcripts()
    prose = _prose()
    parts: list[str] = []
    total = 0
    hosts = 0
    while total < size:
        hosts += 1
        name = f"db-{hosts:05d}"
        section: list[str] = []
        if rng.random() < 0.15:
            section.append(
                rng.choice(seeds).replace("[root@", f"[root@{name}-").replace("root@cmp", f"root@{name}-cmp")
            )
        for _ in range(rng.randint(2, 5)):
            if rng.random() < 0.5:
                section.append(rng.choice(prose))
            command, text = rng.choice(outputs)
            if command is None or rng.random() < 0.2:
                section.append(text)
            else:
                section.append(f"[root@{name} ~]# {command}\n{text}")
        section.append(f"[root@{name} ~]# exit")
        body = "\n\n".join(section)
        for key in rng.choice(MANGLINGS):
            body = mangling.MANGLERS[key](body)
        parts.append(body)
        total += len(body) + 2
    text = "\n\n".join(parts) + "\n"
    return text, {"hosts": hosts, "outputs": len(outputs), "chars": len(text), "lines": text.count("\n") + 1}
