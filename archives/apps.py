from django.apps import AppConfig


class ArchivesConfig(AppConfig):
    name = "archives"
    default_auto_field = "django.db.models.BigAutoField"
