"""``manage.py adduser USER --team T --role engineer|support|admin``: create
the account when it does not exist (password from ``CASEBOOK_USER_PASSWORD``
or generated and printed once) and give it that role in the team; run again
to add another team or change the role."""

import os

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from accounts.models import Membership
from accounts.services import add_member, ensure_user, find_team


class Command(BaseCommand):
    help = (
        "Create a user (if needed) and add them to a team with a role: engineer (sees their teams), "
        "support or admin (support staff: see every team, review and publish cases)."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--team", required=True, help="team name or slug (create it with addteam)")
        parser.add_argument("--role", default=Membership.Role.ENGINEER, choices=Membership.Role.values)
        parser.add_argument("--email", default="")

    def handle(self, *args, username, team, role, email, **options):
        found = find_team(team)
        if found is None:
            raise CommandError(f"no team '{team}': create it first with  manage.py addteam '{team}'")
        result = ensure_user(
            username=username, email=email, password=os.environ.get("CASEBOOK_USER_PASSWORD", "")
        )
        user = get_user_model().objects.get(username=username)
        add_member(team=found, user=user, role=role)
        if result.password:
            self.stdout.write(
                self.style.SUCCESS(
                    f"Created user '{username}' with password: {result.password}\n"
                    "This password is shown only once. Change it under Profile > Change password."
                )
            )
        elif result.created:
            self.stdout.write(
                self.style.SUCCESS(
                    f"Created user '{username}' with the password from CASEBOOK_USER_PASSWORD."
                )
            )
        else:
            self.stdout.write(f"User '{username}' exists; password unchanged.")
        self.stdout.write(f"'{username}' is {role} in team '{found.name}'.")
