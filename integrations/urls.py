from django.urls import path

from . import views

app_name = "integrations"
urlpatterns = [
    path("", views.index, name="index"),
    path("me/webhooks/", views.personal_webhook_add, name="personal_webhook_add"),
    path("me/webhooks/<int:webhook>/", views.personal_webhook_detail, name="personal_webhook_detail"),
    path("me/webhooks/<int:webhook>/test/", views.personal_webhook_test, name="personal_webhook_test"),
    path("me/webhooks/<int:webhook>/delete/", views.personal_webhook_delete, name="personal_webhook_delete"),
    path("teams/<slug:team>/webhooks/", views.webhook_list, name="webhook_list"),
    path("teams/<slug:team>/webhooks/<int:webhook>/", views.webhook_detail, name="webhook_detail"),
    path("teams/<slug:team>/webhooks/<int:webhook>/test/", views.webhook_test, name="webhook_test"),
    path("teams/<slug:team>/webhooks/<int:webhook>/delete/", views.webhook_delete, name="webhook_delete"),
]
