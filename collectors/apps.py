from django.apps import AppConfig


class CollectorsConfig(AppConfig):
    name = "collectors"
