from django.urls import path

from troubleshoot import api

urlpatterns = [
    # The snapshot list and upload of triage, with the session parts (an upload given a session).
    path("snapshots/", api.SnapshotUploadView.as_view(), name="api-snapshot-list"),
    path("sessions/", api.SessionListCreateView.as_view(), name="api-session-list"),
    path("sessions/<int:pk>/", api.SessionDetailView.as_view(), name="api-session-detail"),
    path("sessions/<int:pk>/snapshots/", api.SessionAttachSnapshotView.as_view(), name="api-session-attach"),
    path("sessions/<int:pk>/measures/", api.SessionRecordMeasureView.as_view(), name="api-session-measure"),
    path("sessions/<int:pk>/close/", api.SessionCloseView.as_view(), name="api-session-close"),
]
