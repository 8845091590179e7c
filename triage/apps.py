from django.apps import AppConfig


class TriageConfig(AppConfig):
    name = "triage"

    def ready(self) -> None:
        # The knowledge base, beneath, offers existing snapshots on its "New
        # case" page through this hook and imports nothing of triage. Imported
        # here, not at the top: they use models, which load after apps.py.
        from kb import authoring  # noqa: PLC0415
        from triage import selectors  # noqa: PLC0415

        authoring.register_snapshot_source(
            authoring.SnapshotSource(
                choices=selectors.case_snapshot_choices, analysis=selectors.case_snapshot_analysis
            )
        )
