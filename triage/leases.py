"""Analysis leases: which worker process is analysing a snapshot, and for how
long. :func:`triage.analysis.analyze_snapshot_now` takes the lease when it
claims a snapshot and a :class:`LeaseKeeper` renews it while the analysis runs,
so the sweeper never starts a running analysis a second time; a lease whose
holder died expires (or is seen gone at once on the same machine).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import uuid
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connection, connections
from django.utils import timezone

from triage.models import Snapshot

log = logging.getLogger(__name__)


class AnalysisTimeout(BaseException):
    """The analysis ran past its soft time limit (raised by the Celery task's
    soft-limit signal handler, ``triage.tasks``). A ``BaseException`` so that
    the ``except Exception`` safety nets of the loader and the engine let it
    through to :func:`analyze_snapshot_now`."""


LEASE_EXPIRED = "the worker analysing it stopped (its lease expired)"


# Lease tokens of the analyses running in this process right now.
ACTIVE_LEASES: set[str] = set()


def _pid_namespace() -> str:
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return "-"


def new_lease_owner() -> str:
    """``host:pid-namespace:pid:token``: which process holds a lease."""
    return f"{socket.gethostname()}:{_pid_namespace()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def owner_gone(owner: str) -> bool:
    """True when ``owner`` is a process of this machine (same host name and
    PID namespace) that no longer runs this lease: the process is gone, or it
    is this very process and the analysis that took the lease has ended. A
    pool process killed mid-analysis is so detected when the broker
    redelivers its message, without waiting for the lease to expire."""
    try:
        host, namespace, pid_text, _token = owner.rsplit(":", 3)
        pid = int(pid_text)
    except ValueError:
        return False
    if host != socket.gethostname() or namespace != _pid_namespace():
        return False
    if pid == os.getpid():
        return owner not in ACTIVE_LEASES
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def lease_holds(snapshot: Snapshot, *, now=None) -> bool:
    """An ``analyzing`` snapshot whose lease is unexpired and whose holder is
    not known to be gone."""
    now = now or timezone.now()
    return (
        snapshot.status == Snapshot.Status.ANALYZING
        and snapshot.lease_expires_at is not None
        and snapshot.lease_expires_at > now
        and not owner_gone(snapshot.lease_owner)
    )


def renew_lease(*, snapshot_id: int, owner: str) -> bool:
    """Extend the lease by ``CASEBOOK_LEASE_SECONDS``; False when ``owner``
    no longer holds it (finished, or taken over after it expired)."""
    expires = timezone.now() + timedelta(seconds=settings.CASEBOOK_LEASE_SECONDS)
    return bool(
        Snapshot.objects.filter(pk=snapshot_id, lease_owner=owner, status=Snapshot.Status.ANALYZING).update(
            lease_expires_at=expires
        )
    )


def release_lease(*, snapshot_id: int, owner: str) -> None:
    """Give the lease up (best effort: the database may be the reason we stop)."""
    ACTIVE_LEASES.discard(owner)
    try:
        Snapshot.objects.filter(pk=snapshot_id, lease_owner=owner).update(lease_expires_at=timezone.now())
    except DatabaseError:
        log.warning("could not release the lease of snapshot %s", snapshot_id, exc_info=True)


class LeaseKeeper:
    """Renews a lease from a daemon thread every ``CASEBOOK_LEASE_RENEW_SECONDS``
    while the analysis runs (parsing is pure Python: the thread gets the GIL
    between bytecodes). If the process dies, renewals stop and the lease
    expires ``CASEBOOK_LEASE_SECONDS`` later.

    The thread has its own database connection (connections are per thread),
    named ``casebook-lease-<snapshot id>`` on PostgreSQL (``application_name``).
    A renewal that fails (the server restarted, the backend was terminated)
    closes that connection, so the next renewal opens a new one instead of
    failing on the broken one until the lease expires. When a renewal finds
    the lease held by someone else, :attr:`lost` is set: the analysis stops
    before writing anything (and its write is fenced by the lease anyway:
    ``triage.analysis._store_outcome``)."""

    def __init__(self, snapshot_id: int, owner: str):
        self.snapshot_id = snapshot_id
        self.owner = owner
        self.renewals = 0
        self.failures = 0
        self.reconnects = 0
        self._lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"lease-{snapshot_id}", daemon=True)

    @property
    def lost(self) -> bool:
        """True once a renewal found that this run no longer holds the lease."""
        return self._lost.is_set()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        ACTIVE_LEASES.discard(self.owner)

    def _connect(self) -> None:
        """Open this thread's connection if it has none, and name it."""
        if connection.connection is not None:
            return
        connection.ensure_connection()
        self.reconnects += 1
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT set_config('application_name', %s, false)", [f"casebook-lease-{self.snapshot_id}"]
                )

    def _renew_once(self) -> bool | None:
        """True: renewed; False: the lease is someone else's; None: the
        database could not be reached (the connection is dropped, the next
        attempt reconnects)."""
        try:
            self._connect()
            return renew_lease(snapshot_id=self.snapshot_id, owner=self.owner)
        except DatabaseError:
            self.failures += 1
            log.warning(
                "could not renew the lease of snapshot %s; reconnecting", self.snapshot_id, exc_info=True
            )
            with contextlib.suppress(DatabaseError):
                connection.close()
            return None

    def _run(self) -> None:
        interval = max(0.1, float(settings.CASEBOOK_LEASE_RENEW_SECONDS))
        try:
            while not self._stop.wait(interval):
                held = self._renew_once()
                if held is None:
                    continue
                if not held:
                    if not self._stop.is_set():
                        self._lost.set()
                        log.warning(
                            "snapshot %s: lease %s was taken over; this run stops and writes nothing",
                            self.snapshot_id,
                            self.owner,
                        )
                    return  # finished, or another worker took over an expired lease
                self.renewals += 1
        finally:
            connections.close_all()  # this thread's connections only
