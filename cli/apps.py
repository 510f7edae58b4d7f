from django.apps import AppConfig


class CliConfig(AppConfig):
    name = "cli"
    verbose_name = "arbe command line"
