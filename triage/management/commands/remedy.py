"""``manage.py remedy PATH [--domain NAME]``: print the pinning patch of each guest.

PATH is a snapshot file (transcript, archive, domain XML) or a directory whose
files are analysed together, as ``manage.py analyze`` does. For every libvirt
domain found (or only ``--domain``, by name or uuid) it prints the unified
diff, the equivalent virsh commands, the rollback and the notes, or the reason
no patch applies. Nothing is stored and no database is needed.
"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from collectors.archive import load_snapshot
from engine.remedies import NoRemedy
from engine.remedies.libvirt import domain_remedy


class Command(BaseCommand):
    help = "Print the generated domain XML patch, virsh commands and rollback for each guest."

    def add_arguments(self, parser):
        parser.add_argument("path", help="snapshot file or directory of one snapshot")
        parser.add_argument("--domain", help="only this domain (name or uuid)")

    def handle(self, *args, path: str, domain: str | None = None, **options):
        target = Path(path)
        if target.is_dir():
            paths = sorted(p for p in target.iterdir() if p.is_file())
        elif target.is_file():
            paths = [target]
        else:
            raise CommandError(f"no such file or directory: {path}")
        if not paths:
            raise CommandError(f"{path} holds no files")
        snapshot = load_snapshot(paths)
        found = 0
        for host in snapshot.hosts:
            for d in host.domains:
                if domain and domain not in (d.name, d.uuid):
                    continue
                found += 1
                result = domain_remedy(domain_xml=d.raw_xml, host=host)
                self.stdout.write(f"# {result.key} (host {host.hostname or host.label})")
                if isinstance(result, NoRemedy):
                    self.stdout.write(f"no patch: {result.reason}\n")
                    continue
                self.stdout.write(result.diff)
                self.stdout.write("# virsh commands")
                self.stdout.write("\n".join(result.commands))
                self.stdout.write("# rollback")
                self.stdout.write(result.rollback)
                for note in result.notes:
                    self.stdout.write(f"# note: {note}")
                self.stdout.write("")
        if not found:
            raise CommandError(f"no libvirt domain{' named ' + domain if domain else ''} in {path}")
