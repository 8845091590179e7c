from django.apps import AppConfig

from triage import signals


class TroubleshootConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "troubleshoot"
    verbose_name = "Troubleshooting sessions"

    def ready(self) -> None:
        # Listens to triage, which sits beneath and imports nothing of this app.
        # Imported here, not at the top: they use models, which load after apps.py.
        from troubleshoot import receivers  # noqa: PLC0415

        signals.acknowledgement_changed.connect(
            receivers.acknowledgement_changed, dispatch_uid="troubleshoot.audit_acknowledgement"
        )
