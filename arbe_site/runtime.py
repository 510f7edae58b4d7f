"""Process-wide runtime settings for the long-running servers (Daphne, ``serve_streams``)."""

import gc

# Young collections every 7,000 allocations rather than 700, and the full one ten
# times rarer: with a thousand open sockets a full collection walks ~1M objects
# (50–100 ms with everything stopped), which showed as the fan-out's p99.
GC_THRESHOLDS = (7000, 20, 10)


def settle_runtime() -> None:
    """Keep collector pauses off the request path.

    Everything imported at startup (Django, the app, the server) is moved out of
    the collector's generations, so a collection only walks what requests allocate.
    """
    gc.set_threshold(*GC_THRESHOLDS)
    gc.collect()
    gc.freeze()
