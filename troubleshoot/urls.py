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
    path("<int:pk>/assign/", views.session_assign, name="assign"),
    path("<int:pk>/comments/", views.session_comment, name="comment"),
    path("<int:pk>/tickets/", views.session_add_ticket, name="ticket"),
    path("<int:pk>/summary.md", views.session_summary, {"markup": "markdown"}, name="summary_md"),
    path("<int:pk>/summary.jira", views.session_summary, {"markup": "jira"}, name="summary_jira"),
]
