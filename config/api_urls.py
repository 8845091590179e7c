"""REST API under /api/v1/. Each app contributes its routes in ``api_urls``."""

from django.urls import include, path

urlpatterns = [
    path("", include("triage.api_urls")),
    path("", include("kb.api_urls")),
    path("", include("troubleshoot.api_urls")),
    path("", include("desk.api_urls")),
]
