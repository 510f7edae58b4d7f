"""Writing a benchmark's latest table into its own section of docs/performance.md.

Each benchmark owns the text from its ``<!-- bench:NAME -->`` marker up to the next
marker (or the end); the rest of the page is left as it is. Its title carries the date and
the line under it the machine: figures from different days or machines don't compare.
"""

import os
import platform
import re
import time
from pathlib import Path

PAGE = Path(__file__).resolve().parent.parent / "docs" / "performance.md"
MARKER = re.compile(r"^<!-- bench:([a-z_-]+) -->$", re.MULTILINE)


def machine() -> str:
    """The machine, and how busy it was as the table was written (a shared machine's load
    moves the figures)."""
    meminfo = Path("/proc/meminfo")
    lines = meminfo.read_text().splitlines() if meminfo.exists() else []
    kib = next((int(line.split()[1]) for line in lines if line.startswith("MemTotal:")), 0)
    load = ", ".join(f"{n:.1f}" for n in os.getloadavg())
    return (
        f"Machine: {os.cpu_count()} CPUs, {kib / 2**20:.0f} GB RAM, {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}; load average {load} "
        "when the table was written."
    )


def write_section(name: str, title: str, body: str, page: Path = PAGE) -> None:
    text = page.read_text() if page.exists() else "# Performance\n"
    dated = f"## {title} ({time.strftime('%Y-%m-%d')})"
    section = f"<!-- bench:{name} -->\n{dated}\n\n{machine()}\n\n{body.strip()}\n"
    marks = list(MARKER.finditer(text))
    for i, mark in enumerate(marks):
        if mark.group(1) == name:
            end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
            text = text[: mark.start()] + section + "\n" + text[end:].lstrip("\n")
            break
    else:
        text = text.rstrip("\n") + "\n\n" + section
    page.write_text(text.rstrip("\n") + "\n")
