"""Memory of thumbnailing large images at once: four uploads of a 116 KB PNG that declares
6320×6320 (within the pixel cap, 160 MB decoded), run on four threads in a fresh process.

Prints the process's RSS before, its peak (VmHWM) and after, for ``ARBE_IMAGE_DECODES``
slots given on the command line (default: 1, then 4 for comparison).

    .venv/bin/python -m bench.thumbs [slots ...]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import zlib

SIDE = 6320
THREADS = 4


def big_png(side: int = SIDE) -> bytes:
    """A solid RGB image, compressed hard (≈130 KB at 6320×6320)."""
    import struct

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    ihdr = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    row = b"\x00" + b"\x28\x5a\xc8" * side
    raw = zlib.compress(row * side, 9)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", raw) + chunk(b"IEND", b"")


def _rss_kb(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def child() -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arbe_site.settings")
    django.setup()
    from attachments import limits, sniff

    data = big_png()
    sniff.inspect(b"warm the imports", max_pixels=1)
    before = _rss_kb("VmRSS")
    # Reset the peak so it measures the decodes only (Linux: write 5 to clear_refs).
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")
    made = []
    threads = [
        threading.Thread(
            target=lambda: made.append(sniff.inspect(data, max_pixels=limits.max_pixels()))
        )
        for _ in range(THREADS)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == THREADS and all(m.thumbnail for m in made)
    print(
        json.dumps(
            {
                "png_bytes": len(data),
                "before_mb": before // 1024,
                "peak_mb": _rss_kb("VmHWM") // 1024,
                "after_mb": _rss_kb("VmRSS") // 1024,
            }
        )
    )


def main(argv: list[str]) -> None:
    for slots in argv or ["1", "4"]:
        env = {**os.environ, "ARBE_IMAGE_DECODES": slots}
        out = subprocess.run(
            [sys.executable, "-m", "bench.thumbs", "--child"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        print(f"slots={slots} threads={THREADS} {out.strip()}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child()
    else:
        main(sys.argv[1:])
