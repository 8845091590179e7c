from django.apps import AppConfig


class TriageConfig(AppConfig):
    name = "triage"

    def ready(self) -> None:
        # The knowledge base, beneath, runs the analyser through these hooks and
        # imports nothing of triage. Imported here, not at the top: they use
        # models, which load after apps.py.
        from kb import services, similarity  # noqa: PLC0415
        from triage import engine, rules  # noqa: PLC0415

        services.register_engine(engine.signature_engine)
        similarity.register_rule_catalogue(rules.load_all)
