from django.urls import path

from desk import api

urlpatterns = [
    path("hosts/<slug:team>/<path:host>/", api.HostDetailView.as_view(), name="api-host-detail"),
]
