"""``GET /collect.sh``: the on-host collector, so a host needs only curl.

The script holds no secret, but the app's rule is that everything except
sign-in and /healthz needs authentication, so it is a DRF view: an API token
(``curl -H "Authorization: Token $T" -o collect.sh URL/collect.sh``) or a
browser session both work.
"""

from __future__ import annotations

from pathlib import Path

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.views import APIView

from config.api_errors import FirstRendererNegotiation

SCRIPT = Path(__file__).resolve().parent.parent / "collectors" / "collect.sh"


class CollectScriptView(APIView):
    renderer_classes = [JSONRenderer]
    content_negotiation_class = FirstRendererNegotiation

    @extend_schema(
        summary="Download the on-host collector",
        responses={(200, "text/x-shellscript"): OpenApiTypes.STR},
    )
    def get(self, request: Request) -> HttpResponse:
        response = HttpResponse(SCRIPT.read_bytes(), content_type="text/x-shellscript; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="collect.sh"'
        return response


collect_sh = CollectScriptView.as_view()
