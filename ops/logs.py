"""Structured logs: one JSON object per line with ``LOG_FORMAT=json``, plain text otherwise.

Both formats pass every record through ``Redact``, which replaces this install's secret
values (``SECRET_KEY``, the stream server's and the demo model's secrets, ``METRICS_TOKEN``,
mail and S3 passwords, the PostHog key) and anything shaped like a credential (bearer
headers, ``arbe_…`` API tokens, JWTs, ``password=``/``token=`` pairs, URL passwords) with
``[redacted]``. Message text is never logged by arbe's code in the first place; this is
the net under that rule. ``Context`` adds the request id, user, house and thread
(``ops.context``) to each record, which the JSON lines carry and the plain ones don't.
"""

from __future__ import annotations

import json
import logging
import re
import time

from ops import context

REDACTED = "[redacted]"
PATTERNS = [
    re.compile(r"(?i)(bearer\s+)[^\s'\",;]+"),
    re.compile(r"\barbe_[A-Za-z0-9_-]{20,}"),  # API tokens (houses.models.TOKEN_PREFIX)
    re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),  # JWTs
    re.compile(
        r"(?i)\b((?:password|passwd|secret|token|api_key|apikey)[\"']?\s*[=:]\s*[\"']?)[^\s'\",&;]+"
    ),
    re.compile(r"(?i)([a-z][a-z0-9+.-]*://[^:/\s@]*:)[^@\s/]+(?=@)"),  # scheme://user:pass@
]
SECRET_SETTINGS = (
    "SECRET_KEY",
    "DURABLE_STREAMS_SECRET",
    "DEMO_MODEL_SECRET",
    "METRICS_TOKEN",
    "EMAIL_HOST_PASSWORD",
    "POSTHOG_API_KEY",
)


def _secret_values() -> list[str]:
    try:
        from django.conf import settings

        values = [getattr(settings, name, "") for name in SECRET_SETTINGS]
        values.append((getattr(settings, "_S3_OPTIONS", None) or {}).get("secret_key") or "")
    except Exception:  # settings not configured: nothing of ours to hide yet
        return []
    # Short values would redact ordinary words; no real secret is that short.
    return sorted({v for v in values if isinstance(v, str) and len(v) >= 8}, key=len, reverse=True)


def redact(text: str, secrets: list[str] | None = None) -> str:
    for value in _secret_values() if secrets is None else secrets:
        if value in text:
            text = text.replace(value, REDACTED)
    for pattern in PATTERNS:
        text = pattern.sub(lambda m: (m.group(1) if m.groups() else "") + REDACTED, text)
    return text


class Redact(logging.Filter):
    """On the handler: the message (with its arguments) and any traceback, redacted."""

    def __init__(self, name: str = "") -> None:
        super().__init__(name)
        self._secrets: list[str] | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        if self._secrets is None:
            self._secrets = _secret_values()
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: keep what there is
            message = str(record.msg)
        record.msg, record.args = redact(message, self._secrets), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            # Formatters print a cached exc_text rather than formatting exc_info again.
            record.exc_text = redact(record.exc_text, self._secrets)
        return True


class Context(logging.Filter):
    """Adds the current request id, user, house and thread to the record (as ``request_id``,
    ``user_id``, ``house_id``, ``thread_id``: LogRecord's own ``thread`` is the OS thread)."""

    def filter(self, record: logging.LogRecord) -> bool:
        fields = context.current()
        if fields is not None:
            for attribute, value in (
                ("request_id", fields.request_id),
                ("user_id", fields.user_id),
                ("house_id", fields.house),
                ("thread_id", fields.thread),
            ):
                if value and not getattr(record, attribute, None):
                    setattr(record, attribute, value)
        return True


# Fields a record may carry (``extra=``, or Context) that the JSON line passes through.
EXTRA = ("request_id", "user_id", "house_id", "thread_id", "route", "method", "status", "ms")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in EXTRA:
            value = getattr(record, name, None)
            if value not in (None, ""):
                line[name] = value
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exc"] = record.exc_text
        return json.dumps(line, ensure_ascii=False, default=str)


def logging_config(log_format: str, level: str) -> dict:
    """Django's ``LOGGING`` for ``LOG_FORMAT`` and ``LOG_LEVEL`` (settings.py).

    Everything goes to one console handler on the root logger, so each line prints once:
    Django's DEFAULT_LOGGING gives ``django`` a console handler of its own (under DEBUG) that
    would print every django.* record a second time on its way to root. One line per request
    is Daphne's access line; ``arbe_site.logs.ClientErrorFilter`` keeps 4xx out of
    django.request and their tracebacks out of django.security (docs/security.md). Both
    formats redact this install's secrets and anything shaped like a credential; JSON lines
    carry the request id, user, house and thread."""
    formatter = (
        {"()": "ops.logs.JsonFormatter"}
        if log_format == "json"
        else {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}
    )
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"arbe": formatter},
        "filters": {
            "client_errors": {"()": "arbe_site.logs.ClientErrorFilter"},
            "redact": {"()": "ops.logs.Redact"},
            "context": {"()": "ops.logs.Context"},
        },
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "formatter": "arbe",
                "filters": ["client_errors", "context", "redact"],
            }
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            "django": {"handlers": [], "level": "INFO", "propagate": True},
            "django.db.backends": {"level": "INFO"},
            # httpx logs every request at INFO: stream reads and appends are far too frequent.
            "httpx": {"level": "WARNING"},
            # axes logs several INFO lines per sign-in; a failure or a lockout is one WARNING.
            "axes": {"level": "WARNING"},
        },
    }


class JsonAccessLog:
    """Daphne's access log as JSON records (``LOG_FORMAT=json``, arbe_site/web.py).

    Daphne writes its own NCSA lines straight to stdout, which would break a line-by-line
    JSON reader and print invite tokens that sit in paths. HTTP requests get their line
    from ``ops.asgi`` (route name, status, time, ids); this keeps the socket lines, with
    the path reduced to its first segment."""

    logger = logging.getLogger("arbe.access")

    def __init__(self, stream=None) -> None:
        pass

    def __call__(self, protocol, action, details) -> None:
        if protocol != "websocket":
            return
        path = str(details.get("path", ""))
        kind = "/".join(path.split("/")[:3]) + "/…" if path.count("/") > 2 else path
        self.logger.info("websocket %s %s", action, kind)


def log_thread_exceptions() -> None:
    """An exception no code caught in a thread (a timer's, a pool's) goes through logging,
    so it is one JSON line in JSON mode, redacted like every other, not raw text on stderr."""
    import threading

    def hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit:
            return
        name = args.thread.name if args.thread is not None else "?"
        logging.getLogger("threading").error(
            "uncaught exception in thread %s",
            name,
            exc_info=(args.exc_type, args.exc_value, args.exc_traceback),
        )

    threading.excepthook = hook
