"""The attachment limits, from settings (README's configuration table)."""

from django.conf import settings


def max_bytes() -> int:
    return settings.ARBE_ATTACHMENTS_MAX_BYTES


def max_per_message() -> int:
    return settings.ARBE_ATTACHMENTS_MAX_PER_MESSAGE


def max_pixels() -> int:
    return settings.ARBE_ATTACHMENTS_MAX_PIXELS


def allowed_types() -> set[str]:
    return set(settings.ARBE_ATTACHMENTS_TYPES)


def human_size(n: int) -> str:
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}".replace(".0 ", " ")
        n /= 1024
    return f"{n} bytes"
