"""Running the app under uvicorn so that it stops promptly.

uvicorn's graceful shutdown waits for every open request to finish, and a
waiting long-poll or SSE stream would only finish at its own timeout. So the
server first ends every wait (long-polls answer 204, SSE streams end), then
lets uvicorn close connections, with a bound on what is left.
"""

import uvicorn

from arbe_lib.runtime import settle_runtime
from streams.server.wake import hub

# Seconds uvicorn waits for requests still in flight once the waits have ended.
GRACEFUL_SECONDS = 5


class StreamsServer(uvicorn.Server):
    async def shutdown(self, sockets=None) -> None:
        hub.shutdown()
        await super().shutdown(sockets)


def serve_uvicorn(app, host: str, port: int) -> None:
    config = uvicorn.Config(
        app, host=host, port=port, lifespan="off", log_level="warning", access_log=False,
        timeout_graceful_shutdown=GRACEFUL_SECONDS,
    )  # fmt: skip
    server = StreamsServer(config)
    settle_runtime()
    server.run()
