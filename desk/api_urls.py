from django.urls import path

from desk import api

urlpatterns = [
    path("search/", api.SearchView.as_view(), name="api-search"),
    path("hosts/<slug:team>/<path:host>/", api.HostDetailView.as_view(), name="api-host-detail"),
]
