from django.apps import AppConfig


class DeskConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "desk"
    verbose_name = "Support desk"

    def ready(self) -> None:
        # The inbox hears what the apps beneath announce; they import nothing of desk.
        # Imported here, not at the top: they use models, which load after apps.py.
        from desk import receivers  # noqa: PLC0415
        from kb import signals as kb_signals  # noqa: PLC0415
        from triage import signals as triage_signals  # noqa: PLC0415
        from troubleshoot import signals as session_signals  # noqa: PLC0415

        for signal, receiver in (
            (kb_signals.case_review_requested, receivers.case_review_requested),
            (kb_signals.case_returned, receivers.case_returned),
            (kb_signals.hosts_matched, receivers.hosts_matched),
            (session_signals.session_assigned, receivers.session_assigned),
            (session_signals.comment_added, receivers.comment_added),
            (triage_signals.analysis_finished, receivers.analysis_finished),
        ):
            signal.connect(receiver, dispatch_uid=f"desk.{receiver.__name__}")
