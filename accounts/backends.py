"""Sign-in lockout (django-axes) for sign-ins made over HTTP."""

from __future__ import annotations

from axes.backends import AxesStandaloneBackend


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
