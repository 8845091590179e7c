"""Sign-in lockout (django-axes) for sign-ins made over HTTP.

Failures are counted per (account, address) first: ``CASEBOOK_LOGIN_FAILURE_LIMIT``
(10) wrong passwords for one account from one address lock that pair, so a
stranger guessing at someone's account locks only themselves out. Two
ceilings stand behind it (:func:`failure_limit`): as many failures from one
address across accounts lock that address (password spraying), and
``CASEBOOK_LOGIN_ACCOUNT_LIMIT`` (50) from any number of addresses lock the
account everywhere (a distributed guess)."""

from __future__ import annotations

from axes.backends import AxesStandaloneBackend
from axes.helpers import get_client_username
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum
from django.utils import timezone


class LockoutBackend(AxesStandaloneBackend):
    """django-axes' check, first in AUTHENTICATION_BACKENDS: a locked account
    or address cannot sign in. Axes refuses any ``authenticate()`` call without
    a request; such calls (management commands, the test client's ``login``)
    come from no address and no sign-in form, so they are left to the next
    backend instead."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


def _failures(**where) -> int:
    since = timezone.now() - settings.AXES_COOLOFF_TIME
    rows = AccessAttempt.objects.filter(attempt_time__gte=since, **where)
    return int(rows.aggregate(n=Sum("failures_since_start"))["n"] or 0)


def failure_limit(request, credentials) -> int:
    """``AXES_FAILURE_LIMIT``: axes counts the failures of the (account,
    address) pair and locks it at this limit; 0 (locked whatever the pair's
    count) once the address or the account reached its own ceiling."""
    limit = int(settings.CASEBOOK_LOGIN_FAILURE_LIMIT)
    address = getattr(request, "axes_ip_address", None)
    if address and _failures(ip_address=address) >= limit:
        return 0
    username = get_client_username(request, credentials)
    if username and _failures(username=username) >= int(settings.CASEBOOK_LOGIN_ACCOUNT_LIMIT):
        return 0
    return limit
