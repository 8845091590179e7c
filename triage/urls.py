from django.urls import path

from triage import views

app_name = "triage"
urlpatterns = [
    # The knowledge base's New case page, with the snapshots of this app to base a case on.
    path("cases/new/", views.CaseNewView.as_view(), name="case_new"),
    path("snapshots/", views.snapshot_list, name="snapshot_list"),
    path("snapshots/new/", views.snapshot_new, name="snapshot_new"),
    path("snapshots/<int:pk>/", views.snapshot_detail, name="snapshot_detail"),
    path("snapshots/<int:pk>/status/", views.snapshot_status, name="snapshot_status"),
    path("snapshots/<int:pk>/artifacts/", views.snapshot_add_artifact, name="snapshot_add_artifact"),
    path("snapshots/<int:pk>/reanalyze/", views.snapshot_reanalyze, name="snapshot_reanalyze"),
    path("snapshots/<int:pk>/remedy/<str:domain>/", views.snapshot_remedy, name="snapshot_remedy"),
    path("snapshots/<int:pk>/acknowledge/", views.snapshot_acknowledge, name="snapshot_acknowledge"),
    path("snapshots/<int:pk>/tickets/", views.snapshot_add_ticket, name="snapshot_add_ticket"),
    path("acknowledgements/<int:pk>/revoke/", views.acknowledgement_revoke, name="acknowledgement_revoke"),
    path("rules/", views.rule_list, name="rule_list"),
    path("rules/<str:rule_id>/", views.rule_detail, name="rule_detail"),
    path("snapshots/<int:pk>/playbook.yml", views.snapshot_playbook, name="snapshot_playbook"),
    path(
        "snapshots/<int:pk>/remedy/<str:domain>/playbook.yml",
        views.snapshot_remedy_playbook,
        name="snapshot_remedy_playbook",
    ),
    # A cluster name is free text (slashes included): reverse() percent-encodes it.
    path("snapshots/clusters/<path:name>/", views.cluster_detail, name="cluster_detail"),
]
