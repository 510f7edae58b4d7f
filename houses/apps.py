from django.apps import AppConfig


class HousesConfig(AppConfig):
    name = "houses"

    def ready(self):
        from houses.revocation import connect_signals

        connect_signals()
