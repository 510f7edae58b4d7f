"""The progress bar the rebuild and repair commands draw on stderr."""


def progress_line(done: int, total: int, note: str = "", width: int = 30) -> tuple[str, str]:
    """``(text, ending)`` for ``OutputWrapper.write``: redrawn in place, a newline at the end."""
    filled = width * done // total if total else width
    bar = "#" * filled + "-" * (width - filled)
    return f"\r[{bar}] {done}/{total}{note}", "" if done < total else "\n"
