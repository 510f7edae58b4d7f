from django.apps import AppConfig


class OpsConfig(AppConfig):
    """The operator's toolbox: health and readiness, Prometheus metrics, structured logs,
    request ids and the backup check (docs/operations.md). Other apps call into it in one
    line each; it imports none of their models at module level."""

    name = "ops"
    verbose_name = "operations"

    def ready(self) -> None:
        from ops.logs import log_thread_exceptions

        log_thread_exceptions()
