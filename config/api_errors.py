"""One error body for the whole API: ``{"error": {"code", "message", "details"}}``.

DRF's own bodies differ per exception (``{"detail": ...}`` for most,
a field -> messages mapping for validation errors). Clients of a ticket
workflow (scripts, ``collect.sh``) should need one shape, so every handled
exception is rewritten here, and the OpenAPI schema documents the same shape
for every operation (:func:`add_error_responses`).
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, JsonResponse
from django.views.defaults import page_not_found
from rest_framework import exceptions, serializers, status
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.response import Response
from rest_framework.views import exception_handler

# Why a status code happened, in words a script author can grep for.
DEFAULT_CODES = {
    400: "invalid",
    401: "not_authenticated",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "too_large",
    415: "unsupported_media_type",
    429: "throttled",
}


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The upload is too large."
    default_code = "too_large"


def _flatten_message(detail) -> str:
    """A one-line message from DRF's detail (string, list or field mapping)."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            text = _flatten_message(value)
            return text if key in ("non_field_errors", "detail") else f"{key}: {text}"
        return "invalid request"
    if isinstance(detail, list):
        return _flatten_message(detail[0]) if detail else "invalid request"
    return str(detail)


def _plain(detail):
    if isinstance(detail, dict):
        return {str(k): _plain(v) for k, v in detail.items()}
    if isinstance(detail, list):
        return [_plain(v) for v in detail]
    return str(detail)


def api_exception_handler(exc, context):
    """DRF's handler (status, headers such as ``WWW-Authenticate`` and
    ``Retry-After``) with the body rewritten to the common shape."""
    if isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or None)
    response = exception_handler(exc, context)
    if response is None:
        return None
    detail = getattr(exc, "detail", response.data)
    code = DEFAULT_CODES.get(response.status_code, "error")
    if isinstance(exc, exceptions.APIException) and not isinstance(exc, exceptions.ValidationError):
        codes = exc.get_codes()
        if isinstance(codes, str):
            code = codes
    details = _plain(detail) if isinstance(detail, (dict, list)) else {}
    if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
        details = {"retry_after_seconds": int(exc.wait)}
    body = {"error": {"code": code, "message": _flatten_message(detail), "details": details}}
    return Response(body, status=response.status_code, headers=dict(response.headers))


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    details = serializers.JSONField(help_text="field -> messages for validation errors, else extra data")


class ErrorSerializer(serializers.Serializer):
    error = ErrorDetailSerializer()


ERROR_SCHEMA = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "details"],
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "details": {},
            },
        }
    },
}
# Statuses any operation may answer besides its documented success.
COMMON_ERRORS = {
    "400": "Invalid request",
    "401": "Missing or wrong credentials",
    "403": "Not allowed",
    "404": "No such object, or not visible to you",
    "405": "Method not allowed",
    "406": "Not acceptable",
    "415": "Unsupported media type",
    "429": "Too many requests",
    "503": "Temporarily unavailable (database or queue unreachable); retry after Retry-After seconds",
}


def add_error_responses(result, generator, request, public):
    """drf-spectacular post-processing hook: declare the common error body on
    every operation, so clients and schema checks know every status they may
    get. Documented responses of a view win over these defaults."""
    components = result.setdefault("components", {}).setdefault("schemas", {})
    components.setdefault("Error", ERROR_SCHEMA)
    ref = {"$ref": "#/components/schemas/Error"}
    for path_item in result.get("paths", {}).values():
        for method, operation in path_item.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            responses = operation.setdefault("responses", {})
            for code, text in COMMON_ERRORS.items():
                responses.setdefault(
                    code, {"content": {"application/json": {"schema": ref}}, "description": text}
                )
    return result


def not_found(request, exception=None):
    """``handler404``: a path under /api/ that matches no route (an id that is
    not a number, a slug with a ``#``) gets the API's error body; every other
    path gets Django's page."""
    if request.path.startswith("/api/"):
        body = {"error": {"code": "not_found", "message": "No such API endpoint or object.", "details": {}}}
        return JsonResponse(body, status=404)

    return page_not_found(request, exception)


class FirstRendererNegotiation(BaseContentNegotiation):
    """Content negotiation for views whose success answer is not JSON (the
    Markdown report, the collector script): they build their own response, so
    DRF only renders errors, always as JSON whatever Accept or ``?format=``
    says (the schema documents errors as application/json)."""

    def select_parser(self, request, parsers):
        return parsers[0] if parsers else None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type
