"""``manage.py addteam NAME``: create a team (idempotent). Members are added
with ``manage.py adduser USER --team NAME --role ROLE``."""

from django.core.management.base import BaseCommand, CommandError

from accounts.services import ensure_team


class Command(BaseCommand):
    help = "Create a team. Engineers see the snapshots and sessions of their own teams."

    def add_arguments(self, parser):
        parser.add_argument("name", help="the team's name, e.g. 'Database support'")
        parser.add_argument("--description", default="")

    def handle(self, *args, name, description, **options):
        name = name.strip()
        if not name:
            raise CommandError("a team needs a name")
        try:
            team, created = ensure_team(name=name, description=description)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if created:
            self.stdout.write(self.style.SUCCESS(f"Created team '{team.name}' (slug {team.slug})."))
        else:
            self.stdout.write(f"Team '{team.name}' (slug {team.slug}) exists.")
