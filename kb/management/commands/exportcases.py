"""Write cases as Markdown files with YAML front matter (the format importcases reads)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from kb import authoring


class Command(BaseCommand):
    help = (
        "Write every case (or those given with --slug) to DIR as <slug>.<language>.md, "
        "the format importcases reads."
    )

    def add_arguments(self, parser):
        parser.add_argument("directory")
        parser.add_argument("--slug", action="append", dest="slugs", help="a case to export (repeatable)")

    def handle(self, *args, directory, slugs=None, **options):
        try:
            written = authoring.do_export_cases(directory=Path(directory), slugs=slugs)
        except authoring.CaseInputError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"wrote {len(written)} files to {directory}")
