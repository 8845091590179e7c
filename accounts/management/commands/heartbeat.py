"""Round-trip a heartbeat through the task queue: proves that the broker
accepts tasks, that a worker runs them and that its writes reach the database."""

import time

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from accounts.models import WorkerHeartbeat
from accounts.services import request_heartbeat


class Command(BaseCommand):
    help = "Queue a heartbeat task and wait for a worker to answer it."

    def add_arguments(self, parser):
        parser.add_argument(
            "--wait", type=float, default=30.0, help="seconds to wait for a worker (0: no wait)"
        )

    def handle(self, *args, wait, **options):
        with transaction.atomic():
            heartbeat = request_heartbeat()
        self.stdout.write(f"heartbeat {heartbeat.pk} queued")
        if wait <= 0:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            heartbeat = WorkerHeartbeat.objects.get(pk=heartbeat.pk)
            if heartbeat.completed_at:
                latency = (heartbeat.completed_at - heartbeat.requested_at).total_seconds()
                self.stdout.write(
                    self.style.SUCCESS(
                        f"heartbeat {heartbeat.pk} answered by {heartbeat.worker} in {latency:.2f} s"
                    )
                )
                return
            time.sleep(0.2)
        raise CommandError(f"no worker answered heartbeat {heartbeat.pk} within {wait:g} s")
