from django.apps import AppConfig


class KbConfig(AppConfig):
    name = "kb"
