from django.conf import settings
from django.contrib import admin
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from django.views.i18n import set_language
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from accounts import views as accounts_views
from config.health import healthz
from integrations.metrics import metrics_view
from triage.collector_script import collect_sh

urlpatterns = [
    path("", accounts_views.dashboard, name="dashboard"),
    path("healthz", healthz, name="healthz"),
    # Prometheus: a bearer token or an allowed address, not a sign-in (integrations/metrics.py).
    path("metrics", metrics_view, name="metrics"),
    path("integrations/", include("integrations.urls")),
    path("accounts/", include("accounts.auth_urls")),
    path("", include("accounts.urls")),
    path("", include("triage.urls")),
    path("cases/", include("kb.urls")),
    path("sessions/", include("troubleshoot.urls")),
    path("", include("desk.urls")),
    path("api/v1/", include("config.api_urls")),
    path("collect.sh", collect_sh, name="collect_sh"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="swagger-ui"),
    # Public so the language can be chosen on the sign-in page; it only sets a cookie.
    path("i18n/setlang/", login_not_required(set_language), name="set_language"),
    path("admin/", admin.site.urls),
]

if settings.DEBUG:
    from django.conf.urls.static import static

    urlpatterns += static(settings.MEDIA_URL, document_root=settings.MEDIA_ROOT)

# api: JSON error bodies for unmatched paths under /api/ (config/api_errors.py).
handler404 = "config.api_errors.not_found"
# Infrastructure errors raised before a view runs answer 503 (config/unavailable.py).
handler500 = "config.unavailable.server_error"
