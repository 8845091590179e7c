"""Upload requests of the web pages, refused before their body is read.

Django reads a POST body the first time anything touches ``request.POST``,
and ``CsrfViewMiddleware`` does so before the view runs: a 1 GiB upload was
written to ``data/tmp`` in full before the form said it was too large, and a
declared 2 GiB body that never came kept the request waiting. This
middleware sits before the CSRF middleware and, for the views marked with
:func:`upload_view`, answers from the headers alone:

- an anonymous upload: the sign-in redirect (upload views need a user);
- a declared ``Content-Length`` above the upload limit: 413;
- the user over the upload rate (the one counter the API shares,
  :mod:`config.ratelimit`): 429 with ``Retry-After``.

Both are a styled page, or the message fragment for htmx requests.

Every other route gets the same size check before anything reads its body:
a request of any kind (a session-authenticated API upload, whose CSRF check
DRF makes by parsing the body, or any form) declaring more than the upload
limit is answered 413 from the headers alone (JSON under ``/api/``), and a
body without a declared length (``Transfer-Encoding: chunked``) is refused
with 411: Django's WSGI handler would read it as empty, and no route needs
one.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _

from config import ratelimit

# Multipart framing (boundaries, part headers, the small text fields) on top
# of the file itself: a request this much over the limit may still carry a
# file within it; the file's own size is checked once parsed.
MULTIPART_SLACK = 64 << 10


def upload_limit() -> int:
    return int(settings.CASEBOOK_LIMITS["upload_bytes"])


def upload_view(*, multipart_only: bool = False) -> Callable:
    """Mark a view whose POSTs are uploads. ``multipart_only``: only its
    multipart POSTs are (the wizard's step view also takes plain forms)."""

    def mark(view):
        view.casebook_upload = "multipart" if multipart_only else "any"
        return view

    return mark


def refused(request: HttpRequest, *, status: int, title: str, message: str) -> HttpResponse:
    if getattr(request, "htmx", False):
        # The message goes on top of the form's target (base.html lets htmx swap 413 and 429).
        response = render(
            request, "_request_refused.html", {"title": title, "message": message}, status=status
        )
        response["HX-Reswap"] = "afterbegin"
        return response
    return render(request, "request_refused.html", {"title": title, "message": message}, status=status)


def too_large(request: HttpRequest) -> HttpResponse:
    limit_mib = upload_limit() / (1 << 20)
    return refused(
        request,
        status=413,
        title=_("Upload too large"),
        message=_("The upload is larger than the limit of %(limit).0f MiB. Nothing was stored.")
        % {"limit": limit_mib},
    )


def throttled(request: HttpRequest, decision: ratelimit.Decision) -> HttpResponse:
    response = refused(
        request,
        status=429,
        title=_("Too many uploads"),
        message=_(
            "You have reached the upload limit of %(rate)s. Try again in %(seconds)d seconds. "
            "Nothing was stored."
        )
        % {"rate": ratelimit.upload_rate(), "seconds": decision.retry_after},
    )
    response["Retry-After"] = str(decision.retry_after)
    return response


def _declared_length(request: HttpRequest) -> int:
    """The body's declared length; an unreadable one counts as too large."""
    try:
        return max(0, int(request.META.get("CONTENT_LENGTH") or 0))
    except ValueError:
        return upload_limit() + MULTIPART_SLACK + 1  # unreadable: refuse, never guess


def _chunked(request: HttpRequest) -> bool:
    return "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower()


def _api_error(status: int, code: str, message: str) -> JsonResponse:
    return JsonResponse({"error": {"code": code, "message": message, "details": {}}}, status=status)


def refuse_body(request: HttpRequest) -> HttpResponse | None:
    """413 for a declared body above the upload limit, 411 for a body of
    undeclared length; None when the body may be read."""
    api = request.path.startswith("/api/")
    if _declared_length(request) > upload_limit() + MULTIPART_SLACK:
        if api:
            limit_mib = upload_limit() / (1 << 20)
            return _api_error(
                413, "too_large", f"The request body is larger than the limit of {limit_mib:.0f} MiB."
            )
        return too_large(request)
    if _chunked(request) and not request.META.get("CONTENT_LENGTH"):
        message = _("Send the request with a Content-Length header.")
        if api:
            return _api_error(411, "length_required", str(message))
        return refused(request, status=411, title=_("Length required"), message=message)
    return None


def _cross_origin(request: HttpRequest) -> bool:
    origin = request.META.get("HTTP_ORIGIN")
    if not origin:
        return False
    return origin not in (f"{request.scheme}://{request.get_host()}", *settings.CSRF_TRUSTED_ORIGINS)


class UploadGuardMiddleware:
    """The body-size check of every request (:func:`refuse_body`, before any
    view or middleware after it reads the body) and the Content-Length and
    rate checks of upload views; place it before ``CsrfViewMiddleware`` (the
    upload checks need ``request.user``, which ``AuthenticationMiddleware``
    sets lazily before any ``process_view``)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return refuse_body(request) or self.get_response(request)

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs) -> HttpResponse | None:
        kind = getattr(view_func, "casebook_upload", None)
        if request.method != "POST" or kind is None:
            return None
        if kind == "multipart" and not request.META.get("CONTENT_TYPE", "").startswith("multipart/"):
            return None
        if not request.user.is_authenticated:
            # Sign in first: the CSRF check would otherwise read the body of
            # an anonymous upload before LoginRequiredMiddleware refuses it.
            return redirect_to_login(request.get_full_path())
        if _declared_length(request) > upload_limit() + MULTIPART_SLACK:
            return too_large(request)
        if _cross_origin(request):
            return None  # the CSRF check refuses it; another site must not use up the user's uploads
        decision = ratelimit.hit_uploads(
            request.user, request.META.get("REMOTE_ADDR"), size=_declared_length(request)
        )
        if not decision.allowed:
            return throttled(request, decision)
        return None
