"""Rule time against the number of libvirt domains in one upload (issue 29:
a 686 KB sosreport-shaped upload with 5,000 domain XMLs ran to the 120 s
limit; the rules' cost grew faster than the domain count).

Usage::

    .venv/bin/python bench/domains.py [--domains 1000 2000 4000 5000] [--write docs/performance.md]

For each count it builds a sosreport-shaped tar.gz in memory: the hypervisor's
``numactl --hardware`` (percona-toolkit's pt-summary sample 007 from
``../shared/corpus``) and ``lscpu`` under ``sos_commands``, and that many
domain XMLs under ``etc/libvirt/qemu/`` (generated: 2-32 vCPUs, every second
one pinned, host-model CPU, one virtio disk and NIC, as ZStack/OpenStack
hosts hold them), then loads it with the real archive reader
(``collectors.archive.load_snapshot``) and runs the rules
(``engine.run.analyze``), timing each part. Rule time must grow linearly: the
ratio column divides seconds per domain by the smallest count's.
"""

from __future__ import annotations

import argparse
import io
import os
import random
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CORPUS = ROOT.parent / "shared" / "corpus"


def domain_xml(i: int, rng: random.Random) -> str:
    vcpus = rng.choice([2, 4, 8, 16, 32])
    pins = (
        "".join(f"<vcpupin vcpu='{v}' cpuset='{(i * 3 + v) % 16}'/>" for v in range(vcpus)) if i % 2 else ""
    )
    return (
        f"<domain type='kvm'><name>vm-{i:05d}</name><uuid>00000000-0000-0000-0000-{i:012d}</uuid>"
        f"<memory unit='KiB'>{rng.choice([2, 4, 8, 16]) * 1048576}</memory>"
        f"<vcpu placement='static' current='{vcpus}'>{vcpus}</vcpu><cputune>{pins}</cputune>"
        f"<cpu mode='host-model'><topology sockets='{vcpus}' cores='1' threads='1'/></cpu>"
        "<os><type arch='x86_64' machine='pc'>hvm</type></os><devices>"
        "<emulator>/usr/libexec/qemu-kvm</emulator><disk type='file' device='disk'>"
        f"<driver name='qemu' type='qcow2'/><source file='/var/lib/libvirt/images/vm-{i}.qcow2'/>"
        "<target dev='vda' bus='virtio'/></disk><interface type='bridge'><source bridge='br0'/>"
        "<model type='virtio'/></interface></devices></domain>\n"
    )


def sosreport(domains: int, seed: int = 29) -> bytes:
    rng = random.Random(seed)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:

        def add(name: str, text: str) -> None:
            data = text.encode()
            info = tarfile.TarInfo(f"sosreport-kvm-host/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))

        add(
            "sos_commands/numa/numactl_--hardware",
            (CORPUS / "numactl" / "percona-toolkit_pt-summary_007_numactl.txt").read_text(),
        )
        add(
            "sos_commands/processor/lscpu",
            (CORPUS / "lscpu" / "insights-core_test_lscpu_LSCPU_3.txt").read_text(),
        )
        for i in range(domains):
            add(f"etc/libvirt/qemu/vm-{i:05d}.xml", domain_xml(i, rng))
    return buf.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--domains", type=int, nargs="+", default=[1000, 2000, 4000, 5000])
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("CASEBOOK_DATA_DIR", tempfile.mkdtemp(prefix="casebook-bench-domains-"))
    import django

    django.setup()
    from collectors.archive import load_snapshot
    from engine.run import analyze

    rows = []
    for n in args.domains:
        data = sosreport(n)
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"sosreport-{n}.tar.gz"
            path.write_bytes(data)
            t = time.perf_counter()
            snapshot = load_snapshot([path])
            parse_s = time.perf_counter() - t
            t = time.perf_counter()
            result = analyze(snapshot)
            rules_s = time.perf_counter() - t
        domains = sum(len(h.domains or []) for h in snapshot.hosts)
        rows.append((n, len(data), domains, parse_s, rules_s, len(result.findings)))
        print(
            f"{n} domains ({len(data) // 1024} KiB): {domains} read, parse {parse_s:.2f} s, "
            f"rules {rules_s:.2f} s, {len(result.findings)} findings",
            flush=True,
        )
    base = rows[0][4] / rows[0][0]
    lines = [
        "## Rules against the number of domains",
        "",
        f"Command: `.venv/bin/python bench/domains.py --domains {' '.join(map(str, args.domains))}` "
        f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {os.getloadavg()[0]:.1f}).",
        "",
        "| domains | upload | parse | rules | rules per domain vs the first row |",
        "|---|---|---|---|---|",
    ]
    for n, size, _read, parse_s, rules_s, _f in rows:
        lines.append(
            f"| {n:,} | {size // 1024} KiB | {parse_s:.2f} s | {rules_s:.2f} s | {rules_s / n / base:.2f}x |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        sys.path.insert(0, str(ROOT / "bench"))
        from search import write_section

        write_section(args.write, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
