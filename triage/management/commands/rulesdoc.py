"""``manage.py rulesdoc [--check]``: regenerate docs/rules.md from the rule registry."""

from django.core.management.base import BaseCommand, CommandError

from engine.rules_doc import RULES_DOC, render_rules_doc, write_rules_doc


class Command(BaseCommand):
    help = "Regenerate docs/rules.md from the registered rules (--check: fail when it is stale)."

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true", help="do not write; exit 1 when stale")

    def handle(self, *args, check=False, **options):
        if check:
            current = RULES_DOC.read_text(encoding="utf-8") if RULES_DOC.exists() else ""
            if current != render_rules_doc():
                raise CommandError(f"{RULES_DOC} is stale: run `python manage.py rulesdoc`")
            self.stdout.write(f"{RULES_DOC} is up to date")
            return
        changed = write_rules_doc()
        self.stdout.write(f"{'wrote' if changed else 'unchanged'} {RULES_DOC}")
