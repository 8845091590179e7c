from django.apps import AppConfig


class TriageConfig(AppConfig):
    name = "triage"

    def ready(self) -> None:
        # The knowledge base, beneath, runs the analyser through these hooks and
        # imports nothing of triage. Imported here, not at the top: they use
        # models, which load after apps.py.
        from kb import authoring, services, similarity  # noqa: PLC0415
        from triage import engine, rules, selectors  # noqa: PLC0415

        services.register_engine(engine.signature_engine)
        similarity.register_rule_catalogue(rules.load_all)
        authoring.register_snapshot_source(
            authoring.SnapshotSource(
                choices=selectors.case_snapshot_choices, analysis=selectors.case_snapshot_analysis
            )
        )
