"""Create the first administrator once (used by ``make run`` and the container
entrypoint). The generated password is printed only on the run that creates it."""

import os

from django.core.management.base import BaseCommand

from accounts.services import ensure_admin


class Command(BaseCommand):
    help = "Create the 'admin' superuser if it does not exist (password from CASEBOOK_ADMIN_PASSWORD)."

    def add_arguments(self, parser):
        parser.add_argument("--username", default=os.environ.get("CASEBOOK_ADMIN_USER", "admin"))
        parser.add_argument("--email", default=os.environ.get("CASEBOOK_ADMIN_EMAIL", ""))

    def handle(self, *args, username, email, **options):
        result = ensure_admin(
            username=username, email=email, password=os.environ.get("CASEBOOK_ADMIN_PASSWORD", "")
        )
        if not result.created:
            self.stdout.write(f"Admin account '{result.username}' exists; password unchanged.")
        elif result.password:
            self.stdout.write(
                self.style.SUCCESS(
                    f"Created admin account '{result.username}' with password: {result.password}\n"
                    "This password is shown only once. Change it under Profile > Change password."
                )
            )
        else:
            self.stdout.write(
                self.style.SUCCESS(
                    f"Created admin account '{result.username}' "
                    "with the password from CASEBOOK_ADMIN_PASSWORD."
                )
            )
