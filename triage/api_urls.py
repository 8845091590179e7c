from django.urls import path

from triage import api

urlpatterns = [
    path("snapshots/<int:pk>/", api.SnapshotDetailView.as_view(), name="api-snapshot-detail"),
    path(
        "snapshots/<int:pk>/artifacts/",
        api.SnapshotArtifactCreateView.as_view(),
        name="api-snapshot-artifacts",
    ),
    path("snapshots/<int:pk>/reanalyze/", api.SnapshotReanalyzeView.as_view(), name="api-snapshot-reanalyze"),
    path("snapshots/<int:pk>/similar/", api.SnapshotSimilarView.as_view(), name="api-snapshot-similar"),
    path(
        "snapshots/<int:pk>/report.md",
        api.SnapshotReportMarkdownView.as_view(),
        name="api-snapshot-report-md",
    ),
    path(
        "snapshots/<int:pk>/acknowledgements/",
        api.SnapshotAcknowledgeView.as_view(),
        name="api-snapshot-acknowledge",
    ),
    path("snapshots/<int:pk>/tickets/", api.SnapshotTicketView.as_view(), name="api-snapshot-tickets"),
    path(
        "acknowledgements/<int:pk>/revoke/",
        api.AcknowledgementRevokeView.as_view(),
        name="api-acknowledgement-revoke",
    ),
    path(
        "snapshots/<int:pk>/report.jira",
        api.SnapshotReportJiraView.as_view(),
        name="api-snapshot-report-jira",
    ),
    path("snapshots/<int:pk>/playbook.yml", api.SnapshotPlaybookView.as_view(), name="api-snapshot-playbook"),
    path(
        "snapshots/<int:pk>/remedy/<str:domain>/playbook.yml",
        api.SnapshotGuestPlaybookView.as_view(),
        name="api-snapshot-guest-playbook",
    ),
    path("rules/", api.RuleListView.as_view(), name="api-rule-list"),
    path("rules/<str:rule_id>/", api.RuleDetailView.as_view(), name="api-rule-detail"),
]
