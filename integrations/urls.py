from django.urls import path

from . import views

app_name = "integrations"
urlpatterns = [
    path("", views.index, name="index"),
    path("teams/<slug:team>/webhooks/", views.webhook_list, name="webhook_list"),
    path("teams/<slug:team>/webhooks/<int:webhook>/", views.webhook_detail, name="webhook_detail"),
    path("teams/<slug:team>/webhooks/<int:webhook>/test/", views.webhook_test, name="webhook_test"),
    path("teams/<slug:team>/webhooks/<int:webhook>/delete/", views.webhook_delete, name="webhook_delete"),
]
