"""The Content-Security-Policy header (settings.CASEBOOK_CSP) and the
Permissions-Policy header (settings.CASEBOOK_PERMISSIONS_POLICY: no camera,
microphone, geolocation, payment ... for any origin) on every response that
has none of its own. Pages carry no inline script or style:
scripts are static files, htmx is told not to inject its indicator styles
(the ``htmx-config`` meta tag in base.html)."""

from __future__ import annotations

from django.conf import settings


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        policy = getattr(settings, "CASEBOOK_CSP", "")
        if policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy
        permissions = getattr(settings, "CASEBOOK_PERMISSIONS_POLICY", "")
        if permissions and "Permissions-Policy" not in response:
            response["Permissions-Policy"] = permissions
        return response
