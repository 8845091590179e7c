from django.urls import path

from . import views

app_name = "accounts"
urlpatterns = [
    path("profile/", views.profile, name="profile"),
    path("profile/token/", views.token_create, name="token_create"),
    path("profile/token/revoke/", views.token_revoke, name="token_revoke"),
    path("help/teams/", views.teams_help, name="teams_help"),
]
