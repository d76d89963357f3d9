from django.apps import AppConfig


class InventoryConfig(AppConfig):
    name = "inventory"

    def ready(self):
        from inventory import signals  # noqa: F401 - importing the module connects its receivers
