"""Large images are decoded one at a time per process (``ARBE_IMAGE_DECODES``): four
uploads of large PNGs don't hold four full decodes in memory at once. Memory itself, for
the 6320×6320 case, is measured in bench/thumbs.py."""

import threading

from PIL import ImageFile

from attachments import limits, sniff
from bench.thumbs import big_png


def test_four_pngs_at_once_are_decoded_one_at_a_time(monkeypatch, settings):
    settings.ARBE_IMAGE_DECODES = 1
    data = big_png(2000)
    inside = 0
    most = 0
    lock = threading.Lock()
    second = threading.Event()
    real_load = ImageFile.ImageFile.load

    def watched_load(image):  # the real decode, counted
        nonlocal inside, most
        if not image.tile:  # decoded already: nothing to count
            return real_load(image)
        with lock:
            inside += 1
            most = max(most, inside)
            if inside > 1:
                second.set()
        try:
            # Give another thread every chance to start decoding alongside this one.
            second.wait(0.5)
            return real_load(image)
        finally:
            with lock:
                inside -= 1

    monkeypatch.setattr(ImageFile.ImageFile, "load", watched_load)
    made = []
    threads = [
        threading.Thread(
            target=lambda: made.append(sniff.inspect(data, max_pixels=limits.max_pixels()))
        )
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 4 and all(m.thumbnail for m in made)
    assert all((m.width, m.height) == (2000, 2000) for m in made)
    assert most == 1
