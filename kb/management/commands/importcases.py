"""Import case files (Markdown with front matter, or YAML in the founding format) as drafts."""

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from kb import authoring


class Command(BaseCommand):
    help = (
        "Import Markdown (.md: YAML front matter and Symptom/Environment/Cause/Resolution sections, "
        "one language version per file) or YAML (.yaml: the kb/data/cases format) files as draft cases. "
        "A directory imports its .md and .yaml files. The review workflow publishes them."
    )

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", help="files or directories")
        parser.add_argument("--author", help="username of the drafts' author (default: none)")

    def handle(self, *args, paths, author=None, **options):
        user = None
        if author:
            user = get_user_model().objects.filter(username=author).first()
            if user is None:
                raise CommandError(f"no user {author!r}")
        files: list[Path] = []
        for name in paths:
            path = Path(name)
            if path.is_dir():
                files += sorted(p for p in path.iterdir() if p.suffix.lower() in (".md", ".yaml", ".yml"))
            elif path.is_file():
                files.append(path)
            else:
                raise CommandError(f"{name}: no such file or directory")
        try:
            groups = authoring.do_import_files(user=user, files=[(p.name, p.read_bytes()) for p in files])
        except authoring.CaseInputError as exc:
            raise CommandError(str(exc)) from None
        for group in groups:
            first = next(iter(group.values()))
            self.stdout.write(f"  draft {first.slug}: {', '.join(sorted(group))}")
        self.stdout.write(f"imported {len(groups)} cases from {len(files)} files")
