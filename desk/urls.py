from django.urls import path

from desk import views

app_name = "desk"
urlpatterns = [
    path("search/", views.search, name="search"),
    path("inbox/", views.inbox_page, name="inbox"),
    path("inbox/<int:pk>/", views.inbox_open, name="inbox_open"),
    path("inbox/read/", views.inbox_read_all, name="inbox_read_all"),
    path("rules/<str:rule_id>/fleet/playbook.yml", views.rule_playbook, name="rule_playbook"),
    path("rules/<str:rule_id>/fleet/inventory.ini", views.rule_inventory, name="rule_inventory"),
    # A host key is free text (a hostname or an upload label): reverse() percent-encodes it.
    path("hosts/<slug:team>/<path:host>/diff/", views.host_diff, name="host_diff"),
    path("hosts/<slug:team>/<path:host>/", views.host_detail, name="host_detail"),
]
