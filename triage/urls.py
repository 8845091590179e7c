from django.urls import path

from triage import views

app_name = "triage"
urlpatterns = [
    path("snapshots/", views.snapshot_list, name="snapshot_list"),
    path("snapshots/new/", views.snapshot_new, name="snapshot_new"),
    path("snapshots/<int:pk>/", views.snapshot_detail, name="snapshot_detail"),
    path("snapshots/<int:pk>/status/", views.snapshot_status, name="snapshot_status"),
    path("snapshots/<int:pk>/artifacts/", views.snapshot_add_artifact, name="snapshot_add_artifact"),
    path("snapshots/<int:pk>/reanalyze/", views.snapshot_reanalyze, name="snapshot_reanalyze"),
    path("snapshots/<int:pk>/remedy/<str:domain>/", views.snapshot_remedy, name="snapshot_remedy"),
    # A cluster name is free text (slashes included): reverse() percent-encodes it.
    path("snapshots/clusters/<path:name>/", views.cluster_detail, name="cluster_detail"),
]
