from django.urls import path

from desk import views

app_name = "desk"
urlpatterns = [
    path("search/", views.search, name="search"),
    # A host key is free text (a hostname or an upload label): reverse() percent-encodes it.
    path("hosts/<slug:team>/<path:host>/diff/", views.host_diff, name="host_diff"),
    path("hosts/<slug:team>/<path:host>/", views.host_detail, name="host_detail"),
]
