from django.urls import path

from troubleshoot import views

app_name = "troubleshoot"
urlpatterns = [
    path("", views.session_list, name="session_list"),
    path("new/", views.session_new, name="session_new"),
    path("effectiveness/", views.effectiveness, name="effectiveness"),
    path("<int:pk>/", views.session_detail, name="session_detail"),
    path("<int:pk>/progress/", views.snapshot_progress, name="progress"),
    path("<int:pk>/step/<str:step>/", views.step, name="step"),
]
