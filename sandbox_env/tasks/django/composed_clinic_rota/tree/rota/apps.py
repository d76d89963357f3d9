from django.apps import AppConfig


class RotaConfig(AppConfig):
    name = "rota"

    def ready(self):
        from rota import hours  # noqa: F401 - imported once, when the app is ready
