from django.apps import AppConfig

from triage import signals


class TroubleshootConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "troubleshoot"
    verbose_name = "Troubleshooting sessions"

    def ready(self) -> None:
        # Plugged into triage, which sits beneath and imports nothing of this app.
        # Imported here, not at the top: they use models, which load after apps.py.
        from triage import api  # noqa: PLC0415
        from troubleshoot import access, receivers, snapshots  # noqa: PLC0415

        signals.acknowledgement_changed.connect(
            receivers.acknowledgement_changed, dispatch_uid="troubleshoot.audit_acknowledgement"
        )
        api.register_session_uploads(
            api.SessionUploads(
                visible_sessions=access.visible_sessions,
                can_edit=access.can_edit,
                cluster_name=snapshots.cluster_name,
                attach_snapshot=snapshots.attach_snapshot,
            )
        )
