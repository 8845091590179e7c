from django.apps import AppConfig


class TroubleshootConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "troubleshoot"
    verbose_name = "Troubleshooting sessions"
