"""503 Service Unavailable when the infrastructure, not the request, is at fault.

A database that restarts or fails over (``OperationalError``, ``InterfaceError``)
or a Redis that cannot be reached is a temporary condition: clients should try
again, not report a bug. Such errors answer 503 with ``Retry-After``
(``CASEBOOK_RETRY_AFTER_SECONDS``): under ``/api/`` with the API's error body
(``{"error": {"code": "unavailable", ...}}``, config/api_errors.py), elsewhere
with a styled page (templates/503.html, English and Chinese) that needs neither
the database nor the session.

:class:`InfrastructureErrorMiddleware` handles the errors raised by views (DRF
re-raises exceptions its handler does not know). Errors raised before a view
runs (the session or the user loaded by a middleware) reach ``handler500``,
:func:`server_error`, which looks at the exception being handled.
"""

from __future__ import annotations

import logging
import sys

from django.conf import settings
from django.db import InterfaceError, OperationalError, connections
from django.http import HttpResponse, JsonResponse
from django.template import loader
from django.utils.translation import gettext as _
from django.views.decorators.csrf import requires_csrf_token
from django.views.defaults import server_error as default_server_error
from kombu.exceptions import OperationalError as BrokerError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

log = logging.getLogger(__name__)


INFRASTRUCTURE_ERRORS: tuple[type[BaseException], ...] = (
    OperationalError,
    InterfaceError,
    RedisConnectionError,
    RedisTimeoutError,
    BrokerError,
)


def is_infrastructure_error(exc: BaseException | None) -> bool:
    return isinstance(exc, INFRASTRUCTURE_ERRORS)


def unavailable_response(request) -> HttpResponse:
    """The 503 answer for ``request``: JSON under /api/, a page elsewhere."""
    retry_after = int(settings.CASEBOOK_RETRY_AFTER_SECONDS)
    if request.path.startswith("/api/"):
        body = {
            "error": {
                "code": "unavailable",
                "message": "The service is temporarily unavailable (database or queue unreachable). "
                "Try again later.",
                "details": {"retry_after_seconds": retry_after},
            }
        }
        response: HttpResponse = JsonResponse(body, status=503)
    else:
        html = loader.render_to_string(
            "503.html",
            {"retry_after": retry_after, "title": _("Casebook is temporarily unavailable")},
        )
        response = HttpResponse(html, status=503)
    response["Retry-After"] = str(retry_after)
    response["Cache-Control"] = "no-store"
    return response


class InfrastructureErrorMiddleware:
    """Turn a database or Redis connection error raised by a view into a 503."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not is_infrastructure_error(exception):
            return None
        log.warning(
            "%s %s: infrastructure unavailable (%s: %s); answering 503",
            request.method,
            request.path,
            type(exception).__name__,
            exception,
        )
        _discard_broken_connections()
        return unavailable_response(request)


def _discard_broken_connections() -> None:
    """Close connections the error left unusable, so the next request of this
    thread opens a fresh one instead of failing again."""
    for conn in connections.all(initialized_only=True):
        try:
            conn.close_if_unusable_or_obsolete()
        except Exception:
            log.debug("closing connection %s failed", conn.alias, exc_info=True)


@requires_csrf_token
def server_error(request, template_name: str = "500.html"):
    """``handler500``: a 503 when the exception being handled is an
    infrastructure error (raised by a middleware before any view ran),
    Django's 500 page otherwise."""
    if is_infrastructure_error(sys.exc_info()[1]):
        _discard_broken_connections()
        return unavailable_response(request)

    return default_server_error(request, template_name)
