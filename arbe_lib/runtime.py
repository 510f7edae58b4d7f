"""Process-wide runtime settings for the long-running servers (Daphne, ``serve_streams``)."""

import asyncio
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
    skip_websocket_debug_arguments()
    gc.collect()
    gc.freeze()


def use_uvloop() -> None:
    """Event loops made from now on are uvloop's (libuv), where it is installed (not on
    Windows: pyproject leaves it out). Called before a loop is made: Daphne's, in
    ``arbe_site.web``, before ``daphne.server`` is imported; the backstage worker's."""
    try:
        import uvloop
    except ImportError:
        return
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())


def _unformatted(*args, **kwargs) -> str:
    return ""


def skip_websocket_debug_arguments() -> None:
    """Don't colour debug-log arguments nobody will read, once per frame per socket.

    autobahn's ``sendData`` and ``dataReceived`` call
    ``log.debug(..., func=hltype(...), peer=hlval(...))`` for every frame; the arguments
    (qualified names, ANSI colours through click) are built before the logger drops the
    call. With debug logging off that is a sizeable part of each socket's send in the
    fan-out profile (docs/performance.md). With it on (txaio's level ``debug`` or
    ``trace``) nothing changes.
    """
    try:
        import txaio
        from autobahn.twisted import websocket
        from autobahn.websocket import protocol

        if txaio.get_global_log_level() in ("debug", "trace"):
            return
    except Exception:  # noqa: BLE001 - no Twisted framework chosen: not a Daphne process
        return
    for module in (protocol, websocket):
        module.hltype = module.hlval = _unformatted
