"""Writing a benchmark's latest table into its own section of docs/performance.md.

Each benchmark owns the text from its ``<!-- bench:NAME -->`` marker up to the next
marker (or the end); the rest of the page is left as it is.
"""

import re
import time
from pathlib import Path

PAGE = Path(__file__).resolve().parent.parent / "docs" / "performance.md"
MARKER = re.compile(r"^<!-- bench:([a-z_-]+) -->$", re.MULTILINE)


def write_section(name: str, title: str, body: str, page: Path = PAGE) -> None:
    text = page.read_text() if page.exists() else "# Performance\n"
    section = f"<!-- bench:{name} -->\n## {title} ({time.strftime('%Y-%m-%d')})\n\n{body.strip()}\n"
    marks = list(MARKER.finditer(text))
    for i, mark in enumerate(marks):
        if mark.group(1) == name:
            end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
            text = text[: mark.start()] + section + "\n" + text[end:].lstrip("\n")
            break
    else:
        text = text.rstrip("\n") + "\n\n" + section
    page.write_text(text.rstrip("\n") + "\n")
