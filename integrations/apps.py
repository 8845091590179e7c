from django.apps import AppConfig

from desk import signals as desk
from kb import signals as kb
from triage import signals as triage
from troubleshoot import signals as troubleshoot


class IntegrationsConfig(AppConfig):
    name = "integrations"
    verbose_name = "Integrations"

    def ready(self) -> None:
        # Imported here, not at the top: the receivers use models, which load after apps.py.
        from integrations import receivers  # noqa: PLC0415

        for signal, receiver in (
            (triage.analysis_finished, receivers.analysis_finished),
            (triage.snapshots_requeued, receivers.snapshots_requeued),
            (troubleshoot.session_closed, receivers.session_closed),
            (kb.case_published, receivers.case_published),
            (kb.hosts_matched, receivers.hosts_matched),
            (desk.inbox_item_created, receivers.inbox_item_created),
        ):
            signal.connect(receiver, dispatch_uid=f"integrations.{receiver.__name__}")
