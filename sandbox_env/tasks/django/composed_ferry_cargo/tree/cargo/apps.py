from django.apps import AppConfig


class CargoConfig(AppConfig):
    name = "cargo"

    def ready(self):
        from cargo import counters  # noqa: F401 - imported once, when the app is ready
