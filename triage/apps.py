from django.apps import AppConfig


class TriageConfig(AppConfig):
    name = "triage"

    def ready(self) -> None:
        # A published case looks for its hosts. Imported here, not at the top:
        # the receivers use models, which load after apps.py.
        from kb import signals as kb_signals  # noqa: PLC0415
        from triage import receivers  # noqa: PLC0415

        kb_signals.case_published.connect(receivers.case_published, dispatch_uid="triage.case_published")
